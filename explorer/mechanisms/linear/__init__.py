"""Linear attention: the kernel map from features, the log decay the state takes, and the O(N) forms."""
