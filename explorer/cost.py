"""The FLOP model shared by the metrics table, the benchmark and the complexity plots.

Counting multiply-adds as 2 FLOPs and ignoring the O(N d) elementwise work:
- quadratic (softmax or any N x N map): Q K^T is 2 N^2 d, A V is 2 N^2 d_v;
- linear: phi(K)^T V is 2 N m d_v, phi(Q) (phi(K)^T V) is 2 N m d_v, plus the normaliser
  phi(Q) z and z itself, 4 N m.
A causal quadratic map needs only the lower triangle, about half; the linear form does the
same work causal or not (the chunked form adds 2 N C (m + d_v) inside chunks).
"""

from __future__ import annotations

from .checks import check_positive_int


def flop_counts(n: int, head_dim: int, feature_dim: int | None = None, value_dim: int | None = None,
                causal: bool = False, chunk_size: int | None = None) -> dict:
    """FLOPs of the quadratic and the linear path for one head; m defaults to d."""
    n = check_positive_int(n, "n")
    d = check_positive_int(head_dim, "head_dim")
    m = d if feature_dim is None else check_positive_int(feature_dim, "feature_dim")
    dv = d if value_dim is None else check_positive_int(value_dim, "value_dim")
    quadratic = 2 * n * n * (d + dv)
    if causal:
        quadratic = quadratic * (n + 1) // (2 * n)
    linear = 4 * n * m * dv + 4 * n * m
    if causal and chunk_size:
        linear += 2 * n * min(chunk_size, n) * (m + dv)
    return {"quadratic_flops": quadratic, "linear_flops": linear, "ratio": quadratic / linear}
