"""Chapter 2: associativity. (phi(Q) phi(K)^T) V = phi(Q) (phi(K)^T V), at very different cost.

The left order builds the N x N weights first; the right order builds phi(K)^T V, an
m x d_v matrix whatever N is. ``orders`` describes both as blocks (the operands and the
intermediate each creates) with their sizes, FLOPs (``explorer.measure.cost.flop_counts``) and
bytes; ``measure`` runs both on seeded random data at the chosen N through the engine
(``attention.kernel_weights`` for the left order, ``linear.parallel`` for the right one),
times them and reports how far apart the outputs are.
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from ...diagnostics import attention
from ...mechanisms.linear import forms as linear
from ...checks import check_positive_int
from ...measure.cost import flop_counts

ARTICLE_N, ARTICLE_D = 100_000, 128     # the article's "N = 100K, d = 128 -> about 780x"
MAX_TIMED_N = 8192                      # the left order holds N^2 floats (256 MiB at 8192)
STEP_OPS = ("×", "=", "", "×", "=")     # between the six blocks of an order: two products
LINEAR_DRAW_LIMIT = 512                 # above this the block sides are drawn on a log scale


def orders(n: int, head_dim: int, num_features: int, value_dim: int | None = None) -> dict:
    """Both orders as lists of blocks (name, rows, cols, role), with FLOPs and intermediate bytes.
    Each list is two products of three blocks: a × b = c (``STEP_OPS`` between them).

    FLOPs follow the one FLOP model: the left order is 2 N^2 (m + d_v) (phi(Q) phi(K)^T and
    the product with V), the right order 4 N m d_v + 4 N m (phi(K)^T V, phi(Q) times it,
    and the normaliser).
    """
    n = check_positive_int(n, "N")
    d = check_positive_int(head_dim, "d")
    m = check_positive_int(num_features, "m")
    dv = d if value_dim is None else check_positive_int(value_dim, "d_v")
    flops = flop_counts(n, m, feature_dim=m, value_dim=dv)
    # Each order as its two products, operands in the order they multiply:
    # left:  φ(Q) × φ(K)ᵀ = φ(Q)φ(K)ᵀ (N × N), then φ(Q)φ(K)ᵀ × V = O;
    # right: φ(K)ᵀ × V = φ(K)ᵀV (m × d_v), then φ(Q) × φ(K)ᵀV = O.
    left = [("φ(Q)", n, m, "operand"), ("φ(K)ᵀ", m, n, "operand"), ("φ(Q)φ(K)ᵀ", n, n, "intermediate"),
            ("φ(Q)φ(K)ᵀ", n, n, "intermediate"), ("V", n, dv, "operand"), ("O", n, dv, "output")]
    right = [("φ(K)ᵀ", m, n, "operand"), ("V", n, dv, "operand"), ("φ(K)ᵀV", m, dv, "intermediate"),
             ("φ(Q)", n, m, "operand"), ("φ(K)ᵀV", m, dv, "intermediate"), ("O", n, dv, "output")]
    as_dicts = lambda blocks: [{"name": a, "rows": r, "cols": c, "role": role} for a, r, c, role in blocks]  # noqa: E731
    return {
        "n": n, "d": d, "m": m, "dv": dv,
        "left": as_dicts(left), "right": as_dicts(right),
        "left_intermediate_elements": n * n, "right_intermediate_elements": m * dv,
        "left_intermediate_bytes": 4 * n * n, "right_intermediate_bytes": 4 * m * dv,
        "left_flops": flops["quadratic_flops"], "right_flops": flops["linear_flops"], "flop_ratio": flops["ratio"],
    }


def display_side(size: int, largest: int) -> float:
    """How long a block's side is drawn when the largest side in the picture is ``largest``.

    Up to LINEAR_DRAW_LIMIT the sizes are drawn as they are. Beyond it they are compressed
    on a log scale, side = size^a with a = log(LINEAR_DRAW_LIMIT) / log(largest), so that
    the largest side is drawn LINEAR_DRAW_LIMIT long; the order of sizes (and equal sizes)
    is kept, and N x N still dwarfs m x d.
    """
    size, largest = check_positive_int(size, "size"), check_positive_int(largest, "largest")
    if largest <= LINEAR_DRAW_LIMIT:
        return float(size)
    return float(size) ** (math.log(LINEAR_DRAW_LIMIT) / math.log(largest))


def article_ratio() -> dict:
    """The article's N = 100K, d = 128 example from the FLOP model (m = d_v = d).

    ``model_ratio`` counts the normaliser too: N / (d + 1), about 775; ``leading_ratio``
    keeps the leading terms only, N / d = 781.25, which the article rounds to about 780.
    """
    flops = flop_counts(ARTICLE_N, ARTICLE_D)
    return {"n": ARTICLE_N, "d": ARTICLE_D, "model_ratio": flops["ratio"], "leading_ratio": ARTICLE_N / ARTICLE_D,
            "quadratic_flops": flops["quadratic_flops"], "linear_flops": flops["linear_flops"]}


def random_qkv(n: int, head_dim: int, seed: int = 0):
    """Seeded standard-normal q, k, v of one head, (N, d) each, float32."""
    gen = torch.Generator().manual_seed(int(seed))
    return tuple(torch.randn(n, head_dim, generator=gen) for _ in range(3))


def left_order(fq, fk, v) -> torch.Tensor:
    """(phi(Q) phi(K)^T) V / row sums: the N x N weights first (``attention.weights_from_features``)."""
    w = attention.weights_from_features(fq, fk, False, None)
    return (w @ v) / w.sum(-1, keepdim=True)


def right_order(fq, fk, v) -> torch.Tensor:
    """phi(Q) (phi(K)^T V) / phi(Q) z: ``linear.parallel``, the m x d_v state first."""
    return linear.parallel(fq, fk, v, causal=False)


def _best_time(fn, repeats: int):
    """(the shortest of ``repeats`` runs in seconds, the first run's result)."""
    best, first = math.inf, None
    for i in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
        if i == 0:
            first = result
    return best, first


@torch.inference_mode()
def measure(q, k, v, feature_map, repeats: int = 3) -> dict:
    """Both orders on (N, d) inputs through ``feature_map``: best-of-``repeats`` seconds each,
    the outputs' max |difference| and max relative difference (to max |O|). The outputs
    compared are those of the first timed runs: at N = 8192 one run of the left order is
    most of a redraw, so none is spent on an untimed one."""
    n = q.shape[0]
    if n > MAX_TIMED_N:
        raise ValueError(f"N: the left order holds N × N = {n * n:,} weights; timed up to N = {MAX_TIMED_N:,}")
    repeats = check_positive_int(repeats, "repeats")
    fq, fk = feature_map(q, is_query=True), feature_map(k)
    left_seconds, out_left = _best_time(lambda: left_order(fq, fk, v), repeats)
    right_seconds, out_right = _best_time(lambda: right_order(fq, fk, v), repeats)
    diff = float((out_left.double() - out_right.double()).abs().max())
    scale = float(out_left.double().abs().max()) or 1.0
    return {"left_seconds": left_seconds, "right_seconds": right_seconds,
            "max_abs_diff": diff, "max_rel_diff": diff / scale,
            "out_left": out_left.numpy(), "out_right": out_right.numpy()}


def matmul_rate(size: int = 256, repeats: int = 3) -> float:
    """Dense float32 matmul rate in FLOP/s now: the yardstick printed beside live times."""
    a = torch.randn(size, size)
    seconds, _ = _best_time(lambda: a @ a, repeats)
    return 2 * size ** 3 / max(seconds, 1e-9)


def block_sides(blocks: list[dict], largest: int) -> np.ndarray:
    """(rows, cols) as drawn for each block (``display_side``)."""
    return np.array([[display_side(b["rows"], largest), display_side(b["cols"], largest)] for b in blocks])
