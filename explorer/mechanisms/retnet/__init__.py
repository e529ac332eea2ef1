"""RetNet: linear attention whose state decays by a fixed per-head gamma_h = 1 - 2^(-5-h)."""

STATE_KIND = "retnet"
WRITES = "features"
