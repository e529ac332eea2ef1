"""Chapter 4: linear attention is an RNN."""
