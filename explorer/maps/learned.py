"""Learned feature maps: Hedgehog (Zhang et al. 2024), trained to imitate softmax.

Fixed maps (elu+1 and friends) give flat attention rows; softmax rows are spiky (low
entropy) and monotone in the logit. Hedgehog learns phi instead of choosing it:

    phi(x) = [softmax(W x' + b), softmax(-(W x' + b))],   x' = x / d^(1/4),

one (W, b) for queries and one for keys, per head, W initialised to the identity. The
softmax over features keeps every feature in (0, 1], so the map is positive and cannot
overflow. It is trained so that its normalised attention matches the model's softmax row
by row, with the loss

    cross-entropy  -sum_j A_ij log A^_ij, averaged over rows and heads,

which equals the mean row KL(A || A^) plus the (constant) entropy of A.

Many heads are trained at once: the parameters carry leading head dimensions (e.g.
layers x heads) and broadcast against q, k shaped (..., layers, heads, N, d).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import torch
from torch import nn

from ..forms import attention
from ..measure import metrics
from ..checks import check_positive_int
from .base import FeatureMap, _softmax_scale, create, register


class Hedgehog(FeatureMap):
    """Learned positive map [softmax(Wx'+b), softmax(-Wx'-b)], m = 2 x hidden.

    ``is_query`` selects the query parameters (queries and keys get separate maps).
    ``heads`` gives leading parameter dimensions, e.g. (6, 12) for every head of MiniLM;
    an untrained map (W = identity, b = 0) is the default. With hidden > d the extra
    columns of W start as small seeded noise.
    """

    name = "hedgehog"

    def __init__(self, head_dim: int, num_features: int | None = None, seed: int = 0, heads: tuple = ()):
        super().__init__(head_dim)
        m = 2 * head_dim if num_features is None else check_positive_int(num_features, "num_features")
        if m % 2:
            raise ValueError(f"num_features: hedgehog needs an even count (two softmax halves), got {m}")
        hidden = m // 2
        self.heads = tuple(int(h) for h in heads)
        gen = torch.Generator().manual_seed(int(seed))

        def init_weight():
            w = torch.zeros(head_dim, hidden)
            w[: min(head_dim, hidden), : min(head_dim, hidden)] = torch.eye(min(head_dim, hidden))
            if hidden > head_dim:
                w[:, head_dim:] = 0.1 * torch.randn(head_dim, hidden - head_dim, generator=gen)
            return w.expand(*self.heads, head_dim, hidden).clone()

        self.wq, self.wk = nn.Parameter(init_weight()), nn.Parameter(init_weight())
        self.bq = nn.Parameter(torch.zeros(*self.heads, 1, hidden))
        self.bk = nn.Parameter(torch.zeros(*self.heads, 1, hidden))

    @property
    def num_features(self) -> int:
        return 2 * self.wq.shape[-1]

    def features(self, x, is_query):
        w, b = (self.wq, self.bq) if is_query else (self.wk, self.bk)
        h = _softmax_scale(x) @ w.to(x.dtype) + b.to(x.dtype)
        return torch.cat([torch.softmax(h, dim=-1), torch.softmax(-h, dim=-1)], dim=-1)

    def select(self, *index) -> "Hedgehog":
        """The map of one head (or a sub-block of heads), e.g. ``select(layer, head)``."""
        sub = Hedgehog(self.head_dim, self.num_features, heads=())
        with torch.no_grad():
            for name in ("wq", "wk", "bq", "bk"):
                getattr(sub, name).data = getattr(self, name)[index].detach().clone()
        sub.heads = tuple(sub.wq.shape[:-2])
        return sub

    def save(self, path) -> None:
        """Save a trained map (parameters and shape) to a ``.pt`` file."""
        torch.save({"kind": "hedgehog", "head_dim": self.head_dim, "num_features": self.num_features,
                    "heads": list(self.heads), "state": {k: v.detach().clone() for k, v in self.state_dict().items()}},
                   path)

    @classmethod
    def load(cls, path) -> "Hedgehog":
        """Load a map saved by ``save``; read with weights_only=True (no pickled code runs)."""
        blob = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(blob, dict) or blob.get("kind") != "hedgehog":
            raise ValueError(f"path: {path} does not hold a saved Hedgehog map")
        fmap = cls(int(blob["head_dim"]), int(blob["num_features"]), heads=tuple(blob["heads"]))
        fmap.load_state_dict(blob["state"])
        return fmap


register(Hedgehog, ("num_features", "seed", "heads"))


@dataclass
class PaddedBatch:
    """Several texts' q, k and softmax maps padded to one length, with a validity mask.

    q, k: (T, *heads, N, d); attention: (T, *heads, N, N); valid: (T, N) bool.
    """

    q: torch.Tensor
    k: torch.Tensor
    attention: torch.Tensor
    valid: torch.Tensor

    @classmethod
    def from_samples(cls, samples, layer=None, head=None) -> "PaddedBatch":
        """Stack ``Sample`` objects (from explorer.sources); optionally one layer / head."""
        def pick(t):
            if layer is not None:
                t = t[layer]
            if head is not None:
                t = t[..., head, :, :]
            return t

        n = max(s.q.shape[-2] for s in samples)
        qs, ks, atts, valid = [], [], [], []
        for s in samples:
            q, k, a = pick(s.q), pick(s.k), pick(s.model_attentions)
            pad = n - q.shape[-2]
            qs.append(nn.functional.pad(q, (0, 0, 0, pad)))
            ks.append(nn.functional.pad(k, (0, 0, 0, pad)))
            atts.append(nn.functional.pad(a, (0, pad, 0, pad)))
            valid.append(torch.arange(n) < q.shape[-2])
        return cls(torch.stack(qs), torch.stack(ks), torch.stack(atts), torch.stack(valid))


def masked_log_map(fmap: FeatureMap, q, k, valid) -> torch.Tensor:
    """log A^ of the (non-causal) kernel map with padded keys removed, (T, ..., N, N)."""
    fq, fk = fmap(q, is_query=True), fmap(k)
    key_mask = valid.view(valid.shape[0], *([1] * (q.dim() - 3)), 1, -1)
    w = (fq @ fk.transpose(-1, -2)).masked_fill(~key_mask, 0.0)
    return torch.log(w.clamp_min(1e-30)) - torch.log(w.sum(-1, keepdim=True))


def row_cross_entropy(attention, log_approx, valid) -> torch.Tensor:
    """Mean over valid rows (and heads) of -sum_j A_ij log A^_ij, padded keys excluded."""
    key_mask = valid.view(valid.shape[0], *([1] * (attention.dim() - 3)), 1, -1)
    terms = torch.where(key_mask & (attention > 0), attention * log_approx, torch.zeros_like(log_approx))
    per_row = -terms.sum(-1)                                        # (T, ..., N)
    row_mask = valid.view(valid.shape[0], *([1] * (attention.dim() - 3)), -1).expand_as(per_row)
    return per_row[row_mask].mean()


@dataclass
class TrainingRun:
    """A trained map with its loss curve (training batch) and the time it took."""

    feature_map: Hedgehog
    losses: list = field(default_factory=list)
    seconds: float = 0.0


def train_hedgehog(batch: PaddedBatch, num_features: int | None = None, steps: int = 300, lr: float = 0.05,
                   seed: int = 0, progress=None, should_stop=None) -> TrainingRun:
    """Fit a Hedgehog map (one per head in the batch's head dimensions) by Adam.

    ``progress(fraction, loss)`` is called as training proceeds; ``should_stop()`` ends
    it early. Reproducible: the same batch, seed and settings give the same map.
    """
    steps = check_positive_int(steps, "steps")
    if not lr > 0:
        raise ValueError(f"lr: learning rate must be positive, got {lr}")
    heads = tuple(batch.q.shape[1:-2])
    torch.manual_seed(seed)
    fmap = Hedgehog(batch.q.shape[-1], num_features, seed=seed, heads=heads)
    opt = torch.optim.Adam(fmap.parameters(), lr=lr)
    run = TrainingRun(fmap)
    start = time.perf_counter()
    report_every = max(1, steps // 50)
    for step in range(steps):
        opt.zero_grad()
        loss = row_cross_entropy(batch.attention, masked_log_map(fmap, batch.q, batch.k, batch.valid), batch.valid)
        loss.backward()
        opt.step()
        run.losses.append(loss.item())
        if progress is not None and (step % report_every == 0 or step == steps - 1):
            progress((step + 1) / steps, run.losses[-1])
        if should_stop is not None and should_stop():
            break
    run.seconds = time.perf_counter() - start
    fmap.requires_grad_(False)
    return run


def read_texts(path) -> list[str]:
    """One text per non-empty line of a UTF-8 file (the training and held-out sets)."""
    with open(path, encoding="utf-8") as fh:
        return [line.strip() for line in fh if line.strip()]


def check_disjoint(train_texts, heldout_texts) -> None:
    """Held-out numbers mean nothing if a held-out text was trained on: refuse that."""
    shared = {t.strip() for t in train_texts} & {t.strip() for t in heldout_texts}
    if shared:
        raise ValueError(f"heldout_texts: {len(shared)} text(s) also appear in the training texts, "
                         f"e.g. {next(iter(shared))[:60]!r}")


def heldout_quality(samples, maps: dict) -> dict:
    """Per-head quality of each map on held-out samples (non-causal, like the model).

    ``maps`` is name -> feature map (a Hedgehog with head dimensions broadcasts over the
    sample's (layers, heads)). Returns name -> {"kl", "entropy", "monotonicity"}, each a
    tensor shaped like the samples' head dimensions: the mean over every row of every
    text; plus "softmax" -> {"entropy"} for reference.
    """
    sums: dict = {}

    def add(name, key, values, defined):
        tot, cnt = sums.setdefault(name, {}).setdefault(key, [0.0, 0.0])
        values = torch.where(defined, values, torch.zeros_like(values))
        sums[name][key] = [tot + values.sum(-1), cnt + defined.sum(-1)]

    with torch.no_grad():
        for s in samples:
            a = s.model_attentions.double()
            h, ok = metrics.row_entropy(a)
            add("softmax", "entropy", h, ok)
            logit = attention.logits(s.q, s.k).double()
            for name, fmap in maps.items():
                approx = attention.kernel_map(s.q, s.k, fmap).double()
                for key, (vals, ok) in (("kl", metrics.row_kl(a, approx)),
                                        ("entropy", metrics.row_entropy(approx)),
                                        ("monotonicity", metrics.row_spearman(logit, approx))):
                    add(name, key, vals, ok)
    return {name: {key: tot / cnt for key, (tot, cnt) in per.items()} for name, per in sums.items()}


def head_block(sample, layer=None, head=None):
    """The sample restricted to one layer and/or head, kept as a 1 x 1 block so that every
    tensor stays (layers, heads, N, d); None keeps every layer (or head)."""
    rows = slice(None) if layer is None else slice(layer, layer + 1)
    cols = slice(None) if head is None else slice(head, head + 1)
    return replace(sample, q=sample.q[rows, cols], k=sample.k[rows, cols], v=sample.v[rows, cols],
                   model_attentions=sample.model_attentions[rows, cols],
                   layer_names=sample.layer_names[rows] if sample.layer_names else [])


@dataclass
class Experiment:
    """Hedgehog trained on some texts and judged, beside fixed maps, on others."""

    run: TrainingRun
    quality: dict                 # map name -> {"kl", "entropy", "monotonicity"} per head
    heads: tuple                  # which (layer, head) the per-head tensors cover
    train_count: int
    heldout_count: int


def baseline_maps(head_dim: int, num_features: int, seed: int = 0) -> dict:
    """The fixed maps Hedgehog is compared with, at its feature dimension where they can be.

    Taylor-2's dimension is fixed by d (1 + d + d(d+1)/2), larger than Hedgehog's: it is
    shown as the strong fixed baseline it is, and its m is printed beside it.
    """
    return {"elu1": create("elu1", head_dim),
            "favor_plus": create("favor_plus", head_dim, num_features=num_features, seed=seed),
            "taylor2": create("taylor2", head_dim)}


def hedgehog_experiment(train_texts, heldout_texts, *, layer=None, head=None, num_features: int = 64,
                        steps: int = 300, lr: float = 0.05, seed: int = 0, source=None, model=None,
                        progress=None, on_loss=None) -> Experiment:
    """Train Hedgehog on ``train_texts`` for one head (layer and head given) or all heads,
    then measure it and the baselines on ``heldout_texts`` only.

    ``source`` turns a text into a Sample (default ``explorer.sources.from_text``).
    ``progress(fraction, message)`` narrates; ``on_loss(step, loss)`` receives the training
    loss as it is reported (about 50 times), for a live curve.
    """
    check_disjoint(train_texts, heldout_texts)
    if not train_texts or not heldout_texts:
        raise ValueError("train_texts: both a training set and a held-out set are needed")
    if source is None:
        from ..sources import from_text
        source = lambda text: from_text(text, model=model)
    report = progress or (lambda fraction, message: None)
    report(0.0, "reading the training texts through the model")
    train = [source(t) for t in train_texts]
    heldout = [source(t) for t in heldout_texts]

    train = [head_block(x, layer, head) for x in train]
    heldout = [head_block(x, layer, head) for x in heldout]
    batch = PaddedBatch.from_samples(train)
    def training_progress(fraction, loss):
        if on_loss is not None:
            on_loss(max(1, round(fraction * steps)), loss)
        report(0.05 + 0.85 * fraction, f"training: loss {loss:.3f}")

    run = train_hedgehog(batch, num_features, steps=steps, lr=lr, seed=seed, progress=training_progress)
    report(0.9, "measuring on held-out texts")
    maps = {"hedgehog": run.feature_map, **baseline_maps(batch.q.shape[-1], run.feature_map.num_features, seed)}
    quality = heldout_quality(heldout, maps)
    report(1.0, "done")
    heads = (layer, head)
    return Experiment(run, quality, heads, len(train), len(heldout))
