"""How well each set of linearized maps imitates every layer's softmax, on texts it never saw.

    layer_errors(loaded, texts, sets, max_tokens=512) -> {name: [error per layer]}

For each text, every layer's own inputs are read from the original model (``capture``), and
each set's windowed linear attention output (``attention.windowed_attention``, the fast form)
is compared with the softmax output the model computed. The error of a layer is

    ||Y^ - Y||_F / ||Y||_F     over every head, token and text (sums of squares pooled),

so 0 is exact and 1 is as far off as answering zero. ``ratio_holds`` counts the layers where
one set's error is at most a given fraction of another's.
"""

from __future__ import annotations

import torch

from .. import stopping
from .attention import windowed_attention
from .capture import capture


def layer_errors(loaded, texts, sets: dict, max_tokens: int = 512, should_stop=None) -> dict:
    """{name: [relative output error of each layer]} for every LayerMaps in ``sets``."""
    layers = next(iter(sets.values())).layers
    miss = {name: torch.zeros(layers, dtype=torch.float64) for name in sets}
    size = torch.zeros(layers, dtype=torch.float64)
    with torch.no_grad():
        for text in texts:
            ids = loaded.tokenizer.encode(text).ids[:max_tokens]
            for layer, data in capture(loaded, ids).items():
                stopping.check(should_stop)
                k, v = data.repeated()
                size[layer] += data.out.double().square().sum()
                for name, maps in sets.items():
                    y = windowed_attention(data.q, k, v, maps.query(layer, data.q), maps.key(layer, k),
                                           maps.window, maps.scale, sinks=maps.sinks)
                    miss[name][layer] += (y.double() - data.out.double()).square().sum()
    return {name: (miss[name] / size).sqrt().tolist() for name in sets}


def ratio_holds(errors: dict, better: str, worse: str, fraction: float) -> list[bool]:
    """Per layer: is ``better``'s error at most ``fraction`` of ``worse``'s?"""
    return [b <= fraction * w for b, w in zip(errors[better], errors[worse])]
