"""No HTML from input, without a browser: what the pop-ups and the notice
boxes receive holds a link's value as characters, never as markup or a link."""

from __future__ import annotations

from explorer.ui import common

PIXEL = "<img src=https://evil.example/pixel.png>"
LOGIN = "<a href=https://evil.example/login>Session expired: sign in</a>"


def test_a_pop_up_message_holds_no_tag():
    for value in (PIXEL, LOGIN, "<form action=//evil.example><input type=password>"):
        text = common.as_text(f"model: {value} is not a local folder")
        assert "<" not in text and ">" not in text
        assert "&lt;" in text


def test_a_notice_box_holds_no_tag_and_no_link():
    shown = common.notices_markdown([f"Link parameter model={LOGIN!r} is not one of the models",
                                     "see [here](https://evil.example) or www.evil.example or me@evil.example"],
                                    toast=False)
    assert "<" not in shown and "[" not in shown and "](" not in shown
    assert "https://" not in shown and "www." not in shown and "@" not in shown
    assert "evil" in shown                                    # said, as text
