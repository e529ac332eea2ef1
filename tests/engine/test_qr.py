"""The title slide's QR code (explorer/core/qr.py) against the standard: reference vectors
worked by hand from ISO/IEC 18004 (a Reed-Solomon block and a format word), the function
patterns a reader looks for, and a round trip through the module's own decoder."""

from __future__ import annotations

import random
import re

import pytest

from explorer.core import qr

ADDRESSES = ["a", "http://127.0.0.1:7860/?tab=lecture", "http://192.168.1.20:7860/?tab=lecture&lang=zh&present=1",
             "https://example.org/" + "x" * 60, "讲座 · lecture"]


def test_reed_solomon_matches_the_standards_worked_example():
    # "HELLO WORLD" at 1-M: its 16 data codewords and the 10 error-correction codewords
    # the standard's division by the degree-10 generator gives.
    data = [32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17]
    assert qr.ec_codewords(data, 10) == [196, 35, 39, 119, 235, 215, 231, 226, 93, 23]


def test_codewords_are_multiples_of_the_generator():
    # Every αⁱ (i < n) is a root of data · xⁿ + remainder: the syndromes vanish.
    rng = random.Random(3)
    for n in (7, 10, 16, 18, 24, 26):
        data = [rng.randrange(256) for _ in range(rng.randrange(5, 60))]
        word = data + qr.ec_codewords(data, n)
        for i in range(n):
            s = 0
            for c in word:
                s = qr.gf_mul(s, qr.EXP[i]) ^ c
            assert s == 0, (n, i)


def test_format_words_are_the_standards():
    assert qr.format_bits("L", 4) == 0b110011000101111          # the standard's own example
    assert qr.format_bits("M", 0) == 0b101010000010010           # level bits 00, mask 0: the mask itself
    words = [qr.format_bits(level, mask) for level in "LM" for mask in range(8)]
    assert min(bin(a ^ b).count("1") for i, a in enumerate(words) for b in words[i + 1:]) >= 7


def _finder_at(modules, top, left) -> bool:
    for dr in range(7):
        for dc in range(7):
            ring = max(abs(dr - 3), abs(dc - 3))
            if modules[top + dr][left + dc] != (ring != 2):
                return False
    return True


@pytest.mark.parametrize("text", ADDRESSES)
@pytest.mark.parametrize("level", ["L", "M"])
def test_structure_and_round_trip(text, level):
    code = qr.encode(text, level)
    m, n = code.modules, code.size
    assert n == 17 + 4 * code.version and all(len(row) == n for row in m)
    for top, left in ((0, 0), (0, n - 7), (n - 7, 0)):
        assert _finder_at(m, top, left), (top, left)
    assert not any(m[7][c] for c in range(8)) and not any(m[r][7] for r in range(8))   # a separator
    assert [m[6][c] for c in range(8, n - 8)] == [c % 2 == 0 for c in range(8, n - 8)]   # timing
    assert [m[r][6] for r in range(8, n - 8)] == [r % 2 == 0 for r in range(8, n - 8)]
    assert m[n - 8][8]                                                                 # the dark module
    if code.version >= 2:
        c = 4 * code.version + 10
        assert m[c][c] and not m[c][c + 1] and m[c + 2][c + 2]
    assert qr.read_format(m) == (level, code.mask)
    # Both copies of the format word agree.
    pos = qr._format_positions(n)
    assert all(m[a[0]][a[1]] == m[b[0]][b[1]] for a, b in pos.values())
    assert qr.decode(m) == text


def test_an_80_character_address_fits_and_the_smallest_version_is_taken():
    assert qr.encode("x" * 80, "M").version == 5
    assert qr.encode("x" * 14, "M").version == 1 and qr.encode("x" * 15, "M").version == 2
    with pytest.raises(ValueError, match="at most"):
        qr.encode("x" * 107, "M")
    with pytest.raises(ValueError):
        qr.encode("x", "Q")


def test_a_flipped_module_is_caught_by_the_decoder():
    code = qr.encode("http://127.0.0.1:7860/?tab=lecture")
    rows = [list(r) for r in code.modules]
    rows[-1][-1] = not rows[-1][-1]                  # the first data module
    with pytest.raises(ValueError):
        qr.decode(rows)


def test_svg_draws_every_dark_module_and_escapes_its_label():
    text = "http://h/?a=1&b=<2>"
    code = qr.encode(text)
    out = qr.svg(text, label='<"x">')
    assert out.startswith("<svg") and "<script" not in out and '<"x">' not in out
    assert len(re.findall(r"M\d+,\d+h1v1h-1z", out)) == sum(map(sum, code.modules))
