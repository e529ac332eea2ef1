"""Block sizes shared by the fast forms and the cost model that predicts their memory."""

# 2^18 float32 elements = 1 MiB, so a long sequence runs in bounded extra memory and a
# block's temporaries stay in the 2 MiB per-core L2 cache: the feature maps' elementwise
# passes then read a block from memory once, not once per pass. Measured on the 2-core
# machine at N = 16384 (side_by_side.py, quiet): causal 1 MiB blocks 7.2 ms against 8.8 ms
# with 4 MiB; non-causal 1.17-1.27x performer with 1 MiB blocks, 1.04-1.05x with 4 MiB,
# 1.20-1.23x with 512 KiB.
BLOCK_ELEMENTS = 1 << 18
