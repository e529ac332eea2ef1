"""Training learned feature maps on texts and judging them on held-out texts.

The maps themselves (Hedgehog, LUNA) live in ``explorer.maps``; here they are fitted to a
model's softmax rows, many heads at once, with the loss

    cross-entropy  -sum_j A_ij log A^_ij, averaged over rows and heads,

which equals the mean row KL(A || A^) plus the (constant) entropy of A, and compared with
the fixed maps on texts they were not trained on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import torch
from torch import nn

from .. import stopping
from ..checks import check_positive_int
from ..forms import attention
from ..maps.base import FeatureMap, create
from ..maps.learned import KINDS, check_kind
from ..measure import metrics


@dataclass
class PaddedBatch:
    """Several texts' q, k and softmax maps padded to one length, with a validity mask.

    q, k: (T, *heads, N, d); attention: (T, *heads, N, N); valid: (T, N) bool. ``causal``:
    the model's softmax sees keys j <= i only, so the map it is matched with must too.
    """

    q: torch.Tensor
    k: torch.Tensor
    attention: torch.Tensor
    valid: torch.Tensor
    causal: bool = False

    @classmethod
    def from_samples(cls, samples, layer=None, head=None) -> "PaddedBatch":
        """Stack ``Sample`` objects (from explorer.sources); optionally one layer / head."""
        def pick(t):
            if layer is not None:
                t = t[layer]
            if head is not None:
                t = t[..., head, :, :]
            return t

        kinds = {bool(getattr(s, "causal", False)) for s in samples}
        if len(kinds) > 1:
            raise ValueError("samples: causal and bidirectional samples cannot train one map together")
        n = max(s.q.shape[-2] for s in samples)
        qs, ks, atts, valid = [], [], [], []
        for s in samples:
            q, k, a = pick(s.q), pick(s.k), pick(s.model_attentions)
            pad = n - q.shape[-2]
            qs.append(nn.functional.pad(q, (0, 0, 0, pad)))
            ks.append(nn.functional.pad(k, (0, 0, 0, pad)))
            atts.append(nn.functional.pad(a, (0, pad, 0, pad)))
            valid.append(torch.arange(n) < q.shape[-2])
        return cls(torch.stack(qs), torch.stack(ks), torch.stack(atts), torch.stack(valid), kinds.pop())


def masked_log_map(fmap: FeatureMap, q, k, valid, causal: bool = False) -> torch.Tensor:
    """log A^ of the kernel map with padded keys removed, (T, ..., N, N); ``causal`` also
    removes future keys (j > i), so each row is normalised over the keys a causal model sees."""
    fq, fk = fmap(q, is_query=True), fmap(k)
    key_mask = valid.view(valid.shape[0], *([1] * (q.dim() - 3)), 1, -1)
    if causal:
        key_mask = key_mask & attention.causal_mask(q.shape[-2], q.device)
    w = (fq @ fk.transpose(-1, -2)).masked_fill(~key_mask, 0.0)
    return torch.log(w.clamp_min(1e-30)) - torch.log(w.sum(-1, keepdim=True))


def row_cross_entropy(attention, log_approx, valid) -> torch.Tensor:
    """Mean over valid rows (and heads) of -sum_j A_ij log A^_ij, padded keys excluded."""
    key_mask = valid.view(valid.shape[0], *([1] * (attention.dim() - 3)), 1, -1)
    terms = torch.where(key_mask & (attention > 0), attention * log_approx, torch.zeros_like(log_approx))
    per_row = -terms.sum(-1)                                        # (T, ..., N)
    row_mask = valid.view(valid.shape[0], *([1] * (attention.dim() - 3)), -1).expand_as(per_row)
    return per_row[row_mask].mean()


DEFAULT_LR = {"hedgehog": 0.05, "luna": 0.02}   # the Adam step size each kind trains well with on MiniLM's heads


@dataclass
class TrainingRun:
    """A trained map with its loss curve (training batch) and the time it took."""

    feature_map: FeatureMap
    losses: list = field(default_factory=list)
    seconds: float = 0.0
    kind: str = "hedgehog"


def train_map(batch: PaddedBatch, kind: str = "hedgehog", num_features: int | None = None, steps: int = 300,
              lr: float | None = None, seed: int = 0, progress=None, should_stop=None) -> TrainingRun:
    """Fit a learned map of ``kind`` (one per head in the batch's head dimensions) by Adam,
    minimising the row cross-entropy to the batch's softmax rows.

    ``lr`` defaults to the kind's ``DEFAULT_LR``. ``progress(fraction, loss)`` is called as
    training proceeds; ``should_stop()`` ends it early. Reproducible: the same batch, kind,
    seed and settings give the same map.
    """
    kind = check_kind(kind)
    steps = check_positive_int(steps, "steps")
    lr = DEFAULT_LR[kind] if lr is None else lr
    if not lr > 0:
        raise ValueError(f"lr: learning rate must be positive, got {lr}")
    heads = tuple(batch.q.shape[1:-2])
    torch.manual_seed(seed)
    fmap = KINDS[kind](batch.q.shape[-1], num_features, seed=seed, heads=heads)
    opt = torch.optim.Adam(fmap.parameters(), lr=lr)
    run = TrainingRun(fmap, kind=kind)
    start = time.perf_counter()
    report_every = max(1, steps // 50)
    for step in range(steps):
        opt.zero_grad()
        log_map = masked_log_map(fmap, batch.q, batch.k, batch.valid, batch.causal)
        loss = row_cross_entropy(batch.attention, log_map, batch.valid)
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


def train_hedgehog(batch: PaddedBatch, num_features: int | None = None, steps: int = 300, lr: float = 0.05,
                   seed: int = 0, progress=None, should_stop=None) -> TrainingRun:
    """``train_map`` for Hedgehog."""
    return train_map(batch, "hedgehog", num_features, steps=steps, lr=lr, seed=seed, progress=progress,
                     should_stop=should_stop)


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
    """Per-head quality of each map on held-out samples, causal where the sample is (like
    the model that produced it: a causal model's rows are compared over keys j <= i only).

    ``maps`` is name -> feature map (a map with head dimensions broadcasts over the
    sample's (layers, heads)). Returns name -> {"kl", "entropy", "monotonicity"}, each a
    tensor shaped like the samples' head dimensions: the mean over every row of every
    text where the value is defined; plus "kl_median", the median row KL over the same
    rows; plus "softmax" -> {"entropy"} for reference.
    """
    sums: dict = {}
    kl_rows: dict = {}

    def add(name, key, values, defined):
        tot, cnt = sums.setdefault(name, {}).setdefault(key, [0.0, 0.0])
        values = torch.where(defined, values, torch.zeros_like(values))
        sums[name][key] = [tot + values.sum(-1), cnt + defined.sum(-1)]

    with torch.no_grad():
        for s in samples:
            causal = bool(getattr(s, "causal", False))
            allowed = attention.causal_mask(s.q.shape[-2], s.q.device) if causal else None
            a = s.model_attentions.double()
            h, ok = metrics.row_entropy(a, allowed)
            add("softmax", "entropy", h, ok)
            logit = attention.logits(s.q, s.k).double()
            for name, fmap in maps.items():
                approx = attention.kernel_map(s.q, s.k, fmap, causal=causal).double()
                kl, kl_ok = metrics.row_kl(a, approx, allowed)
                kl_rows.setdefault(name, []).append(torch.where(kl_ok, kl, torch.full_like(kl, float("nan"))))
                for key, (vals, ok) in (("kl", (kl, kl_ok)),
                                        ("entropy", metrics.row_entropy(approx, allowed)),
                                        ("monotonicity", metrics.row_spearman(logit, approx, allowed))):
                    add(name, key, vals, ok)
    out = {name: {key: tot / cnt for key, (tot, cnt) in per.items()} for name, per in sums.items()}
    for name, rows in kl_rows.items():
        out[name]["kl_median"] = torch.cat(rows, dim=-1).nanmedian(dim=-1).values
    return out


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
    """A learned map trained on some texts and judged, beside other maps, on others.

    ``quality`` holds the trained map under its kind's name ("hedgehog" or "luna") and the
    baselines under theirs; ``runs`` every map trained for it (kind -> TrainingRun).
    """

    run: TrainingRun
    quality: dict                 # map name -> {"kl", "kl_median", "entropy", "monotonicity"} per head
    heads: tuple                  # which (layer, head) the per-head tensors cover
    train_count: int
    heldout_count: int
    kind: str = "hedgehog"
    runs: dict = field(default_factory=dict)

    @property
    def feature_map(self) -> FeatureMap:
        return self.run.feature_map


def baseline_maps(head_dim: int, num_features: int, seed: int = 0) -> dict:
    """The fixed maps a learned map is compared with, at its feature dimension where they can be.

    Taylor-2's dimension is fixed by d (1 + d + d(d+1)/2), larger than the learned map's: it
    is shown as the strong fixed baseline it is, and its m is printed beside it.
    """
    return {"elu1": create("elu1", head_dim),
            "favor_plus": create("favor_plus", head_dim, num_features=num_features, seed=seed),
            "taylor2": create("taylor2", head_dim)}


def one_head(fmap: FeatureMap) -> FeatureMap:
    """A map trained on a 1 x 1 block of heads as a plain one-head map (no head dimensions):
    a (1, 1) block would read as a grid of one layer by one head."""
    heads = tuple(getattr(fmap, "heads", ()))
    if heads and all(h == 1 for h in heads):
        fmap = fmap.select(*([0] * len(heads)))
        fmap.requires_grad_(False)
    return fmap


def experiment(train_texts, heldout_texts, *, kind: str = "hedgehog", layer=None, head=None,
               num_features: int = 64, steps: int = 300, lr: float | None = None, seed: int = 0, source=None,
               model=None, progress=None, on_loss=None, hedgehog=None, should_stop=None) -> Experiment:
    """Train a learned map of ``kind`` on ``train_texts`` for one head (layer and head given)
    or all heads, then measure it and the baselines on ``heldout_texts`` only.

    Baselines: elu+1, FAVOR+ (same m), Taylor-2 and, when ``kind`` is "luna", Hedgehog
    trained the same way (or ``hedgehog``, a trained one to reuse). A one-head map is
    returned without head dimensions. ``source`` turns a text into a Sample (default
    ``explorer.sources.from_text``). ``progress(fraction, message)`` narrates;
    ``on_loss(step, loss)`` receives the training loss of ``kind`` as it is reported (about
    50 times), for a live curve. ``should_stop()`` is asked before each text is read and at
    every training step; when it turns true the experiment raises ``stopping.Stopped`` (or
    the signal's own refusal, see ``explorer.stopping``).
    """
    kind = check_kind(kind)
    check_disjoint(train_texts, heldout_texts)
    if not train_texts or not heldout_texts:
        raise ValueError("train_texts: both a training set and a held-out set are needed")
    if source is None:
        from ..sources import from_text
        source = lambda text: from_text(text, model=model)
    report = progress or (lambda fraction, message: None)
    report(0.0, "reading the training texts through the model")
    def read(text):
        stopping.check(should_stop)
        return head_block(source(text), layer, head)

    train = [read(t) for t in train_texts]
    heldout = [read(t) for t in heldout_texts]
    batch = PaddedBatch.from_samples(train)
    rival = kind == "luna" and hedgehog is None
    span = 0.85 / (2 if rival else 1)

    def training_progress(fraction, loss):
        if on_loss is not None:
            on_loss(max(1, round(fraction * steps)), loss)
        report(0.05 + span * fraction, f"training: loss {loss:.3f}")

    run = train_map(batch, kind, num_features, steps=steps, lr=lr, seed=seed, progress=training_progress,
                    should_stop=should_stop)
    stopping.check(should_stop)          # a run cut short is no result
    run.feature_map = one_head(run.feature_map) if layer is not None and head is not None else run.feature_map
    runs = {kind: run}
    maps = {kind: run.feature_map}
    if kind == "luna":
        if rival:
            hh = train_map(batch, "hedgehog", num_features + num_features % 2, steps=steps, seed=seed,
                           progress=lambda f, loss: report(0.05 + span * (1 + f), f"training Hedgehog: loss {loss:.3f}"),
                           should_stop=should_stop)
            stopping.check(should_stop)
            hh.feature_map = one_head(hh.feature_map) if layer is not None and head is not None else hh.feature_map
            runs["hedgehog"] = hh
            hedgehog = hh.feature_map
        maps["hedgehog"] = hedgehog
    report(0.9, "measuring on held-out texts")
    maps.update(baseline_maps(batch.q.shape[-1], run.feature_map.num_features, seed))
    quality = heldout_quality(heldout, maps)
    report(1.0, "done")
    return Experiment(run, quality, (layer, head), len(train), len(heldout), kind, runs)


def hedgehog_experiment(train_texts, heldout_texts, *, layer=None, head=None, num_features: int = 64,
                        steps: int = 300, lr: float = 0.05, seed: int = 0, source=None, model=None,
                        progress=None, on_loss=None) -> Experiment:
    """``experiment`` with kind "hedgehog"."""
    return experiment(train_texts, heldout_texts, kind="hedgehog", layer=layer, head=head,
                      num_features=num_features, steps=steps, lr=lr, seed=seed, source=source, model=model,
                      progress=progress, on_loss=on_loss)
