"""What a request will cost, decided before anything is allocated.

Two models live here, one for every path of the app:

- the FLOP model shared by the metrics table, the benchmark and the complexity plots
  (``flop_counts``): multiply-adds count 2 FLOPs, O(N d) elementwise work is ignored;
  quadratic (softmax or any N x N map): Q K^T is 2 N^2 d, A V is 2 N^2 d_v; linear:
  phi(K)^T V is 2 N m d_v, phi(Q) (phi(K)^T V) is 2 N m d_v, plus the normaliser phi(Q) z
  and z itself, 4 N m. A causal quadratic map needs only the lower triangle, about half;
  the linear form does the same work causal or not (the chunked form adds 2 N C (m + d_v)
  inside chunks).
- the request model (``estimate`` and ``check``): the peak memory and the time of what a
  view is about to compute, from the feature count each map really has (Taylor-2 has
  1 + d + d(d+1)/2 features, FAVOR+ and trig RFF m, Hedgehog m, cosFormer 2d), the N x N
  maps, and the float64 copies the metrics make. Every view calls
  ``check(estimate(path, **shape))`` before it allocates; a refusal is a ValueError with
  one plain sentence that says what is needed, the limit, and what to lower.

The byte counts are calibrated against measured peaks (tests/engine/test_cost.py holds them to
``explorer.measure.peak_memory.measure_peak_bytes``: the estimate must not be below what a call
really takes, nor wildly above it). Seconds come from the FLOPs at a deliberately low rate, so a
busy server still meets them.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from ..catalog import SWEEP_METHODS as METHODS, map_label, map_name, map_specs
from ..core.feature_maps import REFERENCE, SPECS
from ..checks import check_positive_int
from ..core.blocks import BLOCK_ELEMENTS
from ..text import Message, say_error
from . import budget


def flop_counts(n: int, head_dim: int, feature_dim: int | None = None, value_dim: int | None = None,
                causal: bool = False, chunk_size: int | None = None) -> dict:
    """FLOPs of the quadratic and the linear path for one head; m defaults to d."""
    n = check_positive_int(n, "n")
    d = check_positive_int(head_dim, "head_dim")
    m = d if feature_dim is None else check_positive_int(feature_dim, "feature_dim")
    dv = d if value_dim is None else check_positive_int(value_dim, "value_dim")
    quadratic = 2 * n * n * (d + dv)
    if causal:
        quadratic = quadratic * (n + 1) // (2 * n)
    linear = 4 * n * m * dv + 4 * n * m
    if causal and chunk_size:
        linear += 2 * n * min(chunk_size, n) * (m + dv)
    return {"quadratic_flops": quadratic, "linear_flops": linear, "ratio": quadratic / linear}


# ------------------------------------------------------------ the timed forms' own cost

QUADRATIC = frozenset({"softmax_naive", "sdpa"})
CHUNK_SIZE = 64


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(Message("cost.err_method", choices=", ".join(METHODS), method=repr(method)))


def method_flops(method: str, n: int, head_dim: int, feature_dim: int | None = None,
                 causal: bool = False, chunk_size: int = CHUNK_SIZE) -> int:
    """FLOPs of one call by the shared model. A causal quadratic form counts the lower
    triangle only, even where (naive softmax) the code computes the whole square."""
    model = flop_counts(n, head_dim, feature_dim, causal=causal,
                        chunk_size=chunk_size if method == "linear_chunked" else None)
    return int(model["quadratic_flops"] if method in QUADRATIC else model["linear_flops"])


def estimate_memory_bytes(method: str, n: int, head_dim: int, feature_dim: int | None = None,
                          batch_heads: int = 1) -> int:
    """A conservative estimate of a call's extra peak memory (float32, beyond its inputs).

    Used to skip runs before they start (the app's complexity tab uses it as a guard), so
    it errs high: it assumes the causal mask where a method can have one.
    """
    _check_method(method)
    n = check_positive_int(n, "n")
    d = check_positive_int(head_dim, "head_dim")
    m = d if feature_dim is None else check_positive_int(feature_dim, "feature_dim")
    bh = check_positive_int(batch_heads, "batch_heads")
    f = 4  # bytes per float32
    # Allocator and thread-arena overhead: measured peaks wobble by a few MiB at any N.
    slack = 8 << 20
    if method == "softmax_naive":
        # Logits, their scaled copy (or the masked copy) and the softmax, plus a bool mask
        # and its tril copy; only two float squares live at once but we count three.
        per_head = 3 * n * n * f + 2 * n * n + 2 * n * d * f
    elif method == "sdpa":
        # Flash kernel (4-D inputs): output, log-sum-exp, and per-thread tiles of a few MiB.
        per_head = n * (d + 1) * f * 2
        return bh * per_head + 2 * slack
    elif method == "linear_parallel":
        # phi(Q), phi(K), elu's temporary, numerator, output.
        per_head = n * (3 * m + 3 * d + 2) * f
    elif method == "linear_chunked":
        # Output plus one block's temporaries (a block holds at most BLOCK_ELEMENTS per
        # array), plus input validation's transient 7 bytes per element (isfinite's abs
        # copy and masks), which is the one O(N d) cost besides the output.
        block = min(n, max(CHUNK_SIZE, BLOCK_ELEMENTS // max(CHUNK_SIZE, m, d)))
        per_head = n * d * (f + 7) + 16 * block * max(CHUNK_SIZE, m, d) * f
    elif method == "linear_recurrent":
        per_head = n * (3 * m + 2 * d) * f + 4 * m * d * f
    else:  # linear_cumsum: every prefix state, and the cumsum's copy of it
        per_head = n * (2 * m * d + 3 * m + 2 * d) * f
    return bh * per_head + slack


# ---------------------------------------------------------------------------------------
# Limits: one request at a time may use this much (two run at once on the server).
# ---------------------------------------------------------------------------------------

def _env_float(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if math.isfinite(value) and value > 0 else default


LIMIT_BYTES = int(_env_float("EXPLORER_REQUEST_MEMORY_GB", 2.0) * 1e9)
LIMIT_SECONDS = _env_float("EXPLORER_REQUEST_SECONDS", 120.0)
# Training streams its progress and is stopped when its visitor leaves; this is its hard deadline.
TRAINING_SECONDS = _env_float("EXPLORER_TRAINING_SECONDS", 300.0)
# The rate seconds are estimated at: a fraction of a quiet 2-core machine's dense matmul
# (100-200 GFLOP/s), since the N x N paths are elementwise-heavy and the CPU is shared.
ASSUMED_GFLOPS = 2.0

F32, F64 = 4, 8
# Bytes per attention cell (heads x N x N) of the N x N paths, measured (see module doc):
# the softmax map and its logits (float32), and the metrics' float64 reference and ranks.
REFERENCE_BYTES_PER_CELL = 48
# One approximate map: its weights and normalised copy (float32), then the metrics'
# float64 copies of it (the map, its errors, its ranks) while it is compared.
MAP_BYTES_PER_CELL = 48
# Features phi(Q), phi(K) and the temporaries of building them (Taylor-2 gathers two
# index copies and their product before concatenating).
FEATURE_COPIES = 5
# Allocator and arena overhead: measured peaks wobble by several MiB at any size.
SLACK_BYTES = 16 << 20
# Elementwise work per attention cell of the metrics (sorting for ranks, logs, several passes).
METRIC_FLOPS_PER_CELL = 120


class Phrase(Message):
    """A phrase of a refusal: a message (its English words as the string) whose ``map`` value,
    a registry name or catalogue id, is said as the page names the map."""

    def __new__(cls, key: str, /, **values):
        if "map" in values:
            values["map"] = _map_words(values["map"])
        return super().__new__(cls, key, **values)


def said(exc: Exception, lang: str = "en") -> str:
    """An exception's sentence in ``lang``: a Refusal speaks it, anything else says its text."""
    return say_error(exc, lang)


class Refusal(ValueError):
    """A request over this server's limit: one message, in English as the exception's text
    and in the page's language through ``say(lang)``."""

    def __init__(self, key: str, estimate: "Estimate", need: str, limit: str):
        self.key, self.estimate, self.need, self.limit = key, estimate, need, limit
        self.message = Message(key, what=estimate.what, need=need, limit=limit, lower=estimate.lower)
        super().__init__(str(self.message))

    def say(self, lang: str = "en") -> str:
        return self.message.say(lang)


@dataclass(frozen=True)
class Estimate:
    """The peak memory and the time a request is expected to take, and what it is."""

    bytes: int
    seconds: float
    what: str                    # "Taylor-2 at N = 2048, d = 1024 (525,825 features)" (a Phrase)
    lower: str = Phrase("cost.lower_n")   # what to lower to make it fit, e.g. "d or N"

    def __add__(self, other: "Estimate") -> "Estimate":
        return Estimate(self.bytes + other.bytes, self.seconds + other.seconds, self.what, self.lower)


def human_bytes(n: float) -> str:
    """1.9 GB, 512 MB: decimal units, as the messages read them aloud."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            value = n / size
            return f"{value:.1f} {unit}" if value < 100 else f"{value:,.0f} {unit}"
    return f"{int(n)} bytes"


def check(estimate: Estimate, limit_bytes: int | None = None, limit_seconds: float | None = None) -> Estimate:
    """Raise ValueError with one plain sentence when ``estimate`` is over a limit; else return it.

    Inside a request (``budget.request()``) the estimate's bytes are then claimed from the
    server's one budget (see explorer.measure.budget), which refuses what does not fit."""
    _within_limits(estimate, limit_bytes, limit_seconds)
    budget.claim(estimate.bytes, estimate.seconds)
    return estimate


def fits(estimate: Estimate, limit_bytes: int | None = None, limit_seconds: float | None = None) -> bool:
    """Whether ``estimate`` is within one request's limits (asks only; claims nothing)."""
    try:
        _within_limits(estimate, limit_bytes, limit_seconds)
        return True
    except ValueError:
        return False


def _within_limits(estimate: Estimate, limit_bytes: int | None, limit_seconds: float | None) -> None:
    limit_bytes = LIMIT_BYTES if limit_bytes is None else limit_bytes
    limit_seconds = LIMIT_SECONDS if limit_seconds is None else limit_seconds
    if estimate.bytes > limit_bytes:
        raise Refusal("cost.over_memory", estimate, human_bytes(estimate.bytes), human_bytes(limit_bytes))
    if estimate.seconds > limit_seconds:
        raise Refusal("cost.over_time", estimate, f"{estimate.seconds:,.0f}", f"{limit_seconds:,.0f}")


# ---------------------------------------------------------------------------------------
# Feature counts, from the maps' specs by name or catalogue label (no torch needed).
# ---------------------------------------------------------------------------------------

def feature_count(map_name: str, head_dim: int, m: int | None = None) -> int:
    """The number of features the map really has for head dimension ``head_dim``, from its
    spec (``explorer.core.feature_maps``, which the map classes read too); softmax has none.

    ``map_name`` is a registry name ("taylor2") or a catalogue id ("favor_plus_orthogonal").
    """
    name = _registry_name(map_name)
    if name == REFERENCE:
        return 0
    return SPECS[name].feature_count(head_dim, m)


def _registry_name(map_id: str) -> str:
    if map_id == REFERENCE or map_id in SPECS:
        return map_id
    choice = map_specs().get(map_id)
    if choice is None:
        raise ValueError(Message("common.err_map_unknown", name=repr(map_id)))
    return choice.name


def _map_words(map_id):
    """The words of the map a registry name or catalogue id names (anything else as it is)."""
    return map_name(map_id) if map_id in SPECS else map_label(map_id)


# ---------------------------------------------------------------------------------------
# The paths
# ---------------------------------------------------------------------------------------

def estimate(path: str, **shape) -> Estimate:
    """Peak memory and time of ``path`` for the given shape (keywords per path below).

    sample:     n, d, heads=1, layers=1                Q, K, V of a random or uploaded sample
    reference:  n, heads=1                             softmax, logits and the metrics' reference
    map:        n, d, label, heads=1, m=None           one kernel map, its features and metrics
    maps:       n, d, heads=1, maps=(), m=None         the maps tab (or any N x N view of several maps)
    overview:   n, d, layers, heads, label, m=None     one metric of one map on every head
    quality:    n, d, heads=1, labels, ms, seeds       random-feature error against m
    state:      n, d, dv=d, label, m=None, kinds=3     the recorded recurrent state per decay kind
    complexity: ns, d, m, methods, repeats=3           the live sweep (bench's own per-run estimate)
    learn:      n, layers, heads, d, m, steps, texts, seeds   training a learned map, every seed
    hybrid:     n, layers, heads, d, m, texts, budget  linear layers in the embedded model
    linearize_train: n, layers, heads, kv_heads, d, m, steps, batch, sequences, kind, exact, token_flops
                                                       a linearized set trained live, capture included
    lecture:    same as maps (a chapter's N x N figures)
    mechanism:  n, d, form, heads=1, fit_steps=0, label one mechanism's exact N x N map and metrics
    """
    if path not in _PATHS:
        raise ValueError(Message("cost.err_path", choices=", ".join(_PATHS), path=repr(path)))
    found = _PATHS[path](**shape)
    return Estimate(found.bytes + SLACK_BYTES, found.seconds, found.what, found.lower)


def _seconds(flops: float) -> float:
    return flops / (ASSUMED_GFLOPS * 1e9)


def _sample(n, d, heads=1, layers=1) -> Estimate:
    elements = 3 * layers * heads * n * d
    return Estimate(elements * F32 * 2, _seconds(elements * 10),
                    Phrase("cost.what_sample", n=f"{n:,}", d=f"{d:,}", heads=layers * heads), Phrase("cost.lower_n_or_d"))


def _reference(n, heads=1, causal=False) -> Estimate:
    cells = heads * n * n
    return Estimate(cells * REFERENCE_BYTES_PER_CELL, _seconds(cells * METRIC_FLOPS_PER_CELL),
                    Phrase("cost.what_reference_heads", n=f"{n:,}", heads=heads) if heads > 1
                    else Phrase("cost.what_reference", n=f"{n:,}"),
                    Phrase("cost.lower_n_mean") if heads > 1 else Phrase("cost.lower_n"))


def _map(n, d, label, heads=1, m=None, causal=False) -> Estimate:
    features = feature_count(label, d, m)
    if features == 0:                           # softmax: the reference pays for it
        return Estimate(0, 0.0, label)         # never over a limit: never said
    cells = heads * n * n
    nbytes = heads * n * features * F32 * FEATURE_COPIES + cells * MAP_BYTES_PER_CELL
    flops = 2 * cells * features + 2 * heads * n * features * d + cells * METRIC_FLOPS_PER_CELL
    name = _registry_name(label)
    if name == "sliding_window":                # the window's own N x N logits and weights
        nbytes += 3 * cells * F32
    what = Phrase("cost.what_map", map=label, n=f"{n:,}", d=f"{d:,}", features=f"{features:,}")
    spec = SPECS[name]
    # A count fixed by d and above d itself (Taylor-1, Taylor-2, cosFormer, ...) falls with d.
    fixed = not spec.takes_m and spec.feature_count(d) > d
    lower = Phrase("cost.lower_d_or_n" if fixed else "cost.lower_m_or_n" if spec.takes_m else "cost.lower_n")
    return Estimate(nbytes, _seconds(flops), what, lower)


def _is_random(label: str) -> bool:
    name = _registry_name(label)
    return name != REFERENCE and SPECS[name].random


def _maps(n, d, heads=1, maps=(), m=None, causal=False, seeds=1) -> Estimate:
    """The shared reference plus the largest single map (maps are computed one at a time;
    softmax's own metrics row costs as much as comparing one map). ``seeds``: each
    random-feature map is drawn that many times (the spread over seeds), one at a time, so
    it multiplies their time and not the peak memory."""
    base = _reference(n, heads, causal)
    own = Estimate(heads * n * n * MAP_BYTES_PER_CELL, 0.0, base.what, base.lower)
    parts = [own] + [_map(n, d, label, heads, m, causal) for label in maps]
    draws = [1] + [max(1, int(seeds)) if _is_random(label) else 1 for label in maps]
    worst = max(parts, key=lambda e: e.bytes)
    seconds = base.seconds + sum(p.seconds * k for p, k in zip(parts, draws))
    return Estimate(base.bytes + worst.bytes, seconds, worst.what, worst.lower)


# How a mechanism's map is formed (``form``): "per_feature" decays form an N x N x d tensor of
# decays (B_i - B_j and its exp, float64) before summing it; the "delta" rule forms its N x N
# triangular solve; "per_token" decays (or none) an N x N product.
MECHANISM_FORMS = ("per_feature", "delta", "per_token")


def _mechanism(n, d, form, heads=1, fit_steps=0, label=None) -> Estimate:
    """A mechanism's exact attention matrix (explorer.mechanisms, ``attention_map``), one head
    after another's metrics: per-feature decays hold three N x N x d float64 tensors (four priced), the
    delta rule six N x N ones and an N^3 solve; GLA's fitted gates run ``fit_steps`` steps of
    a forward and backward pass over N x N x d (about six such tensors held)."""
    if form not in MECHANISM_FORMS:
        raise ValueError(Message("cost.err_form", choices=", ".join(MECHANISM_FORMS), form=repr(str(form)[:40])))
    cells = heads * n * n
    if form == "per_feature":
        nbytes, flops = cells * d * F64 * 4, cells * d * 6     # measured: 3.1 x N^2 d x 8 bytes
    elif form == "delta":
        nbytes, flops = cells * F64 * 6, heads * n ** 3 + cells * d * 4
    else:
        nbytes, flops = cells * F64 * 4, cells * d * 2
    if fit_steps:
        nbytes = max(nbytes, n * n * d * F64 * 6)
        flops += fit_steps * cells * d * 30
    nbytes += cells * MAP_BYTES_PER_CELL
    flops += cells * METRIC_FLOPS_PER_CELL
    return Estimate(nbytes, _seconds(flops), Phrase("cost.what_mechanism", name=label or form, n=f"{n:,}", d=f"{d:,}"),
                    Phrase("cost.lower_n"))


def _overview(n, d, layers, heads, label, m=None, causal=False) -> Estimate:
    """All heads at once: the softmax map, the kernel map and the logits of every head,
    then one head's metrics at a time."""
    cells = layers * heads * n * n
    features = feature_count(label, d, m)
    nbytes = cells * 3 * F32 * 2 + layers * heads * n * features * F32 * FEATURE_COPIES \
        + n * n * (REFERENCE_BYTES_PER_CELL + MAP_BYTES_PER_CELL)
    flops = 2 * cells * (d + features) + cells * METRIC_FLOPS_PER_CELL * 2
    return Estimate(nbytes, _seconds(flops),
                    Phrase("cost.what_overview", heads=layers * heads, n=f"{n:,}", map=label, features=f"{features:,}"),
                    Phrase("cost.lower_n_text"))


def _quality(n, d, heads=1, labels=(), ms=(), seeds=1, causal=False) -> Estimate:
    """Per redraw: the kernel estimate in float64 (logits, exp, estimate: three squares and
    the features), and the normalised map with its metrics; the reference beside."""
    cells = heads * n * n
    m_max = max([int(x) + 1 for x in ms] or [1])
    per_draw = cells * (5 * F64 + MAP_BYTES_PER_CELL) + heads * n * m_max * (F64 + F32) * FEATURE_COPIES
    nbytes = _reference(n, heads, causal).bytes + per_draw
    draws = len(labels) * seeds
    flops = draws * sum(4 * cells * int(x) + cells * METRIC_FLOPS_PER_CELL for x in ms)
    return Estimate(nbytes, _seconds(flops), Phrase("cost.what_quality", n=f"{n:,}", maps=len(labels), seeds=seeds,
                                                    m=f"{m_max - 1:,}"), Phrase("cost.lower_quality"))


def _state(n, d, dv=None, label="elu1", m=None, kinds=3, lags=0, pairs=0, trials=16) -> Estimate:
    """state_trace keeps per-step norms and one (m x d_v) state at a time; the step view
    records every state up to t (N x m x d_v), and the features are N x m.

    With ``lags`` and ``pairs`` (the state tab) each update also runs two recall probes over
    ``lags`` + 1 steps and a capacity probe over ``pairs`` steps, ``trials`` states at a time,
    on width max(m, d) (the delta rule and HGRN2 store d-wide keys), and the delta rule's step
    view keeps what each step erases as well."""
    dv = d if dv is None else dv
    features = feature_count(label, d, m)
    width = max(features, d)
    recorded = n * width * dv * F32 * 3           # the states, the updates and the erased parts of the step view
    probes = trials * (lags + pairs + 2) * (width + d + dv) * F32 * 2 + trials * pairs * width * dv * F32
    nbytes = recorded + n * features * F32 * FEATURE_COPIES + n * features * F32 * 2 + probes
    flops = kinds * n * width * dv * 8 + n * width * dv * 4
    # The capacity reads: every stored key at each checkpoint, about 4 x pairs queries in all.
    flops += kinds * trials * width * dv * 8 * (2 * (lags + 1) + pairs) + kinds * trials * 4 * pairs * width * dv * 2
    return Estimate(nbytes, _seconds(flops),
                    Phrase("cost.what_state", map=label, n=f"{n:,}", features=f"{features:,}", dv=dv),
                    Phrase("cost.lower_n_or_m"))


def _complexity(ns, d, m, methods, repeats=3, batch_heads=1) -> Estimate:
    worst, flops = 0, 0
    for method in methods:
        for n in ns:
            worst = max(worst, estimate_memory_bytes(method, n, d, m, batch_heads))
            flops += method_flops(method, n, d, m) * (repeats + 2)
    inputs = 3 * max(ns) * d * F32 * batch_heads
    return Estimate(worst + inputs, _seconds(flops) / 20, Phrase("cost.what_sweep", n=f"{max(ns):,}", d=d, m=f"{m:,}"),
                    Phrase("cost.lower_n_max"))


def _learn(n=128, layers=6, heads=12, d=32, m=64, steps=300, texts=40, all_heads=False, kind="hedgehog",
           seeds=1) -> Estimate:
    """Training runs a padded batch of texts through every covered head: the logits, the
    softmax and the kernel map (float32, with gradients: x3) and the features. LUNA keeps
    three bases per feature (more copies) and trains a Hedgehog beside it (twice the steps).
    Each of ``seeds`` trains afresh, one after the other: the time is paid per seed, the
    memory once."""
    covered = layers * heads if all_heads else 1
    cells = texts * covered * n * n
    copies = 14 if kind == "luna" else 6
    nbytes = cells * F32 * 9 + texts * covered * n * m * F32 * copies   # measured: 1.05 GB at 72 heads, m = 512 (Hedgehog)
    flops = seeds * steps * (cells * (4 * m + 2 * d + 30)) * 3 * (2 if kind == "luna" else 1)
    what = (Phrase("cost.what_learn_seeds", texts=texts, heads=covered, m=m, steps=steps, seeds=seeds) if seeds > 1
            else Phrase("cost.what_learn", texts=texts, heads=covered, m=m, steps=steps))
    return Estimate(nbytes, _seconds(flops) / 10, what, Phrase("cost.lower_learn_seeds" if seeds > 1 else "cost.lower_learn"))


def _hybrid(n=128, layers=6, heads=12, d=32, m=64, texts=16, budget=2) -> Estimate:
    m = int(m) if isinstance(m, (int, float)) and m > 0 else 64
    budget = int(budget) if isinstance(budget, (int, float)) else 2
    runs = 1 + layers * max(1, budget)                 # greedy: every candidate layer per step
    cells = texts * heads * n * n
    nbytes = layers * cells * F32 * 3 + texts * heads * n * m * F32 * FEATURE_COPIES
    flops = runs * layers * (cells * (2 * m + 2 * d) + texts * n * 384 * 384 * 12)
    return Estimate(nbytes, _seconds(flops) / 10, Phrase("cost.what_hybrid", texts=texts, m=m),
                    Phrase("cost.lower_hybrid"))


# Attention transfer's batched matmuls and the capture forwards run far nearer the dense rate
# than the N x N views: measured 87-100 GFLOP/s (training steps) and about 270 GFLOP/s (SmolLM2
# forwards) on a quiet 2-core machine. Priced at half the slower of the two.
TRAINING_GFLOPS = 50.0


def _linearize_train(n=256, layers=30, heads=9, kv_heads=3, d=64, m=64, steps=50, batch=4, sequences=8,
                     kind="hedgehog", exact=False, token_flops=4e8, vocab=49_152) -> Estimate:
    """Every layer's inputs captured by one forward per sequence (stored in float16), then each
    layer's maps fitted by ``steps`` Adam steps on ``batch`` sequences: per head the two maps
    (2 N d m), the N x N kernel (2 N^2 m), its product with V (2 N^2 d) and, with exact keys,
    the softmax logits (2 N^2 d); backward about twice the forward. LUNA measured 1.7 times
    Hedgehog's step. ``token_flops`` is one token's forward through the model."""
    forward = 2 * n * d * m + 2 * n * n * m + 2 * n * n * d + (2 * n * n * d if exact else 0)
    step_flops = batch * heads * forward * 3 * (1.7 if kind == "luna" else 1.0)
    flops = sequences * n * token_flops + layers * steps * step_flops
    stored = sequences * layers * (2 * heads + 2 * kv_heads) * n * d * 2
    working = batch * heads * n * n * F32 * 12 + 2 * n * vocab * F32     # a step's N x N copies; a forward's logits
    return Estimate(stored + working, flops / (TRAINING_GFLOPS * 1e9),
                    Phrase("cost.what_linearize_train", layers=layers, sequences=sequences, n=n, steps=steps),
                    Phrase("cost.lower_linearize_train"))


_PATHS = {"sample": _sample, "reference": _reference, "map": _map, "maps": _maps, "overview": _overview,
          "quality": _quality, "state": _state, "complexity": _complexity, "learn": _learn, "hybrid": _hybrid,
          "lecture": _maps, "mechanism": _mechanism,
          "linearize_train": _linearize_train}
