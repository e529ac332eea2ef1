"""RetNet: linear attention whose state decays by a fixed per-head gamma_h = 1 - 2^(-5-h)."""

from .. import WRITES_FEATURES

STATE_KIND = "retnet"
WRITES = WRITES_FEATURES
YEAR = 2023  # the paper: Sun et al., Retentive Network
