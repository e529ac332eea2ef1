"""Where Q, K, V come from: a model reading a text, a random preset, or the user's arrays.

    from_text(text, model=None, max_tokens=512, special_tokens=True)   real attention
        model: None (embedded all-MiniLM-L6-v2), "SmolLM2-135M", a folder or a Hub id
    from_random(n, d, preset="gaussian", seed=0, temperature=1.0, heads=1)
    from_arrays(q, k, v=None)                                          in-memory arrays
    load_file(path)                                                    .npy / .npz / .pt upload

Each returns a ``Sample`` whose q, k, v are float32 tensors shaped
(layers, heads, N, head_dim), with unique display labels in ``tokens`` and every change
made on the way (truncation, conversions, invented values) listed in ``notices``.
Importing this package loads no model: the first ``from_text`` call does, once per process.
"""

from .arrays import from_arrays, load_file
from .sample import MAX_ELEMENTS, MAX_TOKENS, Sample
from .synthetic import PRESETS, from_random
from .text import (
    EMBEDDED_NAME,
    SUPPORTED_MODEL_TYPES,
    clear_cache,
    display_labels,
    embedded_model_path,
    from_text,
    loaded_models,
    built_in_models,
    model_shape,
    preload,
)

__all__ = [
    "Sample", "from_text", "from_random", "from_arrays", "load_file", "PRESETS", "EMBEDDED_NAME",
    "SUPPORTED_MODEL_TYPES", "MAX_TOKENS", "MAX_ELEMENTS", "clear_cache", "display_labels",
    "embedded_model_path", "loaded_models", "built_in_models", "model_shape", "preload",
]
