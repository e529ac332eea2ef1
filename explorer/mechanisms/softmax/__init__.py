"""Softmax attention: o_i = sum_{j <= i} exp(s_ij) v_j / sum_{j <= i} exp(s_ij), s = q.k / sqrt(d).
It keeps every key and value (the KV cache), so it has no fixed-size state."""

STATE_KIND = None
WRITES = None
BESIDE_SOFTMAX = False  # the reference the others are drawn beside
