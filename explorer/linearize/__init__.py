"""Linearizing a causal language model layer by layer: feature maps trained so that each
layer's linear (or sliding-window) attention output matches its softmax output, and the
model with chosen layers swapped.

    layer_maps(kind, window, model) -> LayerMaps      per-layer phi_q, phi_k (maps.py)
    windowed_attention(q, k, v, phi_q, phi_k, window, scale)   a layer's output (attention.py)
    capture / transfer / build        a layer's own inputs, fitting its maps, a whole set
    live                              a smaller set trained while a visitor waits, priced first
    texts / judge                     the texts to train and judge on, per-layer held-out error
    linearized(loaded, layers, maps)                  the model with those layers swapped (model.py)
    logits(text, layers, kind, window, model) -> (N, vocab)        its parallel forward
    evaluate(texts, layers, ...) -> perplexity, agreement, KL      against the original (evaluation.py)
    generate(prompt, max_new_tokens, layers, ..., mode)            decoding as an RNN (generation.py)

This package sits in the experiments layer: above the maps, sources and measures.
"""

from .attention import softmax_attention, windowed_attention, windowed_attention_reference  # noqa: F401
from .maps import LayerMaps, fixed_maps, layer_maps, load_shipped, shipped  # noqa: F401

# The linearized model itself: its parallel forward, its judgement on texts, its generation.
from .model import linearized, logits  # noqa: F401
from .evaluation import evaluate, keep_softmax, sensitivity  # noqa: F401
from .generation import Generation, generate  # noqa: F401
