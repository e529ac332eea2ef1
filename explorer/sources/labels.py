"""Token labels a reader can read: the text each token covers, never the tokenizer's bytes.

Byte-level BPE (GPT-2, Llama 3, SmolLM2, Qwen2) spells tokens in a byte alphabet: " cat" is
"Ġcat" and 猫 may be three tokens "ç", "Į", "«", each one byte of its UTF-8 encoding, which
decoded alone is mojibake or U+FFFD. So a token is labelled by the characters of the text
its bytes cover; a character split over several tokens shows as the character with its
piece number: 猫(1/3), 猫(2/3), 猫(3/3).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache


@lru_cache(maxsize=1)
def _byte_of_char() -> dict[str, int]:
    """GPT-2's byte alphabet, inverted: each of the 256 printable stand-ins -> its byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    stand_in = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in stand_in:
            stand_in[b] = chr(256 + extra)
            extra += 1
    return {c: b for b, c in stand_in.items()}


def token_bytes(token: str) -> bytes | None:
    """The bytes a byte-level token stands for, or None if it is not spelled in that alphabet."""
    table = _byte_of_char()
    try:
        return bytes(table[c] for c in token)
    except KeyError:
        return None


def surface_pieces(text: str, tokens: list[str]) -> list[str] | None:
    """The text each byte-level token covers, split characters marked "猫(2/3)".

    ``tokens`` are consecutive content tokens from the start of ``text`` (a truncated
    encoding is fine). None when their bytes do not spell the text's UTF-8 (a tokenizer
    that normalises the text first): the caller then falls back to character offsets.
    """
    raw = text.encode("utf-8")
    char_at = []                          # byte index -> index of the character it belongs to
    for i, ch in enumerate(text):
        char_at += [i] * len(ch.encode("utf-8"))
    spans, cursor = [], 0
    for token in tokens:
        b = token_bytes(token)
        if b is None or raw[cursor:cursor + len(b)] != b:
            return None
        spans.append((cursor, cursor + len(b)))
        cursor += len(b)

    # For every character: the tokens that hold a part of it (more than one: it is split).
    holders: dict[int, list[int]] = {}
    for t, (start, end) in enumerate(spans):
        for c in sorted({char_at[b] for b in range(start, end)}):
            holders.setdefault(c, []).append(t)
    pieces = []
    for t, (start, end) in enumerate(spans):
        parts = []
        for c in sorted({char_at[b] for b in range(start, end)}):
            owners = holders[c]
            parts.append(text[c] if len(owners) == 1 else f"{text[c]}({owners.index(t) + 1}/{len(owners)})")
        piece = "".join(parts)
        pieces.append(piece.strip() or piece)   # " cat" reads as "cat", a lone space stays a space
    return pieces


def visible(piece: str) -> str:
    """Make invisible characters visible so that a label never renders as blank or reorders."""
    named = {" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "␍"}
    out = []
    for ch in piece:
        if ch in named:
            out.append(named[ch])
        elif unicodedata.category(ch)[0] in "CZ":  # controls, bidi marks, odd spaces, surrogates
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out) or "∅"


def display_labels(pieces: list[str]) -> list[str]:
    """Unique, readable labels: the piece with its position, e.g. "the·3", "##ing·4".

    The position suffix keeps two "the" as two heatmap rows (plotly merges equal labels).
    """
    return [f"{visible(piece)}·{i}" for i, piece in enumerate(pieces)]


def label_parts(label: str) -> tuple[str, str | None, int | None]:
    """A display label read back: (the text it covers, its piece mark, its position), e.g.
    "它(2/2)·26" -> ("它", "(2/2)", 26), "it·8" -> ("it", None, 8); a label not made by
    ``display_labels`` is its own text, with neither."""
    head, dot, tail = str(label).rpartition("·")
    if not dot or not tail.isdigit():
        head, tail = str(label), None
    piece = re.search(r"\(\d+/\d+\)$", head)
    word = head[:piece.start()] if piece and piece.start() > 0 else head
    return word, (piece.group(0) if piece and piece.start() > 0 else None), (None if tail is None else int(tail))
