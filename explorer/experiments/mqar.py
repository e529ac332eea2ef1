"""Associative recall (MQAR) learned by tiny models: what each mechanism's state can hold.

The task (Zoology, Arora et al. 2023, scaled to two CPU cores): a sequence opens with
``pairs`` key-value pairs written as tokens, k_1 v_1 k_2 v_2 ..., then asks every key once
again, in a random order, at random places in the rest of the sequence (filler tokens in
between). At each place a key is asked, the model must output that key's value. Keys are
distinct within a sequence, so every question has one answer, and nothing but the pairs
seen earlier can give it: accuracy is recall.

The model: token embedding, two blocks of [mixer + MLP] (pre-norm, residual), a read-out
to the vocabulary. Every mixer projects x to q, k, v after a short causal convolution
(Based, GLA, DeltaNet all have one; it lets a key see the token before it, so a value can be
bound to its key without positions) and calls a registered mechanism's own fast form
(``explorer.mechanisms``), the same forms the float64 loops hold, so what is trained here is
what the app draws. Linear attention comes with three feature maps: elu+1 (``linear``),
Taylor-2 (``based``, as Based has it) and Hedgehog's learned map (``hedgehog``, its (W, b)
trained with the model from the identity). ``sliding_window`` is softmax over the last ``WINDOW`` keys
(``linearize.attention.windowed_attention`` with no kernel part); ``hybrid`` is linear
attention (elu+1) in the first block and softmax in the second.

The state a model keeps to go on decoding, in bytes (float32), summed over its layers:
softmax keeps its KV cache, 2 N d numbers at the task's length N; a sliding window 2 w d; a
kernel recurrence S (m x d_v per head, m its feature count) and its normaliser z (m per head); the delta
rule S alone; every layer also keeps its convolution's last ``CONV - 1`` inputs.

Training is priced before it starts (``price``: refused over the limit) and asks its stop
signal at every step.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import asdict, dataclass, replace

import torch
from torch import nn
from torch.nn import functional as F

from .. import maps, mechanisms, stopping
from ..core.feature_maps import SPECS
from ..linearize.attention import windowed_attention
from ..measure import cost
from ..mechanisms.gla.gates import TAU
from ..mechanisms.recurrence import unit
from ..text import Message

# The mixers a model can have, in the order the table and the figure show them.
MIXERS = ("softmax", "sliding_window", "linear", "based", "hedgehog", "retnet", "gla", "scalar_gate",
          "deltanet", "gated_deltanet", "hybrid")
KERNEL = ("linear", "based", "hedgehog", "retnet", "gla", "scalar_gate")   # features, a normaliser
# The kernel mixers whose features are not elu+1: their feature map (``explorer.maps``).
FEATURE_MAPS = {"based": "taylor2", "hedgehog": "hedgehog"}
DELTA = ("deltanet", "gated_deltanet")                  # unit keys, no normaliser
WINDOW = 8             # the sliding window's keys: half the pairs' span
CONV = 3               # the short convolution's taps
FILLER = 0             # the token between questions
IGNORED = -100         # the label of a position that asks nothing
F32 = 4


@dataclass(frozen=True)
class Task:
    """One MQAR setting. Token 0 is the filler; keys are 1 .. vocab/2 - 1, values vocab/2 .. vocab - 1."""

    vocab: int = 64
    length: int = 32
    pairs: int = 8

    def __post_init__(self):
        if self.vocab < 8 or self.vocab % 2:
            raise ValueError(f"vocab: expected an even number >= 8, got {self.vocab}")
        if self.pairs < 1 or self.pairs > self.vocab // 2 - 1:
            raise ValueError(f"pairs: expected 1 .. {self.vocab // 2 - 1}, got {self.pairs}")
        if self.length < 3 * self.pairs:
            raise ValueError(f"length: {self.pairs} pairs and their questions need >= {3 * self.pairs} tokens")

    @property
    def keys(self) -> range:
        return range(1, self.vocab // 2)

    @property
    def values(self) -> range:
        return range(self.vocab // 2, self.vocab)


def sequences(task: Task, count: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` MQAR sequences drawn with ``generator``: (tokens, labels), both (count, length).

    labels hold the value asked for at each question, ``IGNORED`` everywhere else."""
    p, n = task.pairs, task.length
    key_pool, value_pool = len(task.keys), len(task.values)
    # Distinct keys: the first p of a random permutation of the key tokens, per sequence.
    keys = torch.rand(count, key_pool, generator=generator).argsort(-1)[:, :p] + task.keys.start
    values = torch.randint(value_pool, (count, p), generator=generator) + task.values.start
    tokens = torch.full((count, n), FILLER, dtype=torch.long)
    labels = torch.full((count, n), IGNORED, dtype=torch.long)
    tokens[:, 0:2 * p:2], tokens[:, 1:2 * p:2] = keys, values
    # Questions: the p keys in a random order, at p random places after the pairs, in order.
    asked = torch.rand(count, p, generator=generator).argsort(-1)
    places = torch.rand(count, n - 2 * p, generator=generator).argsort(-1)[:, :p].sort(-1).values + 2 * p
    rows = torch.arange(count).unsqueeze(-1)
    tokens[rows, places] = keys.gather(1, asked)
    labels[rows, places] = values.gather(1, asked)
    return tokens, labels


@dataclass(frozen=True)
class ModelShape:
    """A model: its mixer (``MIXERS``), width d (the model's and the mixer's) split into heads
    of ``head_dim``. Small heads keep a recurrent state small (heads x head_dim^2 numbers): the
    width then moves the state along the figure's axis."""

    mixer: str = "softmax"
    width: int = 32
    head_dim: int = 4
    layers: int = 2

    def __post_init__(self):
        if self.mixer not in MIXERS:
            raise ValueError(f"mixer: expected one of {', '.join(MIXERS)}, got {str(self.mixer)[:40]!r}")
        if self.head_dim < 1 or self.width < self.head_dim or self.width % self.head_dim:
            raise ValueError(f"width, head_dim: the width ({self.width}) must split into heads of {self.head_dim}")
        if self.layers < 2 and self.mixer == "hybrid":
            raise ValueError("layers: the hybrid needs 2 or more layers")

    @property
    def heads(self) -> int:
        return self.width // self.head_dim

    def layer_mixers(self) -> tuple[str, ...]:
        """Each block's mixer: the hybrid has linear attention first, softmax last."""
        if self.mixer == "hybrid":
            return ("linear",) * (self.layers - 1) + ("softmax",)
        return (self.mixer,) * self.layers


def mechanism(mixer: str) -> str:
    """The registered mechanism a (non-softmax-window) mixer runs: the three feature maps
    of linear attention are one mechanism."""
    return "linear" if mixer in FEATURE_MAPS else mixer


def feature_count(mixer: str, head_dim: int) -> int:
    """m, the features a kernel mixer writes per key (elu+1: m = d_h)."""
    name = FEATURE_MAPS.get(mixer, "elu1")
    return SPECS[name].feature_count(head_dim)


def layer_state_bytes(mixer: str, width: int, heads: int, length: int) -> int:
    """The float32 bytes one layer keeps to decode the next token after ``length`` tokens."""
    head_dim = width // heads
    conv = (CONV - 1) * width
    if mixer == "softmax":
        kept = 2 * length * width                                  # the KV cache
    elif mixer == "sliding_window":
        kept = 2 * min(WINDOW, length) * width
    elif mixer in KERNEL:
        m = feature_count(mixer, head_dim)
        kept = heads * (m * head_dim + m)                          # S and its normaliser z
    elif mixer in DELTA:
        kept = heads * head_dim * head_dim
    else:
        raise ValueError(f"mixer: {mixer!r} is one block's mixer, not a model's")
    return F32 * (kept + conv)


def state_bytes(shape: ModelShape, task: Task) -> int:
    """The state a model keeps at the end of a task's sequence, summed over its layers."""
    return sum(layer_state_bytes(m, shape.width, shape.heads, task.length) for m in shape.layer_mixers())


class Mixer(nn.Module):
    """Causal sequence mixing by one mechanism: (B, N, d) -> (B, N, d)."""

    def __init__(self, mixer: str, width: int, heads: int):
        super().__init__()
        self.mixer, self.heads = mixer, heads
        self.conv = nn.Conv1d(width, width, CONV, groups=width, padding=CONV - 1)
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.out = nn.Linear(width, width, bias=False)
        # Data-dependent gates and writing strengths, as the papers compute them from x_t.
        if mixer == "gla":
            self.gate = nn.Linear(width, width)
        elif mixer in ("scalar_gate", "gated_deltanet"):
            self.gate = nn.Linear(width, heads)
        if mixer in DELTA:
            self.beta = nn.Linear(width, heads)
        if mixer in FEATURE_MAPS:
            per_head = {"heads": (heads,)} if mixer == "hedgehog" else {}      # a learned (W, b) per head
            self.features = maps.create(FEATURE_MAPS[mixer], width // heads, **per_head)

    def inputs(self, x: torch.Tensor) -> dict:
        """What the mechanism reads: q, k, v (B, H, N, d_h) as it takes them, and its parameters."""
        b, n, d = x.shape
        h = self.heads
        shifted = self.conv(x.transpose(1, 2))[..., :n].transpose(1, 2)       # causal: drop the look-ahead
        q, k, v = (t.reshape(b, n, h, d // h).transpose(1, 2) for t in self.qkv(shifted).chunk(3, -1))
        params = {}
        if self.mixer in FEATURE_MAPS:
            q, k = self.features(q, is_query=True), self.features(k)
        elif self.mixer in KERNEL:
            q, k = F.elu(q) + 1, F.elu(k) + 1
        if self.mixer == "retnet":
            params = mechanisms.get("retnet").default_params(q, k)               # each head's fixed gamma
        elif self.mixer == "gla":
            params = {"log_decay": (F.logsigmoid(self.gate(shifted)) / TAU).reshape(b, n, h, d // h).transpose(1, 2)}
        elif self.mixer == "scalar_gate":
            params = {"log_decay": (F.logsigmoid(self.gate(shifted)) / TAU).transpose(1, 2).unsqueeze(-1)}
        elif self.mixer in DELTA:
            q, k = unit(q), unit(k)
            params = {"beta": torch.sigmoid(self.beta(shifted)).transpose(1, 2)}
            if self.mixer == "gated_deltanet":
                params["log_decay"] = (F.logsigmoid(self.gate(shifted)) / TAU).transpose(1, 2)
        return {"q": q, "k": k, "v": v, **params}

    def attend(self, q, k, v, **params) -> torch.Tensor:
        """(B, H, N, d_h): the mechanism's own fast form (the sliding window: the windowed form)."""
        if self.mixer == "sliding_window":
            b, h, n, e = q.shape
            nothing = q.new_zeros(b * h, n, 1)                                   # no kernel part
            flat = (t.reshape(b * h, n, e) for t in (q, k, v))
            return windowed_attention(*flat, nothing, nothing, WINDOW, e ** -0.5).reshape(b, h, n, e)
        # The delta rule's chunked form writes into preallocated blocks, which autograd cannot
        # follow: its recurrent form (the same outputs, held to the same loop) trains.
        method = "recurrent" if self.mixer in DELTA else "chunked"
        with warnings.catch_warnings():     # its input check reads the largest gate as a number
            warnings.filterwarnings("ignore", message="Converting a tensor with requires_grad")
            return mechanisms.get(mechanism(self.mixer)).output(q, k, v, method=method, **params)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        o = self.attend(**self.inputs(x))
        return self.out(o.transpose(1, 2).reshape(b, n, d))


class Block(nn.Module):
    def __init__(self, mixer: str, width: int, heads: int):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.mixer = Mixer(mixer, width, heads)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x):
        x = x + self.mixer(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class RecallModel(nn.Module):
    """Embedding, blocks of [mixer + MLP], a read-out to the vocabulary: (B, N) -> (B, N, vocab)."""

    def __init__(self, shape: ModelShape, vocab: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, shape.width)
        self.blocks = nn.ModuleList(Block(m, shape.width, shape.heads) for m in shape.layer_mixers())
        self.norm = nn.LayerNorm(shape.width)
        self.head = nn.Linear(shape.width, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


@dataclass(frozen=True)
class Training:
    """How a model is trained: Adam, ``steps`` batches of fresh sequences, judged on ``test`` others."""

    steps: int = 500
    batch: int = 32
    lr: float = 1e-2
    test: int = 512
    seed: int = 0


def accuracy(model: RecallModel, tokens: torch.Tensor, labels: torch.Tensor) -> float:
    """The share of questions answered with the right value (arg max over the vocabulary)."""
    with torch.no_grad():
        asked = labels != IGNORED
        return float((model(tokens).argmax(-1)[asked] == labels[asked]).float().mean())


# Seconds one training step takes per (sequence x token) at width 32, on one thread of the
# shared 2-core machine: the delta rule's token loop, the slowest mixer, took 45 s for 500
# steps of 32 x 32 tokens (8.8e-5); wider models cost more. Pricing errs high, not low.
SECONDS_PER_TOKEN = 1.0e-4
BYTES_PER_ACTIVATION = 40 * F32      # the saved activations of one token and one width unit


def price(shape: ModelShape, task: Task, training: Training) -> cost.Estimate:
    """What training one model costs: peak bytes and seconds, before it starts."""
    tokens = training.batch * task.length
    scale = max(1.0, shape.width / 32)
    seconds = training.steps * tokens * SECONDS_PER_TOKEN * scale * shape.layers / 2
    cells = training.batch * shape.heads * task.length ** 2          # at most one N x N map per head
    bytes_ = shape.layers * tokens * shape.width * BYTES_PER_ACTIVATION + 4 * F32 * cells + cost.SLACK_BYTES
    what = Message("mqar.what", mixer=Message(f"mqar.mixer.{shape.mixer}"), width=shape.width,
                   steps=f"{training.steps:,}", batch=training.batch)
    return cost.Estimate(int(bytes_), seconds, what, Message("mqar.lower"))


@dataclass
class RecallResult:
    """One trained model: its accuracy on held-out sequences and the state it keeps."""

    mixer: str
    width: int
    heads: int
    seed: int
    accuracy: float
    state_bytes: int
    params: int
    seconds: float
    losses: list
    skipped: int = 0           # optimiser steps skipped because their gradients overflowed
    diverged: int | None = None  # the step at which the forward pass turned NaN (accuracy: NaN)

    def as_dict(self) -> dict:
        return asdict(self)


def train(shape: ModelShape, task: Task = Task(), training: Training = Training(), should_stop=None,
          limit_seconds: float | None = None, on_step=None) -> RecallResult:
    """Train one model from ``training.seed`` (its weights and its data) and judge it.

    Refused before anything is built when ``price`` is over the limit (``cost.Refusal``);
    ``should_stop`` is asked at every step (``stopping.check``). ``on_step(step, loss)`` sees
    the progress."""
    return fit(shape, task, training, should_stop, limit_seconds, on_step)[0]


def fit(shape: ModelShape, task: Task = Task(), training: Training = Training(), should_stop=None,
        limit_seconds: float | None = None, on_step=None) -> tuple[RecallResult, RecallModel]:
    """``train``, and the trained model with it (in eval mode): what the app inspects."""
    cost.check(price(shape, task, training), limit_seconds=limit_seconds)
    data = torch.Generator().manual_seed(10_000 + training.seed)
    held_out = sequences(task, training.test, torch.Generator().manual_seed(1_000_000 + training.seed))
    with torch.random.fork_rng():                 # the weights' draw, without touching the caller's
        torch.manual_seed(training.seed)
        model = RecallModel(shape, task.vocab)
    optimiser = torch.optim.Adam(model.parameters(), lr=training.lr)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=training.lr, total_steps=training.steps,
                                                   pct_start=0.1)
    losses, skipped, diverged, start = [], 0, None, time.perf_counter()
    for step in range(training.steps):
        stopping.check(should_stop)
        tokens, labels = sequences(task, training.batch, data)
        try:
            loss = F.cross_entropy(model(tokens).flatten(0, 1), labels.flatten(), ignore_index=IGNORED)
        except ValueError as exc:
            # A kernel normaliser q.z underflowed to 0 (elu+1 features of a very negative
            # input are 0 in float32): the mechanism refuses the NaN. The run has diverged;
            # it is recorded as such, with no accuracy.
            if "NaN or infinite" not in str(exc):
                raise
            diverged = step
            break
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        # A step whose gradients overflowed would turn every weight into NaN for good: it is
        # skipped and counted (a run that never overflows is untouched by this).
        if all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None):
            optimiser.step()
        else:
            skipped += 1
        schedule.step()
        losses.append(round(float(loss.detach()), 4))
        if on_step is not None:
            on_step(step, losses[-1])
    model.eval()
    judged = float("nan") if diverged is not None else accuracy(model, *held_out)
    return RecallResult(shape.mixer, shape.width, shape.heads, training.seed, judged,
                        state_bytes(shape, task), sum(p.numel() for p in model.parameters()),
                        time.perf_counter() - start, losses, skipped, diverged), model


def chance(task: Task) -> float:
    """The accuracy of guessing a value token."""
    return 1.0 / len(task.values)


def with_seed(training: Training, seed: int) -> Training:
    return replace(training, seed=int(seed))


def spread_holds(value: float, shipped: list[float], slack: float = 0.02) -> bool:
    """Whether ``value`` lies within the shipped seeds' range, widened by ``slack``."""
    return min(shipped) - slack <= value <= max(shipped) + slack and math.isfinite(value)
