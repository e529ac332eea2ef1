"""Gated DeltaNet: the delta rule with a forget gate per token,
S_t = a_t (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t v_t^T. Keys are unit vectors. No normaliser."""

from .. import WRITES_UNIT

STATE_KIND = "gated_deltanet"
WRITES = WRITES_UNIT
YEAR = 2025  # the paper: Yang et al., Gated Delta Networks (ICLR)
