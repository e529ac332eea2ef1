"""The deck's own HTML around the slides: the speaker's notes with the clock and the next
build, the overview of every build, the talk's length, and the title build's QR code of the
page's address. Built once with the page (every chapter, both languages; the deck's script,
assets/deck.js, shows what the page's language and place call for), except the QR code,
which is drawn on load from the request's host.
"""

from __future__ import annotations

import re
from html import escape

from . import i18n


def _plan():
    from ..lecture import chapters
    return chapters


def _text(key: str, lang: str) -> str:
    from ..lecture.text import t
    return t(key, lang)


def _notes_lines(ch: int, lang: str) -> list[str]:
    """The chapter's talking points in ``lang`` (none until the lecture text has them)."""
    from ..lecture.text import TEXT
    entry = TEXT.get(f"notes.ch{ch}") or {}
    points = entry.get(lang) or entry.get("en") or []
    if isinstance(points, str):
        points = [line.strip(" -•\t") for line in points.splitlines()]
    return [str(p) for p in points if str(p).strip()]


def _say_html(key: str, css_class: str = "", **values) -> str:
    """A UI string in both languages, one span each; the deck's script shows the page's."""
    return "".join(f'<span class="deck-say {css_class}" data-lang="{lang}" hidden>'
                   f'{escape(i18n.text(key, lang).format(**values))}</span>' for lang in i18n.LANGS)


def notes_html(chapters) -> str:
    """The speaker's notes of every chapter in both languages, built once with the page, under
    the clock (time, elapsed, left of the talk's length) and the place; in the speaker window
    the build after this one is drawn below them. The deck's script shows those of the build
    on screen (over the slide with N, or the speaker window)."""
    clock = "".join(f'<span class="deck-clock-part">{_say_html(f"lecture_clock_{part}")} '
                    f'<b class="deck-clock-{part}">00:00</b></span>' for part in ("now", "elapsed", "left"))
    restart = escape(i18n.text("lecture_clock_restart", i18n.DEFAULT_LANG), quote=True)
    parts = [f'<div class="deck-notes-head"><span class="deck-clock" title="{restart}">{clock}</span>']
    for lang in i18n.LANGS:
        parts.append(f'<span class="deck-where-box" data-lang="{lang}" hidden>'
                     f'{escape(i18n.text("lecture_notes", lang))} · <span class="deck-where"></span></span>')
    parts.append("</div>")
    parts.append(f'<div class="deck-blank-flag">{_say_html("lecture_blanked")}</div>')
    for ch in chapters:
        for lang in i18n.LANGS:
            items = "".join(f"<li>{escape(p)}</li>" for p in _notes_lines(ch, lang))
            parts.append(f'<div class="deck-notes-chapter" data-ch="{int(ch)}" data-lang="{lang}" hidden>'
                         f'<ul>{items}</ul></div>')
    # The build after this one, under the audience's (smaller) slide: its address, its claim
    # and its figure, drawn by the deck's script.
    parts.append('<div class="deck-next">')
    for lang in i18n.LANGS:
        parts.append(f'<div class="deck-next-label" data-lang="{lang}" hidden>'
                     f'{escape(i18n.text("lecture_next_build", lang))} <span class="deck-next-where"></span></div>')
        parts.append(f'<div class="deck-end-label" data-lang="{lang}" hidden>'
                     f'{escape(i18n.text("lecture_end", lang))}</div>')
    parts.append('<div class="deck-next-row"><div class="deck-next-plot" hidden></div>'
                 '<div class="deck-next-claim"></div></div></div>')
    return "".join(parts)


def overview_html(chapters) -> str:
    """Every chapter's title and its builds as tiles (O): a click jumps there. The build
    counts are the records' (plain data: the page is built before the engine loads)."""
    plan = _plan()
    rows = [f'<div class="deck-ov-head">{_say_html("lecture_overview")}</div>']
    for ch in chapters:
        titles = "".join(f'<span class="deck-ov-title" data-lang="{lang}" hidden>'
                         f'{escape(_text(f"ch{ch}.title", lang))}</span>' for lang in i18n.LANGS)
        tiles = "".join(f'<button type="button" class="deck-ov-build" data-ch="{int(ch)}" data-step="{b}">'
                        f'{int(ch)}.{b}</button>' for b in range(len(plan.chapter(ch).builds)))
        rows.append(f'<div class="deck-ov-ch" data-ch="{int(ch)}">{titles}<span class="deck-ov-tiles">'
                    f'{tiles}</span></div>')
    return "".join(rows)


def talk_length_html() -> str:
    """The talk's length in minutes (the speaker window counts down to it; kept by the browser)."""
    return (f'<label class="deck-talk-label">{_say_html("lecture_talk_minutes")} '
            f'<input id="deck-talk-minutes" type="number" min="1" max="600" step="1" value="45"></label>')


# The audience's address: the host the page was reached on (a name, IPv4 or [IPv6], a port).
_HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,62})|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$")


def audience_link(headers) -> str | None:
    """The address the audience opens (the lecture on this server), from the request's Host
    header; None when the header is missing or not a plain host (it is never trusted further)."""
    host = (headers.get("x-forwarded-host") or headers.get("host") or "").split(",")[0].strip()
    scheme = (headers.get("x-forwarded-proto") or "http").split(",")[0].strip().lower()
    if not _HOST.match(host) or scheme not in ("http", "https"):
        return None
    return f"{scheme}://{host}/?tab=lecture"


def audience_html(headers) -> str:
    """The title build's QR code of ``audience_link`` and the address written out (engine:
    explorer.core.qr); empty when there is no address to show."""
    from ..core import qr
    link = audience_link(headers)
    if link is None:
        return ""
    code = qr.svg(link, "M", module_px=4, label=i18n.text("lecture_qr_label", i18n.DEFAULT_LANG).format(link=link))
    return (f'<div class="deck-qr-box">{code}<div class="deck-qr-text">{_say_html("lecture_audience_link")}'
            f'<code>{escape(link)}</code></div></div>')
