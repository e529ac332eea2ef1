"""Chapter 0: the bottleneck."""
