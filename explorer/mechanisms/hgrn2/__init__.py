"""HGRN2: S_t = diag(f_t) S_{t-1} + (1 - f_t) v_t^T, o_t = S_t^T q_t: the input gate is tied to
the forget gate f_t, bounded below by a bound that rises with depth. No normaliser."""

from .. import WRITES_FORGET_GATE

STATE_KIND = "hgrn2"
WRITES = WRITES_FORGET_GATE
YEAR = 2024  # the paper: Qin et al., HGRN2
