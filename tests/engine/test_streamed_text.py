"""A generation streamed token by token shows whole characters only: a Chinese character split
over byte-level tokens appears once its last byte has come, never as U+FFFD."""

from __future__ import annotations

from explorer.views.linearize import decoded_so_far


class Bytes:
    """A byte-level vocabulary: token i is byte i."""

    @staticmethod
    def decode(tokens):
        return bytes(tokens).decode("utf-8", errors="replace")


def test_a_character_split_over_tokens_appears_whole():
    tokens = list("猫坐在垫子上。".encode("utf-8"))
    shown = [decoded_so_far(Bytes, tokens[:i]) for i in range(1, len(tokens) + 1)]
    assert all("\ufffd" not in text for text in shown)
    assert shown[0] == shown[1] == "" and shown[2] == "猫" and shown[-1] == "猫坐在垫子上。"
    # Every step shows a prefix of the next: the text never jumps back.
    assert all(b.startswith(a) for a, b in zip(shown, shown[1:]))
    # Without holding the tail back, the split bytes show as U+FFFD.
    assert "\ufffd" in Bytes.decode(tokens[:1])


def test_english_streams_as_before():
    tokens = list(b"the cat sat")
    assert [decoded_so_far(Bytes, tokens[:i]) for i in (3, 11)] == ["the", "the cat sat"]
