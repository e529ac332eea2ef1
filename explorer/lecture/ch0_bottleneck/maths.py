"""Chapter 0, the bottleneck: every token compares itself with every other token.

For N tokens the softmax map has N^2 entries. This module counts them, the bytes they
take in float32 and float16, and the FLOPs of both multiplication orders from the one
FLOP model (``explorer.measure.cost.flop_counts``), and reproduces the article's step from 512
to 100K tokens (about 260 thousand pairs to ten billion). The article opens with a teacher
whose 1,000 students each compare themselves with the whole class: 1,000 x 1,000 pairs, the
same count (``teacher``, ``class_curve``).
"""

from __future__ import annotations

from ...checks import check_positive_int
from ...measure.cost import flop_counts

ARTICLE_STEP = (512, 100_000)          # the article's "from 512 to 100K"
LADDER = (512, 2048, 8192, 32768, 100_000)
TEACHER_CLASS = 1_000                  # the article's opening: a class of 1,000, every pair compared
MAX_N = 10_000_000                     # counting is free, but numbers past this mean nothing here


def bottleneck(n: int, head_dim: int = 128) -> dict:
    """Pairs, N x N memory and FLOPs of one head at length ``n``, head dimension ``head_dim``.

    FLOPs: quadratic = Q K^T and A V, linear = phi(K)^T V, phi(Q)(...) and the normaliser,
    with m = d (``cost.flop_counts``).
    """
    n = check_positive_int(n, "N")
    if n > MAX_N:
        raise ValueError(f"N: at most {MAX_N:,} tokens here, got {n:,}")
    d = check_positive_int(head_dim, "d")
    pairs = n * n
    flops = flop_counts(n, d)
    return {"n": n, "d": d, "pairs": pairs, "bytes_f32": 4 * pairs, "bytes_f16": 2 * pairs,
            "quadratic_flops": flops["quadratic_flops"], "linear_flops": flops["linear_flops"],
            "flop_ratio": flops["ratio"]}


def ladder(n: int, head_dim: int = 128) -> list[dict]:
    """``bottleneck`` at the article's lengths and at ``n``, sorted by N (n once)."""
    lengths = sorted(set(LADDER) | {check_positive_int(n, "N")})
    return [bottleneck(x, head_dim) for x in lengths]


def article_step(head_dim: int = 128) -> dict:
    """The article's step 512 -> 100K: pairs before and after and how many times more."""
    small, large = (bottleneck(x, head_dim) for x in ARTICLE_STEP)
    return {"n_from": small["n"], "n_to": large["n"], "pairs_from": small["pairs"], "pairs_to": large["pairs"],
            "growth": large["pairs"] / small["pairs"]}


def pairs(n: int) -> int:
    """The pairs N tokens (or students) make when each is compared with every one: N^2, as
    softmax scores each query against every key, its own included."""
    n = check_positive_int(n, "N")
    return n * n


def teacher(class_size: int = TEACHER_CLASS) -> dict:
    """The article's opening: the comparisons of a class of ``class_size`` students, of a class
    twice as large, and how many times more work that is."""
    small, large = pairs(class_size), pairs(2 * class_size)
    return {"students": class_size, "comparisons": small, "double_students": 2 * class_size,
            "double_comparisons": large, "double_growth": large / small}


def class_curve(n_min: int, n_step: int, class_size: int = TEACHER_CLASS) -> list[dict]:
    """Pairs for class sizes from ``n_min`` to twice ``class_size`` in steps of ``n_step`` (the
    N control's own minimum and step), the class and its double included."""
    n_min, n_step = check_positive_int(n_min, "N"), check_positive_int(n_step, "step")
    sizes = sorted(set(range(n_min, 2 * class_size + 1, n_step)) | {class_size, 2 * class_size})
    return [{"n": n, "pairs": pairs(n)} for n in sizes]
