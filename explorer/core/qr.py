"""A QR code for a short address, drawn as SVG: what the title slide shows the audience.

    encode(text, level="M") -> QR              the modules (True = dark), version, level, mask
    svg(text, level="M", module_px=6) -> str   the code as an <svg> element (4-module quiet zone)
    decode(modules) -> str                     reads a code back (tests hold encode to it)

Byte mode (UTF-8), error correction level L or M, versions 1 to 6: up to 106 bytes at M,
134 at L, which covers any address a slide should show (versions from 7 on carry version
bits this module does not write). Written from ISO/IEC 18004: Reed-Solomon over GF(256)
with the polynomial x⁸ + x⁴ + x³ + x² + 1, the eight masks and the four penalty rules.
Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

# Per version and level: (error-correction codewords per block, [data codewords of each block]).
BLOCKS = {
    "L": {1: (7, [19]), 2: (10, [34]), 3: (15, [55]), 4: (20, [80]), 5: (26, [108]), 6: (18, [68, 68])},
    "M": {1: (10, [16]), 2: (16, [28]), 3: (26, [44]), 4: (18, [32, 32]), 5: (24, [43, 43]),
          6: (16, [27, 27, 27, 27])},
}
LEVEL_BITS = {"L": 0b01, "M": 0b00}       # the format's two level bits
MAX_VERSION = 6
FORMAT_MASK = 0b101010000010010
FORMAT_GENERATOR = 0b10100110111          # BCH(15, 5)

MASKS = [
    lambda r, c: (r + c) % 2 == 0,
    lambda r, c: r % 2 == 0,
    lambda r, c: c % 3 == 0,
    lambda r, c: (r + c) % 3 == 0,
    lambda r, c: (r // 2 + c // 3) % 2 == 0,
    lambda r, c: (r * c) % 2 + (r * c) % 3 == 0,
    lambda r, c: ((r * c) % 2 + (r * c) % 3) % 2 == 0,
    lambda r, c: ((r + c) % 2 + (r * c) % 3) % 2 == 0,
]


@dataclass(frozen=True)
class QR:
    modules: tuple            # rows of bools, True = dark
    version: int
    level: str
    mask: int

    @property
    def size(self) -> int:
        return len(self.modules)


# ---------------------------------------------------------------------------------------
# Reed-Solomon over GF(256)
# ---------------------------------------------------------------------------------------

def _tables():
    exp, log = [0] * 512, [0] * 256
    x = 1
    for i in range(255):
        exp[i], log[x] = x, i
        x <<= 1
        if x & 0x100:
            x ^= 0x11D
    for i in range(255, 512):
        exp[i] = exp[i - 255]
    return exp, log


EXP, LOG = _tables()


def gf_mul(a: int, b: int) -> int:
    return 0 if a == 0 or b == 0 else EXP[LOG[a] + LOG[b]]


def generator(n: int) -> list[int]:
    """∏ (x − αⁱ), i < n, highest power first (its leading 1 included)."""
    poly = [1]
    for i in range(n):
        poly = [a ^ gf_mul(b, EXP[i]) for a, b in zip(poly + [0], [0] + poly)]
    return poly


def ec_codewords(data: list[int], n: int) -> list[int]:
    """The remainder of data · xⁿ divided by the generator of degree n."""
    gen = generator(n)
    rem = list(data) + [0] * n
    for i in range(len(data)):
        factor = rem[i]
        if factor:
            for j in range(1, n + 1):
                rem[i + j] ^= gf_mul(gen[j], factor)
    return rem[len(data):]


# ---------------------------------------------------------------------------------------
# Layout: the function patterns and the order data modules are filled in
# ---------------------------------------------------------------------------------------

def size_of(version: int) -> int:
    return 17 + 4 * version


def _function_patterns(version: int):
    """(modules, reserved): the finder, separator, timing, alignment and dark modules drawn,
    and every module that is not data (format areas included)."""
    n = size_of(version)
    grid = [[False] * n for _ in range(n)]
    reserved = [[False] * n for _ in range(n)]

    def put(r, c, dark):
        grid[r][c], reserved[r][c] = dark, True

    for top, left in ((0, 0), (0, n - 7), (n - 7, 0)):
        for dr in range(-1, 8):
            for dc in range(-1, 8):
                r, c = top + dr, left + dc
                if 0 <= r < n and 0 <= c < n:
                    ring = max(abs(dr - 3), abs(dc - 3))
                    put(r, c, ring != 2 and ring != 4)      # 7×7 ring, 3×3 core, white separator
    for i in range(8, n - 8):
        put(6, i, i % 2 == 0)
        put(i, 6, i % 2 == 0)
    if version >= 2:
        centre = 4 * version + 10
        for dr in range(-2, 3):
            for dc in range(-2, 3):
                put(centre + dr, centre + dc, max(abs(dr), abs(dc)) != 1)
    for i in range(9):                                      # format areas, drawn later
        for r, c in ((8, i), (i, 8)):
            if not reserved[r][c]:
                reserved[r][c] = True
    for i in range(8):
        reserved[8][n - 1 - i] = True
        reserved[n - 1 - i][8] = True
    put(n - 8, 8, True)                                     # the dark module
    return grid, reserved


def _data_positions(reserved) -> list[tuple[int, int]]:
    """Data modules in filling order: two-column strips from the right, up then down,
    stepping over the vertical timing column."""
    n = len(reserved)
    order = []
    right, upward = n - 1, True
    while right > 0:
        if right == 6:
            right = 5
        rows = range(n - 1, -1, -1) if upward else range(n)
        for r in rows:
            for c in (right, right - 1):
                if not reserved[r][c]:
                    order.append((r, c))
        upward = not upward
        right -= 2
    return order


def format_bits(level: str, mask: int) -> int:
    """The 15 format bits: level and mask, their BCH remainder, XOR the fixed pattern."""
    data = (LEVEL_BITS[level] << 3) | mask
    rem = data << 10
    for bit in range(14, 9, -1):
        if rem & (1 << bit):
            rem ^= FORMAT_GENERATOR << (bit - 10)
    return ((data << 10) | rem) ^ FORMAT_MASK


def _format_positions(n: int):
    """Where format bit i (0 = least significant) goes: its two copies."""
    first = [(8, 0), (8, 1), (8, 2), (8, 3), (8, 4), (8, 5), (8, 7), (8, 8), (7, 8),
             (5, 8), (4, 8), (3, 8), (2, 8), (1, 8), (0, 8)]
    second = [(n - 1 - i, 8) for i in range(7)] + [(8, n - 8 + i) for i in range(8)]
    # ISO order: bit 14 first. first[k] / second[k] hold bit 14 - k.
    return {14 - k: (first[k], second[k]) for k in range(15)}


# ---------------------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------------------

def _choose_version(length: int, level: str) -> int:
    for version in range(1, MAX_VERSION + 1):
        _, blocks = BLOCKS[level][version]
        if 4 + 8 + 8 * length <= 8 * sum(blocks):
            return version
    capacity = (8 * sum(BLOCKS[level][MAX_VERSION][1]) - 12) // 8
    raise ValueError(f"a QR code here holds at most {capacity} bytes at level {level}; got {length}")


def _codewords(payload: bytes, version: int, level: str) -> list[int]:
    ec_n, blocks = BLOCKS[level][version]
    capacity = 8 * sum(blocks)
    bits = [0, 1, 0, 0] + [(len(payload) >> i) & 1 for i in range(7, -1, -1)]
    for byte in payload:
        bits += [(byte >> i) & 1 for i in range(7, -1, -1)]
    bits += [0] * min(4, capacity - len(bits))
    bits += [0] * (-len(bits) % 8)
    data = [int("".join(map(str, bits[i:i + 8])), 2) for i in range(0, len(bits), 8)]
    pad = [0xEC, 0x11]
    data += [pad[i % 2] for i in range(sum(blocks) - len(data))]
    split, at = [], 0
    for count in blocks:
        split.append(data[at:at + count])
        at += count
    ecs = [ec_codewords(block, ec_n) for block in split]
    out = [block[i] for i in range(max(blocks)) for block in split if i < len(block)]
    return out + [ec[i] for i in range(ec_n) for ec in ecs]


def _penalty(grid) -> int:
    n = len(grid)
    score = 0
    lines = [row for row in grid] + [[grid[r][c] for r in range(n)] for c in range(n)]
    for line in lines:                                       # runs of five or more
        run = 1
        for a, b in zip(line, line[1:]):
            if a == b:
                run += 1
            else:
                score += run - 2 if run >= 5 else 0
                run = 1
        score += run - 2 if run >= 5 else 0
        text = "".join("1" if x else "0" for x in line)      # finder-like 1:1:3:1:1 with four light
        for pattern in ("10111010000", "00001011101"):
            start = text.find(pattern)
            while start != -1:
                score += 40
                start = text.find(pattern, start + 1)
    for r in range(n - 1):                                   # 2×2 blocks of one colour
        for c in range(n - 1):
            if grid[r][c] == grid[r][c + 1] == grid[r + 1][c] == grid[r + 1][c + 1]:
                score += 3
    dark = sum(map(sum, grid))
    score += 10 * (abs(dark * 20 - n * n * 10) // (n * n))  # distance from half dark, in 5 % steps
    return score


def encode(text: str, level: str = "M") -> QR:
    """The QR code of ``text`` (UTF-8, byte mode) at ``level``, in the smallest version that
    holds it, with the mask of lowest penalty."""
    if level not in BLOCKS:
        raise ValueError(f"level: expected L or M, got {str(level)[:4]!r}")
    payload = str(text).encode("utf-8")
    version = _choose_version(len(payload), level)
    base, reserved = _function_patterns(version)
    positions = _data_positions(reserved)
    bits = [(word >> i) & 1 for word in _codewords(payload, version, level) for i in range(7, -1, -1)]
    bits += [0] * (len(positions) - len(bits))               # remainder bits
    best = None
    for mask, rule in enumerate(MASKS):
        grid = [row[:] for row in base]
        for (r, c), bit in zip(positions, bits):
            grid[r][c] = bool(bit) ^ rule(r, c)
        word = format_bits(level, mask)
        for i, (a, b) in _format_positions(len(grid)).items():
            for r, c in (a, b):
                grid[r][c] = bool((word >> i) & 1)
        score = _penalty(grid)
        if best is None or score < best[0]:
            best = (score, mask, grid)
    _, mask, grid = best
    return QR(tuple(tuple(row) for row in grid), version, level, mask)


def svg(text: str, level: str = "M", module_px: int = 6, label: str = "") -> str:
    """The code as one <svg> element: a path of dark modules on white, a quiet zone of four
    modules, ``label`` (escaped) as its accessible name."""
    qr = encode(text, level)
    quiet, n = 4, qr.size
    side = (n + 2 * quiet) * module_px
    path = "".join(f"M{c + quiet},{r + quiet}h1v1h-1z" for r in range(n) for c in range(n) if qr.modules[r][c])
    name = escape(label or text, quote=True)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="qr" role="img" aria-label="{name}" '
            f'width="{side}" height="{side}" viewBox="0 0 {n + 2 * quiet} {n + 2 * quiet}" '
            f'shape-rendering="crispEdges"><rect width="100%" height="100%" fill="#fff"/>'
            f'<path d="{path}" fill="#000"/></svg>')


# ---------------------------------------------------------------------------------------
# Decoding (no error correction: a check that what encode wrote reads back)
# ---------------------------------------------------------------------------------------

def read_format(modules) -> tuple[str, int]:
    """(level, mask) from the first copy of the format bits (the nearest valid word)."""
    n = len(modules)
    word = sum(int(modules[a[0]][a[1]]) << i for i, (a, _) in _format_positions(n).items())
    candidates = [(bin(word ^ format_bits(level, mask)).count("1"), level, mask)
                  for level in LEVEL_BITS for mask in range(8)]
    distance, level, mask = min(candidates)
    if distance > 3:
        raise ValueError("no valid format information")
    return level, mask


def decode(modules) -> str:
    """The text of a code ``encode`` wrote: format, unmask, de-interleave, byte mode."""
    n = len(modules)
    version = (n - 17) // 4
    if size_of(version) != n or not 1 <= version <= MAX_VERSION:
        raise ValueError(f"not a QR code of version 1 to {MAX_VERSION}: {n} modules a side")
    level, mask = read_format(modules)
    _, reserved = _function_patterns(version)
    bits = [int(modules[r][c]) ^ MASKS[mask](r, c) for r, c in _data_positions(reserved)]
    words = [int("".join(map(str, bits[i:i + 8])), 2) for i in range(0, len(bits) - 7, 8)]
    ec_n, blocks = BLOCKS[level][version]
    split = [[] for _ in blocks]
    at = 0
    for i in range(max(blocks)):
        for b, count in enumerate(blocks):
            if i < count:
                split[b].append(words[at])
                at += 1
    for b, block in enumerate(split):                        # each block's EC must match
        ec = [words[at + i * len(blocks) + b] for i in range(ec_n)]
        if ec != ec_codewords(block, ec_n):
            raise ValueError("error correction codewords do not match the data")
    data = [w for block in split for w in block]
    stream = "".join(f"{w:08b}" for w in data)
    if stream[:4] != "0100":
        raise ValueError("not byte mode")
    length = int(stream[4:12], 2)
    payload = bytes(int(stream[12 + 8 * i:20 + 8 * i], 2) for i in range(length))
    return payload.decode("utf-8")
