"""Random Q, K, V with a chosen attention pattern, for experiments without a model.

Each preset produces the kind of map a lecture needs next to real attention:
  gaussian   q, k ~ N(0, 1): logits ~ N(0, 1), a fairly flat map.
  clustered  keys and queries sit around a few centres: a query attends to its cluster
             (block-structured, spiky), the case where flat kernels (elu+1) do badly.
  local      q_i and k_j are random Fourier features of the positions i and j, so
             q_i . k_j follows a Gaussian bump in i - j: attention to neighbours (needs d >= 2;
             the bump gets cleaner as d grows).
  needle     each query is a scaled copy of one key (a random permutation): one sharp peak
             per row, the hardest case for a low-rank approximation.
``temperature`` divides q, so it divides every logit: small = spiky, large = flat.
Everything comes from one seeded torch.Generator, so a seed always gives the same sample.
"""

from __future__ import annotations

import math

import torch

from ..catalog import PRESETS  # one list for the generator and the UI's choices
from ..checks import check_positive_int
from ..text import Message
from .sample import MAX_ELEMENTS, MAX_HEAD_DIM, MAX_TOKENS, Sample, position_labels

MIN_TEMPERATURE, MAX_TEMPERATURE = 1e-3, 1e3   # outside this the logits overflow or vanish
PEAK_LOGIT = 6.0          # matching logit of the structured presets (e^6 ~ 400x a neutral key)
NEEDLE_LOGIT = 10.0       # the needle's logit: it must beat N - 1 random keys together
LOCAL_WIDTH = 1.5         # positions: width of the 'local' bump (weight at distance 3 ~ e^-2)


def from_random(n, d, preset: str = "gaussian", seed=0, temperature=1.0, heads=1) -> Sample:
    """Seeded random Q, K, V of shape (1, heads, n, d) following ``preset`` (see module doc)."""
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d")
    heads = check_positive_int(heads, "heads")
    if n > MAX_TOKENS:
        raise ValueError(Message("sources.err_random_n", cap=MAX_TOKENS, n=n))
    if d > MAX_HEAD_DIM:
        raise ValueError(Message("sources.err_random_d", cap=MAX_HEAD_DIM, d=f"{d:,}"))
    if n * d * heads > MAX_ELEMENTS:
        raise ValueError(Message("sources.err_random_elements", count=n * d * heads, cap=MAX_ELEMENTS))
    if preset not in PRESETS:
        raise ValueError(Message("sources.err_preset", preset=repr(preset), choices=", ".join(PRESETS)))
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 63:
        raise ValueError(Message("sources.err_seed", seed=repr(seed)))
    try:
        temperature = float(temperature)
    except (TypeError, ValueError):
        raise ValueError(Message("sources.err_temperature_type", value=repr(temperature))) from None
    if not MIN_TEMPERATURE <= temperature <= MAX_TEMPERATURE:  # also refuses NaN and inf
        raise ValueError(Message("sources.err_temperature", lo=MIN_TEMPERATURE, hi=MAX_TEMPERATURE, value=temperature))
    if preset == "local" and d < 2:
        raise ValueError(Message("sources.err_local_d"))

    gen = torch.Generator().manual_seed(seed)
    q, k, info = _PRESET_MAKERS[preset](heads, n, d, gen)
    v = torch.randn(heads, n, d, generator=gen)
    q = q / temperature
    info.update(preset=preset, seed=seed, temperature=temperature)
    return Sample(
        q=q.unsqueeze(0).contiguous(), k=k.unsqueeze(0).contiguous(), v=v.unsqueeze(0),
        tokens=position_labels(n),
        source=Message("sources.from_random", preset=Message(f"common.preset.{preset}"), n=n, d=d, heads=heads,
                       seed=seed, tail=Message("sources.from_random_temperature", temperature=f"{temperature:g}")
                       if temperature != 1 else ""),
        layer_names=["random"], info=info,
    )


def _gaussian(heads, n, d, gen):
    return torch.randn(heads, n, d, generator=gen), torch.randn(heads, n, d, generator=gen), {}


def _clustered(heads, n, d, gen):
    n_clusters = min(4, n)
    # Centres of norm r with r^2 / sqrt(d) = PEAK_LOGIT: a query meets its own cluster's keys
    # with logit ~ PEAK_LOGIT whatever d is.
    radius = math.sqrt(PEAK_LOGIT) * d ** 0.25
    centres = torch.randn(heads, n_clusters, d, generator=gen)
    centres = centres / centres.norm(dim=-1, keepdim=True) * radius
    key_cluster = torch.randint(n_clusters, (heads, n), generator=gen)
    query_cluster = torch.randint(n_clusters, (heads, n), generator=gen)
    noise = 0.2 * radius / math.sqrt(d)
    pick = lambda idx: torch.gather(centres, 1, idx.unsqueeze(-1).expand(-1, -1, d))  # noqa: E731
    k = pick(key_cluster) + noise * torch.randn(heads, n, d, generator=gen)
    q = pick(query_cluster) + noise * torch.randn(heads, n, d, generator=gen)
    return q, k, {"key_cluster": key_cluster.tolist(), "query_cluster": query_cluster.tolist()}


def _local(heads, n, d, gen):
    # Random Fourier features of the position: sum_m cos(w_m (i - j)) with w ~ N(0, 1/width^2)
    # estimates (d/2) exp(-(i - j)^2 / (2 width^2)), a bump around the diagonal.
    half = d // 2
    freqs = torch.randn(heads, 1, half, generator=gen) / LOCAL_WIDTH
    angles = torch.arange(n, dtype=torch.float32).view(1, n, 1) * freqs
    feats = torch.cat([angles.cos(), angles.sin(), torch.zeros(heads, n, d - 2 * half)], dim=-1)
    feats = feats * math.sqrt(PEAK_LOGIT * math.sqrt(d) / half)   # logit PEAK_LOGIT at i = j
    noise = 0.1 * feats.abs().mean()
    q = feats + noise * torch.randn(heads, n, d, generator=gen)
    k = feats + noise * torch.randn(heads, n, d, generator=gen)
    return q, k, {"width": LOCAL_WIDTH}


def _needle(heads, n, d, gen):
    k = torch.randn(heads, n, d, generator=gen)
    targets = torch.stack([torch.randperm(n, generator=gen) for _ in range(heads)])
    # q_i = c k_t with c = NEEDLE_LOGIT / sqrt(d): logit c |k_t|^2 / sqrt(d) ~ NEEDLE_LOGIT,
    # while the other logits are ~ N(0, NEEDLE_LOGIT^2 / d).
    q = torch.gather(k, 1, targets.unsqueeze(-1).expand(-1, -1, d)) * (NEEDLE_LOGIT / math.sqrt(d))
    return q, k, {"needles": targets.tolist()}


_PRESET_MAKERS = {"gaussian": _gaussian, "clustered": _clustered, "local": _local, "needle": _needle}
