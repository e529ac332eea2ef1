"""The math: the exact N x N maps, the O(N) forms, forgetting (decay, gates) and the recurrent state."""
