"""Attention Kernel Explorer engine: softmax attention seen as a kernel, and its linear approximations.

The data path reads like the article it illustrates:
source -> (Q, K, V) -> feature map phi -> N x N map or O(N) output -> metrics -> figure.
Nothing in this package (outside ``explorer.ui``) imports gradio.
"""

__version__ = "0.1.0"
