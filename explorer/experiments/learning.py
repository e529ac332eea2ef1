"""Training learned feature maps on texts and judging them on held-out texts.

The maps themselves (Hedgehog, LUNA) live in ``explorer.maps``; here they are fitted to a
model's softmax rows, many heads at once, with the loss

    cross-entropy  -sum_j A_ij log A^_ij, averaged over rows and heads,

which equals the mean row KL(A || A^) plus the (constant) entropy of A, and compared with
the fixed maps on texts they were not trained on.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import torch
from torch import nn

from .. import stopping
from ..catalog import LEARN_MAX_TEXT_CHARS, LEARN_MAX_TEXTS
from ..checks import check_positive_int
from ..diagnostics import attention
from ..maps.base import FeatureMap, create
from ..maps.learned import LEARNED_CLASSES, check_kind
from ..measure import rowwise
from ..text import Message


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
    fmap = starting_map(batch, kind, num_features, seed)
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


def starting_map(batch: PaddedBatch, kind: str, num_features: int | None, seed: int) -> FeatureMap:
    """The map ``train_map`` starts from with ``seed`` (one per head of the batch)."""
    torch.manual_seed(seed)
    return LEARNED_CLASSES[kind](batch.q.shape[-1], num_features, seed=seed, heads=tuple(batch.q.shape[1:-2]))


def same_start(a: FeatureMap, b: FeatureMap) -> bool:
    """Whether two maps start training from exactly the same parameters. Training is full
    batch Adam with nothing random in it, so the same start trains to the same map: Hedgehog
    with m <= 2d starts at W = I whatever the seed."""
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def train_hedgehog(batch: PaddedBatch, num_features: int | None = None, steps: int = 300, lr: float = 0.05,
                   seed: int = 0, progress=None, should_stop=None) -> TrainingRun:
    """``train_map`` for Hedgehog."""
    return train_map(batch, "hedgehog", num_features, steps=steps, lr=lr, seed=seed, progress=progress,
                     should_stop=should_stop)


def read_texts(path) -> list[str]:
    """One text per non-empty line of a UTF-8 file (the training and held-out sets)."""
    with open(path, encoding="utf-8") as fh:
        return [line.strip() for line in fh if line.strip()]



def check_texts(texts, name: str) -> list[str]:
    """``texts`` (a list of strings; blank ones dropped, the rest stripped) within the bounds
    above, or ValueError in words each language has (``learn.err_texts_*``)."""
    if isinstance(texts, str) or not isinstance(texts, (list, tuple)):
        raise ValueError(Message("learn.err_texts_type", name=name))
    if len(texts) > 4 * LEARN_MAX_TEXTS:          # refuse a huge list before looking at every item
        raise ValueError(Message("learn.err_texts_count", name=name, count=f"{len(texts):,}", most=LEARN_MAX_TEXTS))
    if not all(isinstance(t, str) for t in texts):
        raise ValueError(Message("learn.err_texts_type", name=name))
    kept = [t.strip() for t in texts if t.strip()]
    if not kept:
        raise ValueError(Message("learn.err_texts_none", name=name))
    if len(kept) > LEARN_MAX_TEXTS:
        raise ValueError(Message("learn.err_texts_count", name=name, count=f"{len(kept):,}", most=LEARN_MAX_TEXTS))
    for i, t in enumerate(kept, start=1):
        if len(t) > LEARN_MAX_TEXT_CHARS:
            raise ValueError(Message("learn.err_text_long", name=name, index=i, chars=f"{len(t):,}",
                                     most=f"{LEARN_MAX_TEXT_CHARS:,}"))
    return kept


def check_disjoint(train_texts, heldout_texts) -> None:
    """Held-out numbers mean nothing if a held-out text was trained on: refuse that."""
    shared = {t.strip() for t in train_texts} & {t.strip() for t in heldout_texts}
    if shared:
        example = min(shared)
        raise ValueError(Message("learn.err_texts_shared", count=len(shared),
                                 example=example[:60] + ("…" if len(example) > 60 else "")))


# ---------------------------------------------------------------------------------------
# Seeds: a trained map (and FAVOR+) differs from one seed to the next
# ---------------------------------------------------------------------------------------

DEFAULT_SEEDS = 3
MAX_SEEDS = 8


def seed_list(seed: int = 0, seeds=DEFAULT_SEEDS) -> tuple[int, ...]:
    """The seeds of an experiment: ``seeds`` consecutive ones from ``seed`` (an int), or the
    list given (distinct, non-negative), at most ``MAX_SEEDS``."""
    if isinstance(seeds, bool):
        raise ValueError(Message("learn.err_seeds_type", cap=MAX_SEEDS, got=repr(seeds)))
    if isinstance(seeds, int):
        if not 1 <= seeds <= MAX_SEEDS:
            raise ValueError(Message("learn.err_seeds_count", cap=MAX_SEEDS, got=seeds))
        seed = int(seed or 0)
        if seed < 0:
            raise ValueError(Message("learn.err_seed", got=seed))
        return tuple(range(seed, seed + seeds))
    values = tuple(seeds)
    if not 1 <= len(values) <= MAX_SEEDS or len(set(values)) != len(values) \
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in values):
        raise ValueError(Message("learn.err_seeds_list", cap=MAX_SEEDS, got=str(values)[:60]))
    return values


def spread(values) -> tuple[float, float]:
    """(mean, sd) over seeds; sd is the sample standard deviation (n - 1), NaN for one seed."""
    x = np.asarray(values, dtype=np.float64)
    if x.size < 2:
        return float(x.mean()), math.nan
    # The same value on every seed (a map the seed does not change) has no spread at all,
    # not the 1e-17 that summing rounds to.
    return float(x.mean()), 0.0 if np.all(x == x[0]) else float(x.std(ddof=1))


def apart(a, b) -> bool:
    """Whether the per-seed values ``a`` and ``b`` differ by more than seed noise: the means
    differ by more than the sum of the two standard deviations. One seed has no spread, so
    nothing is apart then (an ordering on one seed is not an ordering)."""
    (ma, sa), (mb, sb) = spread(a), spread(b)
    if math.isnan(sa) or math.isnan(sb) or not (math.isfinite(ma) and math.isfinite(mb)):
        return False
    return abs(ma - mb) > sa + sb


def true_row_median(rows: torch.Tensor) -> torch.Tensor:
    """The median over the last dimension, NaN left out: the middle value, or the mean of the
    two middle ones for an even count (``torch.nanmedian`` takes the lower of the two)."""
    x = rows.detach().cpu().double().numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # a head with no defined row: NaN, said so
        return torch.from_numpy(np.nanmedian(x, axis=-1))


def heldout_quality(samples, maps: dict) -> dict:
    """Per-head quality of each map on held-out samples, causal where the sample is (like
    the model that produced it: a causal model's rows are compared over keys j <= i only).

    ``maps`` is name -> feature map (a map with head dimensions broadcasts over the
    sample's (layers, heads)). Returns name -> {"kl", "entropy", "monotonicity"}, each a
    tensor shaped like the samples' head dimensions: the mean over every row of every
    text where the value is defined; plus "kl_median", the median row KL over the same
    rows (a true median: the mean of the two middle rows for an even count), and
    "kl_median_pooled" (0-d), the median over those rows of every head at once; plus
    "softmax" -> {"entropy"} for reference. The rows are those of ``rowwise.rows_in_means``:
    a causal text's row 0 (one key, so KL 0 and entropy 0 for every map) is in none.
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
            n = s.q.shape[-2]
            allowed = attention.causal_mask(n, s.q.device) if causal else None
            counted = rowwise.rows_in_means(n, causal, s.q.device)
            a = s.model_attentions.double()
            h, ok = rowwise.row_entropy(a, allowed)
            add("softmax", "entropy", h, ok & counted)
            logit = attention.logits(s.q, s.k).double()
            for name, fmap in maps.items():
                approx = attention.kernel_map(s.q, s.k, fmap, causal=causal).double()
                kl, kl_ok = rowwise.row_kl(a, approx, allowed)
                kl_ok = kl_ok & counted
                kl_rows.setdefault(name, []).append(torch.where(kl_ok, kl, torch.full_like(kl, float("nan"))))
                for key, (vals, ok) in (("kl", (kl, kl_ok)),
                                        ("entropy", rowwise.row_entropy(approx, allowed)),
                                        ("monotonicity", rowwise.row_spearman(logit, approx, allowed))):
                    add(name, key, vals, ok & counted)
    out = {name: {key: tot / cnt for key, (tot, cnt) in per.items()} for name, per in sums.items()}
    for name, rows in kl_rows.items():
        every = torch.cat(rows, dim=-1)
        out[name]["kl_median"] = true_row_median(every)
        out[name]["kl_median_pooled"] = torch.tensor(rowwise.true_median(every), dtype=torch.float64)
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
    """Learned maps trained on some texts, one per seed, and judged, beside other maps, on others.

    ``by_seed[i]`` is the held-out quality with seed ``seeds[i]``: the trained map under its
    kind's name ("hedgehog" or "luna"), the baselines under theirs (FAVOR+ drawn with that
    seed), each a per-head tensor. ``quality`` is their mean over seeds, per head.
    ``runs_by_seed[i]`` holds every map trained with that seed (kind -> TrainingRun);
    ``run`` and ``runs`` are the first seed's (its map is the one handed on). A seed whose
    starting map equals an earlier seed's shares that seed's run (``same_every_seed``).
    """

    run: TrainingRun
    quality: dict                 # map name -> {"kl", "kl_median", "entropy", "monotonicity"} per head
    heads: tuple                  # which (layer, head) the per-head tensors cover
    train_count: int
    heldout_count: int
    kind: str = "hedgehog"
    runs: dict = field(default_factory=dict)
    seeds: tuple = (0,)
    by_seed: list = field(default_factory=list)
    runs_by_seed: list = field(default_factory=list)
    same_every_seed: tuple = ()   # kinds whose start (so whose map) the seed did not change: trained once

    @property
    def feature_map(self) -> FeatureMap:
        return self.run.feature_map

    def per_seed(self, name: str, key: str = "kl") -> list[float]:
        """One number per seed: ``key`` of map ``name`` averaged over the covered heads."""
        return [float(np.nanmean(q[name][key].detach().cpu().double().numpy())) for q in self.by_seed]


def mean_over_seeds(by_seed: list) -> dict:
    """Per map and metric, the per-head mean of the seeds' values."""
    first = by_seed[0]
    return {name: {key: torch.stack([q[name][key] for q in by_seed]).mean(0) for key in per}
            for name, per in first.items()}


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
               num_features: int = 64, steps: int = 300, lr: float | None = None, seed: int = 0,
               seeds=DEFAULT_SEEDS, source=None, model=None, progress=None, on_loss=None, hedgehog=None,
               should_stop=None) -> Experiment:
    """Train a learned map of ``kind`` on ``train_texts`` for one head (layer and head given)
    or all heads, once per seed, then measure each and the baselines on ``heldout_texts`` only.

    ``seeds``: how many seeds, counted from ``seed`` (default 3: 0, 1, 2), or the list of
    them. Each seed starts the trained maps afresh and redraws FAVOR+; a seed that starts a
    map exactly as an earlier seed did (Hedgehog with m <= 2d starts at W = I) shares that
    seed's training, since the same start trains to the same map (``same_every_seed``). Baselines: elu+1,
    FAVOR+ (same m), Taylor-2 and, when ``kind`` is "luna", Hedgehog trained the same way
    with the same seed (or ``hedgehog``: trained ones to reuse, one per seed, or one map for
    every seed). A one-head map is returned without head dimensions. The texts are checked
    (``check_texts``: count and length) and must not overlap. ``source`` turns a text into a
    Sample (default ``explorer.sources.from_text``). ``progress(fraction, message)``
    narrates; ``on_loss(step, loss, seed)`` receives the training loss of ``kind`` as it is
    reported (about 50 times a seed), for a live curve. ``should_stop()`` is asked before
    each text is read and at every training step of every seed; when it turns true the
    experiment raises ``stopping.Stopped`` (or the signal's own refusal, see
    ``explorer.stopping``).
    """
    kind = check_kind(kind)
    train_texts = check_texts(train_texts, "train_texts")
    heldout_texts = check_texts(heldout_texts, "heldout_texts")
    check_disjoint(train_texts, heldout_texts)
    seeds = seed_list(seed, seeds)
    steps = check_positive_int(steps, "steps")
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
    one = layer is not None and head is not None
    if hedgehog is not None and not isinstance(hedgehog, (list, tuple)):
        hedgehog = [hedgehog] * len(seeds)
    if hedgehog is not None and len(hedgehog) != len(seeds):
        raise ValueError(f"hedgehog: one trained map per seed ({len(seeds)}), got {len(hedgehog)}")
    rival = kind == "luna" and hedgehog is None
    trainings = len(seeds) * (2 if rival else 1)
    span = 0.85 / trainings

    def train_one(which, index, s, m, on_step=None):
        start = 0.05 + span * index
        label = "training" if which == kind else "training Hedgehog"

        def relay(fraction, loss):
            if on_step is not None:
                on_step(max(1, round(fraction * steps)), loss)
            report(start + span * fraction, f"{label} (seed {s}): loss {loss:.3f}")

        run = train_map(batch, which, m, steps=steps, lr=lr if which == kind else None, seed=s, progress=relay,
                        should_stop=should_stop)
        stopping.check(should_stop)          # a run cut short is no result
        run.feature_map = one_head(run.feature_map) if one else run.feature_map
        return run

    trained: dict = {}         # kind -> [(starting map, run)]: a seed that starts the same reuses the run

    def trained_once(which, index, s, m, on_step=None):
        start = starting_map(batch, which, m, s)
        for earlier, run in trained.get(which, []):
            if same_start(start, earlier):
                reused.add(which)
                report(0.05 + span * (index + 1), f"seed {s} starts {which} as an earlier seed did: the same map")
                return run
        run = train_one(which, index, s, m, on_step)
        trained.setdefault(which, []).append((start, run))
        return run

    runs_by_seed, by_seed, reused = [], [], set()
    for i, s in enumerate(seeds):
        loss_of_seed = None if on_loss is None else (lambda step, loss, s=s: on_loss(step, loss, s))
        run = trained_once(kind, i * (2 if rival else 1), s, num_features, loss_of_seed)
        runs = {kind: run}
        maps = {kind: run.feature_map}
        if kind == "luna":
            if rival:
                runs["hedgehog"] = trained_once("hedgehog", 2 * i + 1, s, num_features + num_features % 2)
                maps["hedgehog"] = runs["hedgehog"].feature_map
            else:
                maps["hedgehog"] = hedgehog[i]
        maps.update(baseline_maps(batch.q.shape[-1], run.feature_map.num_features, s))
        runs_by_seed.append(runs)
        stopping.check(should_stop)
        report(0.9 + 0.1 * i / len(seeds), f"measuring seed {s} on held-out texts")
        by_seed.append(heldout_quality(heldout, maps))
    report(1.0, "done")
    return Experiment(runs_by_seed[0][kind], mean_over_seeds(by_seed), (layer, head), len(train), len(heldout), kind,
                      runs_by_seed[0], seeds, by_seed, runs_by_seed, tuple(sorted(reused)))


def hedgehog_experiment(train_texts, heldout_texts, *, layer=None, head=None, num_features: int = 64,
                        steps: int = 300, lr: float = 0.05, seed: int = 0, seeds=DEFAULT_SEEDS, source=None,
                        model=None, progress=None, on_loss=None) -> Experiment:
    """``experiment`` with kind "hedgehog"."""
    return experiment(train_texts, heldout_texts, kind="hedgehog", layer=layer, head=head,
                      num_features=num_features, steps=steps, lr=lr, seed=seed, seeds=seeds, source=source,
                      model=model, progress=progress, on_loss=on_loss)
