"""Chapter 1: softmax attention is Nadaraya-Watson kernel regression.

    f^(x) = sum_j K(x, x_j) y_j / sum_j K(x, x_j)

In 1-D with a Gaussian kernel of bandwidth h this is the classic smoother; on a real head
x is a query q_i, the x_j are the keys, the y_j the value rows and K(q, k) = exp(q.k/sqrt d).
``head_query`` computes that sum literally, in float64, one key at a time in vector form,
and ``model_attention_output`` asks the model itself for its attention output, so the
chapter can print how far apart the two are.
"""

from __future__ import annotations

import numpy as np
import torch

from ...checks import check_positive_int
from ..memo import LRU

X_RANGE = (0.0, 10.0)


def truth(x):
    """The smooth function the toy points are drawn around."""
    x = np.asarray(x, dtype=np.float64)
    return np.sin(x) + 0.3 * x


def toy_points(n: int = 30, seed: int = 0, noise: float = 0.4) -> tuple[np.ndarray, np.ndarray]:
    """``n`` seeded noisy samples (x_j, y_j) of ``truth`` on X_RANGE, sorted by x."""
    n = check_positive_int(n, "points")
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise: must be a finite number >= 0, got {noise}")
    rng = np.random.default_rng(int(seed))
    xs = np.sort(rng.uniform(*X_RANGE, size=n))
    ys = truth(xs) + noise * rng.standard_normal(n)
    return xs, ys


def nw_regression(x, xs, ys, h: float) -> tuple[np.ndarray, np.ndarray]:
    """(f^(x), normalised weights) at every x: weights shaped (len(x), len(xs)), rows sum to 1.

    The kernel is taken relative to each row's largest value (a per-row constant cancels
    in the ratio), so a query far from every point still gets a defined estimate.
    """
    h = float(h)
    if not np.isfinite(h) or h <= 0:
        raise ValueError(f"h: the bandwidth must be a positive number, got {h}")
    x = np.atleast_1d(np.asarray(x, dtype=np.float64))
    xs = np.asarray(xs, dtype=np.float64)
    diff2 = (x[:, None] - xs[None, :]) ** 2
    logk = -0.5 * diff2 / h ** 2
    w = np.exp(logk - logk.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    return w @ np.asarray(ys, dtype=np.float64), w


def head_query(q, k, v, i: int, causal: bool = False) -> dict:
    """The Nadaraya-Watson estimate for query ``i`` of one head (q, k: (N, d), v: (N, d_v)).

    Returns logits s_j, kernel values exp(s_j - max_j s_j) (the max cancels in the ratio),
    normalised weights and the output sum_j w_j v_j, all float64 numpy. ``causal``: a causal
    model's query i reads keys j <= i only; later keys get kernel value 0.
    """
    q, k, v = (torch.as_tensor(t).double() for t in (q, k, v))
    n = q.shape[0]
    if not 0 <= int(i) < n:
        raise ValueError(f"query: token {i} does not exist (0..{n - 1})")
    s = (k @ q[int(i)]) / q.shape[1] ** 0.5
    if causal:
        s[int(i) + 1:] = -torch.inf
    kernel = torch.exp(s - s[: int(i) + 1].max() if causal else s - s.max())
    weights = kernel / kernel.sum()
    out = (weights.unsqueeze(-1) * v).sum(0)
    return {"logits": s.numpy(), "kernel": kernel.numpy(), "weights": weights.numpy(), "output": out.numpy()}


_contexts = LRU(8)        # (layers, heads, N, d_v) each: a few MB for a long text


def model_attention_output(sample) -> torch.Tensor | None:
    """The model's own attention output (layers, heads, N, d_v): what each layer's attention
    computes before its output projection, softmax(QK^T/sqrt d) V per head, captured on a
    fresh forward pass over the sample's token ids. For the BERT family that is what the
    self-attention module returns; for the Llama family (SmolLM2) and GPT-2, the input of
    the output projection (o_proj, c_proj), split into heads.

    None when the sample did not come from a loaded model with every token kept (random or
    uploaded data, or special tokens dropped).
    """
    info = getattr(sample, "info", {}) or {}
    ids = info.get("token_ids")
    if ids is None or len(ids) != sample.n_tokens or sample.model_attentions is None:
        return None
    loaded = _model_of(info)
    if loaded is None or info.get("path") not in (None, loaded.path):
        return None
    return _contexts.get((loaded.path, tuple(ids)), lambda: _forward_contexts(loaded, ids))


def _model_of(info: dict):
    """The loaded model that read the sample: the packaged causal model by its name, else the
    embedded one (loaded already, as the sample came from it)."""
    from ...sources import packaged
    from ...sources.text import get_model

    name = info.get("model")
    if packaged.find(name) is not None:
        return get_model(name)
    return get_model()


def _forward_contexts(loaded, ids) -> torch.Tensor:
    n_heads = loaded.model.config.num_attention_heads
    if loaded.family == "llama":
        modules, before = [layer.self_attn.o_proj for layer in loaded.model.layers], True
    elif loaded.family == "gpt2":
        modules, before = [block.attn.c_proj for block in loaded.model.h], True
    else:
        modules, before = [layer.attention.self for layer in loaded.model.encoder.layer], False
    outputs = [None] * len(modules)

    def keep(index):
        def hook(_module, inputs, output=None):      # before the projection: its input
            x = inputs[0] if before else output
            outputs[index] = (x[0] if isinstance(x, tuple) else x).detach()
        return hook

    with loaded.lock, torch.no_grad():
        handles = [m.register_forward_pre_hook(keep(i)) if before else m.register_forward_hook(keep(i))
                   for i, m in enumerate(modules)]
        try:
            loaded.model(input_ids=torch.tensor([list(ids)]))
        finally:
            for h in handles:
                h.remove()
    n = len(ids)
    return torch.stack([o[0].reshape(n, n_heads, -1).transpose(0, 1) for o in outputs]).float()
