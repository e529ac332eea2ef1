"""DeltaNet: the delta rule S_t = (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T, o_t = S_t^T q_t,
which overwrites what the state held under k_t instead of only adding to it. Keys are unit
vectors (callers L2-normalise q and k). No normaliser."""

from .. import WRITES_UNIT

STATE_KIND = "deltanet"
WRITES = WRITES_UNIT
YEAR = 2024  # the paper: Yang et al., Parallelizing Linear Transformers with the Delta Rule
