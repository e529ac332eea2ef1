"""Learned feature maps trained to imitate softmax: Hedgehog (Zhang et al. 2024) here, and
the LUNA-style map of ``luna`` (Shahbazi et al. 2025), both through one training path.

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

Trained maps are saved as safetensors (``save_map`` / ``load_map``, which checks a file's
size and every tensor's shape before reading it), and the maps shipped in ``assets/maps``
for the lecture load with ``pretrained(kind, layer, head)``.
"""

from __future__ import annotations

import json
import math
import struct
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch
from torch import nn

from ..forms import attention
from ..resources import asset
from ..measure import metrics
from ..checks import check_positive_int
from .base import SPECS, FeatureMap, _softmax_scale, create, register
from .luna import Luna


class Hedgehog(FeatureMap):
    """Learned positive map [softmax(Wx'+b), softmax(-Wx'-b)], m = 2 x hidden.

    ``is_query`` selects the query parameters (queries and keys get separate maps).
    ``heads`` gives leading parameter dimensions, e.g. (6, 12) for every head of MiniLM;
    an untrained map (W = identity, b = 0) is the default. With hidden > d the extra
    columns of W start as small seeded noise.
    """

    spec = SPECS["hedgehog"]

    def __init__(self, head_dim: int, num_features: int | None = None, seed: int = 0, heads: tuple = ()):
        super().__init__(head_dim)
        m = self.spec.feature_count(head_dim) if num_features is None else check_positive_int(num_features, "num_features")
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


register(Hedgehog)


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


# The learned kinds, and the Adam step size each trains well with on MiniLM's heads.
KINDS = {"hedgehog": Hedgehog, "luna": Luna}
DEFAULT_LR = {"hedgehog": 0.05, "luna": 0.02}


def check_kind(kind) -> str:
    if kind not in KINDS:
        raise ValueError(f"kind: choose one of {', '.join(KINDS)}, got {str(kind)[:40]!r}")
    return kind


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
               model=None, progress=None, on_loss=None, hedgehog=None) -> Experiment:
    """Train a learned map of ``kind`` on ``train_texts`` for one head (layer and head given)
    or all heads, then measure it and the baselines on ``heldout_texts`` only.

    Baselines: elu+1, FAVOR+ (same m), Taylor-2 and, when ``kind`` is "luna", Hedgehog
    trained the same way (or ``hedgehog``, a trained one to reuse). A one-head map is
    returned without head dimensions. ``source`` turns a text into a Sample (default
    ``explorer.sources.from_text``). ``progress(fraction, message)`` narrates;
    ``on_loss(step, loss)`` receives the training loss of ``kind`` as it is reported (about
    50 times), for a live curve.
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
    train = [head_block(source(t), layer, head) for t in train_texts]
    heldout = [head_block(source(t), layer, head) for t in heldout_texts]
    batch = PaddedBatch.from_samples(train)
    rival = kind == "luna" and hedgehog is None
    span = 0.85 / (2 if rival else 1)

    def training_progress(fraction, loss):
        if on_loss is not None:
            on_loss(max(1, round(fraction * steps)), loss)
        report(0.05 + span * fraction, f"training: loss {loss:.3f}")

    run = train_map(batch, kind, num_features, steps=steps, lr=lr, seed=seed, progress=training_progress)
    run.feature_map = one_head(run.feature_map) if layer is not None and head is not None else run.feature_map
    runs = {kind: run}
    maps = {kind: run.feature_map}
    if kind == "luna":
        if rival:
            hh = train_map(batch, "hedgehog", num_features + num_features % 2, steps=steps, seed=seed,
                           progress=lambda f, loss: report(0.05 + span * (1 + f), f"training Hedgehog: loss {loss:.3f}"))
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


# ---------------------------------------------------------------------------------------
# Saving and loading trained maps (safetensors), and the maps shipped for the lecture
# ---------------------------------------------------------------------------------------

MAX_FILE_BYTES = 16 * 2 ** 20      # a map for every head of MiniLM at m = 512 is ~7 MB
MAX_HEADER_BYTES = 64 * 2 ** 10
MAX_HEAD_DIM = 1024
MAX_NUM_FEATURES = 1024
MAX_HEADS = 4096                   # layers x heads a file may cover
PRETRAINED_DIR = asset("maps")            # in a checkout or an installed package alike


def save_map(fmap: FeatureMap, path, **info) -> Path:
    """Write a learned map to a safetensors file: its parameters, plus its kind, head_dim,
    num_features and head dimensions (and any ``info``, e.g. layer, head, steps, seed) as
    text metadata."""
    from safetensors.torch import save_file
    kind = check_kind(fmap.name)
    meta = {"kind": kind, "head_dim": str(fmap.head_dim), "num_features": str(fmap.num_features),
            "heads": json.dumps(list(fmap.heads)), **{k: json.dumps(v) for k, v in info.items()}}
    path = Path(path)
    save_file({k: v.detach().contiguous().cpu().float() for k, v in fmap.state_dict().items()}, str(path),
              metadata=meta)
    return path


def _whole(meta: dict, key: str, low: int, high: int) -> int:
    """An integer metadata field within [low, high], or ValueError naming it."""
    try:
        value = json.loads(meta[key])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"file: the metadata field {key!r} is missing or not a number") from None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"file: {key} must be a whole number in {low}..{high}, got {str(value)[:40]}")
    return value


def read_header(path) -> tuple[dict, dict]:
    """(metadata, tensor entries) of a safetensors file, read without loading any tensor.

    Refuses files over MAX_FILE_BYTES and headers that are too long, not JSON, or that
    point outside the file, each with one sentence.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError:
        raise ValueError("file: cannot be read") from None
    if size > MAX_FILE_BYTES:
        raise ValueError(f"file: {size / 2 ** 20:.1f} MB is over the {MAX_FILE_BYTES // 2 ** 20} MB a saved map may have")
    with open(path, "rb") as fh:
        raw = fh.read(8)
        if len(raw) < 8:
            raise ValueError("file: too short to be a safetensors file")
        (length,) = struct.unpack("<Q", raw)
        if length > MAX_HEADER_BYTES or 8 + length > size:
            raise ValueError("file: not a safetensors map (its header length is out of range)")
        try:
            header = json.loads(fh.read(length).decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ValueError("file: not a safetensors map (its header is not JSON)") from None
    if not isinstance(header, dict):
        raise ValueError("file: not a safetensors map (its header is not a table)")
    meta = header.pop("__metadata__", None)
    if not isinstance(meta, dict):
        raise ValueError("file: it holds no map description (kind, head_dim, num_features, heads)")
    return meta, header


def check_header(meta: dict, entries: dict) -> tuple[str, int, int, tuple]:
    """(kind, head_dim, num_features, heads) after checking the description and every
    tensor's name, dtype and shape against what that map needs."""
    kind = meta.get("kind")
    if kind not in KINDS:
        raise ValueError(f"file: the map kind must be one of {', '.join(KINDS)}, got {str(kind)[:40]!r}")
    head_dim = _whole(meta, "head_dim", 1, MAX_HEAD_DIM)
    num_features = _whole(meta, "num_features", 1, MAX_NUM_FEATURES)
    try:
        heads = json.loads(meta.get("heads", "[]"))
    except ValueError:
        heads = None
    if (not isinstance(heads, list) or len(heads) > 2
            or not all(isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= MAX_HEADS for h in heads)
            or math.prod(heads) > MAX_HEADS):
        raise ValueError(f"file: heads must list at most two head counts with a product of at most {MAX_HEADS}")
    try:
        template = KINDS[kind](head_dim, num_features)          # one head: small, bounded above
    except ValueError as exc:
        raise ValueError(f"file: {exc}") from None
    expected = {name: [*heads, *p.shape] for name, p in template.state_dict().items()}
    if set(entries) != set(expected):
        missing, extra = sorted(set(expected) - set(entries)), sorted(set(entries) - set(expected))
        raise ValueError(f"file: a {kind} map needs tensors {sorted(expected)}; "
                         f"missing {missing[:4]}, unexpected {[e[:20] for e in extra[:4]]}")
    for name, shape in expected.items():
        entry = entries[name]
        if not isinstance(entry, dict) or entry.get("dtype") != "F32" or entry.get("shape") != shape:
            got = (entry.get("dtype"), entry.get("shape")) if isinstance(entry, dict) else entry
            raise ValueError(f"file: tensor {name} must be F32 shaped {shape}, got {str(got)[:60]}")
    return kind, head_dim, num_features, tuple(heads)


def load_map(path) -> FeatureMap:
    """A map written by ``save_map``. The file's size, header and every tensor's shape are
    checked before any tensor is read; non-finite parameters are refused."""
    from safetensors.torch import load_file
    meta, entries = read_header(path)
    kind, head_dim, num_features, heads = check_header(meta, entries)
    try:
        tensors = load_file(str(path))
    except Exception as exc:          # a truncated or corrupt body: one sentence, not a traceback
        raise ValueError(f"file: cannot read its tensors ({type(exc).__name__})") from None
    if not all(torch.isfinite(t).all() for t in tensors.values()):
        raise ValueError("file: the map holds NaN or infinite parameters")
    fmap = KINDS[kind](head_dim, num_features, heads=heads)
    fmap.load_state_dict(tensors)
    fmap.requires_grad_(False)
    fmap.info = {k: v for k, v in meta.items() if k not in ("kind", "head_dim", "num_features", "heads")}
    return fmap


# The models maps ship for, by the short name their files carry; the embedded MiniLM first.
PRETRAINED_MODELS = {"all-MiniLM-L6-v2": "minilm", "SmolLM2-135M": "smollm2"}
DEFAULT_PRETRAINED_MODEL = "all-MiniLM-L6-v2"


def pretrained_path(kind: str, layer: int, model: str = DEFAULT_PRETRAINED_MODEL) -> Path:
    """Where the shipped map for every head of ``model``'s ``layer`` lives
    (``scripts/train_lecture_maps.py``); ValueError for a model no map ships for."""
    if model not in PRETRAINED_MODELS:
        raise ValueError(f"model: maps ship for {', '.join(PRETRAINED_MODELS)} only, got {str(model)[:40]!r}")
    return PRETRAINED_DIR / f"{check_kind(kind)}-{PRETRAINED_MODELS[model]}-layer{int(layer)}.safetensors"


_pretrained: dict = {}


def pretrained(kind: str, layer: int, head=None, model: str = DEFAULT_PRETRAINED_MODEL) -> FeatureMap | None:
    """The shipped trained map of ``kind`` for ``model``'s ``layer`` and ``head`` (a one-head
    map), or for every head of the layer (``head`` None: head dimension first); None when
    none is shipped for that model, layer or head. ``model`` defaults to the embedded
    MiniLM; the causal SmolLM2's maps were trained against its causal softmax. Loaded once
    per process."""
    if model not in PRETRAINED_MODELS:
        return None
    path = pretrained_path(kind, layer, model)
    if path not in _pretrained:
        _pretrained[path] = load_map(path) if path.exists() else None
    layer_map = _pretrained[path]
    if layer_map is None:
        return None
    if head is None:
        return layer_map
    if not 0 <= int(head) < layer_map.heads[0]:
        return None
    return layer_map.select(int(head)).requires_grad_(False)
