"""The Linearize page: SmolLM2 with every layer but k linearized, judged against the original
on a short held-out sample, and the two models continuing one prompt side by side.

    sets() -> ["hedgehog:0", "hedgehog:16:1", ...]   the shipped trained sets, then the elu+1 baseline
    judge(set_id, keep, stop=) -> JudgeView         perplexity, top-1 agreement, KL vs the original
    generation_steps(prompt, new_tokens, set_id, keep, stop=) -> iterator of GenerationStep
    training_steps(kind, window, sinks, steps, stop=) -> iterator of TrainingStep   a set trained here

Words (row names, headers, the summary, refusals) are messages: one view serves every language,
and the page says it in its own.

A set trained on the page (``LIVE_SET``) lives in that page's state: ``judge`` and
``generation_steps`` take it as ``trained``, and nothing of it is shared with other visitors.

The k softmax layers are chosen evenly spaced (``evaluation.evenly_spaced``): the greedy search
reads 30 + 29 + ... forwards and cannot answer in seconds, so the page says which rule it uses.
The sample is one English and one Chinese held-out passage, each cut to ``SAMPLE_TOKENS``:
the original's log-probabilities on it are cached by the engine, so a new k costs one forward
per passage. Every request is priced before the model reads a token.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..core.cache import LRU
from ..linearize import LayerMaps, evaluate, generate, live, shipped
from ..linearize.evaluation import evenly_spaced
from ..linearize.maps import MODEL, SHAPE
from ..linearize.texts import load as load_texts
from ..measure import cost
from ..stopping import check as check_stop
from ..text import Message
from .streaming import streamed

LAYERS = SHAPE[MODEL]["layers"]
SAMPLE_TOKENS = 128               # per passage: two forwards of 128 tokens answer in a few seconds
MAX_PROMPT_CHARS = 200
MAX_NEW_TOKENS = 64
DEFAULT_KEEP = 6
BASELINE = ("elu1", 0)
# The cost model's price of one SmolLM2 token through one forward: 2 x 135 M parameters of
# multiply-adds plus the 49,152-word output layer; and the bytes of one forward's logits.
FLOPS_PER_TOKEN = 2 * 135e6 + 2 * 576 * 49_152
BYTES_PER_TOKEN = 4 * 49_152 * 3


def sets() -> list[str]:
    """The choices of maps as "kind:window", or "kind:window:sinks" for a set with attention
    sinks: what ships for SmolLM2, then elu+1 (no training)."""
    found = [f"{kind}:{window}" + (f":{sinks}" if sinks else "") for kind, window, sinks in shipped(MODEL)]
    return found + [f"{BASELINE[0]}:{BASELINE[1]}"]


# The set trained on the visitor's own page (``train_steps``): it lives in that page's state only.
LIVE_SET = "live"


def default_set() -> str:
    return sets()[0]


def set_key(set_id: str) -> str:
    """The text key naming a set on the page: "hedgehog:64" -> "linearize.set_hedgehog_64",
    "hedgehog:16:1" -> "linearize.set_hedgehog_16_1"."""
    parse_set(set_id)
    return "linearize.set_" + set_id.replace(":", "_")


def parse_set(set_id) -> tuple[str, int, int]:
    """(kind, window, sinks) of one of ``sets()``."""
    choices = sets()
    if not isinstance(set_id, str) or set_id not in choices:
        raise ValueError(Message("linearize.err_set", choices=", ".join(choices), got=repr(str(set_id)[:40])))
    kind, window, sinks = (set_id + ":0").split(":")[:3]
    return kind, int(window), int(sinks)


@dataclass(frozen=True)
class SetChoice:
    """The maps a request reads: a shipped set or the baseline by kind, window and sinks, or
    the set trained on the visitor's page (``kind`` is then its LayerMaps)."""

    set_id: str
    kind: object
    window: int
    sinks: int

    @property
    def kind_name(self) -> str:
        return self.kind.kind if isinstance(self.kind, LayerMaps) else self.kind


def choose(set_id, trained=None) -> SetChoice:
    """``set_id`` is one of ``sets()``, or ``LIVE_SET`` with the page's ``trained`` LayerMaps."""
    if set_id == LIVE_SET:
        if not isinstance(trained, LayerMaps):
            raise ValueError(Message("linearize.err_live_missing"))
        return SetChoice(LIVE_SET, trained, trained.window, trained.sinks)
    return SetChoice(set_id, *parse_set(set_id))


def exact_words(window: int, sinks: int = 0) -> Message:
    """The keys a linearized layer reads exactly, in words: "window 64", "window 16 + attention sink"."""
    return Message("linearize.exact_sink" if sinks else "linearize.exact_window", window=window, sinks=sinks)


def check_keep(keep) -> int:
    if isinstance(keep, float) and keep.is_integer():
        keep = int(keep)
    if isinstance(keep, bool) or not isinstance(keep, int) or not 0 <= keep <= LAYERS:
        raise ValueError(Message("linearize.err_keep", count=LAYERS, got=str(keep)[:40]))
    return keep


def linear_layers(keep: int) -> list[int]:
    """Every layer but the ``keep`` evenly spaced ones kept softmax."""
    kept = set(evenly_spaced(keep, LAYERS))
    return [layer for layer in range(LAYERS) if layer not in kept]


def sample() -> list[str]:
    """The held-out passages the page judges on: the first English and the first Chinese one."""
    return [load_texts("en", "heldout")[0], load_texts("zh", "heldout")[0]]


def _price(reads: int, length: int, key: str, **values) -> None:
    """Refuse, before any work, ``reads`` forwards over ``length`` tokens the server cannot afford."""
    flops = FLOPS_PER_TOKEN * reads * length
    cost.check(cost.Estimate(bytes=BYTES_PER_TOKEN * length + (600 << 20), seconds=flops / (cost.ASSUMED_GFLOPS * 1e9),
                             what=cost.Phrase(key, **values)))


# The judged numbers per (set, k): the sample is fixed, so the page, lecture 5.6 and 6.6 ask for
# the same forwards again and again (31 k x 4 sets at most).
_judged = LRU(128)


@dataclass
class JudgeView:
    """The page's numbers: one row for the original, one for the hybrid."""

    set_id: str
    keep: int
    kept: list
    rows: list                     # {"model": "original" | "hybrid", "softmax", "perplexity", "top1_agreement", "kl"}
    tokens: int
    texts: int
    live: tuple = ()               # a set trained on the page: (kind, window, sinks, steps a layer)


def judge(set_id, keep, *, stop=None, trained=None) -> JudgeView:
    """Perplexity, top-1 agreement and KL of the model with all but ``keep`` layers linearized
    (``trained``: the page's own LayerMaps, read when ``set_id`` is ``LIVE_SET``)."""
    choice = choose(set_id, trained)
    keep = check_keep(keep)
    texts = sample()
    tokens = len(texts) * SAMPLE_TOKENS
    _price(2, tokens, "linearize.cost_judge", forwards=2 * len(texts), tokens=f"{tokens:,}")
    check_stop(stop)
    layers = linear_layers(keep)

    def judged():
        return evaluate(texts, layers, kind=choice.kind, window=choice.window, model=MODEL, max_tokens=SAMPLE_TOKENS,
                        sinks=choice.sinks)
    # a page's own set is judged afresh: only the shared sets are kept
    result = judged() if set_id == LIVE_SET else _judged.get((set_id, keep), judged)
    check_stop(stop)
    rows = [{"model": "original", "softmax": LAYERS,
             "perplexity": result["original_perplexity"], "top1_agreement": 1.0, "kl": 0.0},
            {"model": "hybrid", "softmax": keep, "perplexity": result["perplexity"],
             "top1_agreement": result["top1_agreement"], "kl": result["kl"]}]
    live = (choice.kind_name, choice.window, choice.sinks, choice.kind.info.get("steps", 0)) if set_id == LIVE_SET else ()
    return JudgeView(set_id, keep, sorted(set(range(LAYERS)) - set(layers)), rows, result["tokens"], len(texts), live)


def _row_name(view: JudgeView, which: str) -> Message:
    if which == "original":
        return Message("linearize.row_original")
    kind, window, sinks, steps = view.live or (*parse_set(view.set_id), 0)
    named = (Message("linearize.kind_live", kind=Message(f"linearize.train_kind_{kind}"), steps=steps) if view.live
             else Message(f"linearize.kind_{kind}"))
    return Message("linearize.row_hybrid", kind=named, exact=exact_words(window, sinks), keep=view.keep)


def table(view: JudgeView) -> list[list]:
    """The rows as the page's table shows them (numbers rounded for reading), each named by a
    message: a page that changes language says the same rows in its words."""
    return [[_row_name(view, row["model"]), row["softmax"], round(row["perplexity"], 3),
             round(row["top1_agreement"], 3), round(row["kl"], 4)] for row in view.rows]


def headers() -> list[Message]:
    return [Message(f"linearize.col_{key}") for key in ("model", "softmax", "perplexity", "agreement", "kl")]


def summary(view: JudgeView) -> Message:
    kept = ", ".join(str(layer) for layer in view.kept) or Message("linearize.kept_none")
    return Message("linearize.summary", tokens=view.tokens, texts=view.texts, max=SAMPLE_TOKENS, kept=kept)


# ---------------------------------------------------------------------------------------
# Generation: the original, then the linearized model, one token at a time
# ---------------------------------------------------------------------------------------

@dataclass
class GenerationStep:
    """Where the two generations stand after one more token of one of them."""

    which: str                                   # "original" | "linearized"
    original: str = ""
    linearized: str = ""
    tokens: int = 0                              # of ``which`` so far
    seconds: float = 0.0                         # of ``which`` so far
    kv_cache_bytes: list = field(default_factory=list)     # the original's, per generated token
    state_bytes: list = field(default_factory=list)        # the linearized model's, per token


def check_prompt(prompt, new_tokens) -> tuple[str, int]:
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError(Message("linearize.err_prompt_empty"))
    if len(prompt) > MAX_PROMPT_CHARS:
        raise ValueError(Message("linearize.err_prompt_long", count=f"{len(prompt):,}", cap=MAX_PROMPT_CHARS))
    if isinstance(new_tokens, float) and new_tokens.is_integer():
        new_tokens = int(new_tokens)
    if isinstance(new_tokens, bool) or not isinstance(new_tokens, int) or not 1 <= new_tokens <= MAX_NEW_TOKENS:
        raise ValueError(Message("linearize.err_new_tokens", cap=MAX_NEW_TOKENS, got=str(new_tokens)[:40]))
    return prompt, new_tokens


def decoded_so_far(tokenizer, tokens) -> str:
    """The text of the tokens generated so far. A character of several bytes (Chinese, in a
    byte-level vocabulary) can end between two tokens: its first bytes decode to U+FFFD, so
    the text is shown up to it, and the character appears whole with the token that ends it."""
    return tokenizer.decode(tokens).rstrip("\ufffd")


def _streamed(prompt, new_tokens, layers, choice: SetChoice, stop):
    """(text so far, memory, KV cache, seconds, count) after each token of one generation, run
    on a worker thread so that the caller can hand each token on as it comes."""
    from ..sources.models import get_model
    tokenizer = get_model(MODEL).tokenizer

    def work(emit, should_stop):
        def on_token(generation):
            emit((decoded_so_far(tokenizer, generation.tokens), list(generation.memory_bytes),
                  list(generation.kv_cache_bytes), sum(generation.seconds), len(generation.tokens)))
        generate(prompt, new_tokens, layers, kind=choice.kind, window=choice.window, model=MODEL, stop=should_stop,
                 on_token=on_token, sinks=choice.sinks)

    return streamed(work, stop, name="generation")


def generation_steps(prompt, new_tokens, set_id, keep, *, stop=None, trained=None):
    """The original continues ``prompt`` token by token, then the linearized model does: one
    ``GenerationStep`` per token. Memory: the original's KV cache and the linearized model's
    state (plus the KV cache of its softmax layers) after each token."""
    choice = choose(set_id, trained)
    keep = check_keep(keep)
    prompt, new_tokens = check_prompt(prompt, new_tokens)
    _price(2, new_tokens + MAX_PROMPT_CHARS, "linearize.cost_generate", tokens=new_tokens)
    step = GenerationStep("original")
    for text, memory, _, seconds, count in _streamed(prompt, new_tokens, [], choice, stop):
        step.original, step.kv_cache_bytes, step.seconds, step.tokens = text, memory, seconds, count
        yield step
    step.which, step.tokens, step.seconds = "linearized", 0, 0.0
    for text, memory, _, seconds, count in _streamed(prompt, new_tokens, linear_layers(keep), choice, stop):
        step.linearized, step.state_bytes, step.seconds, step.tokens = text, memory, seconds, count
        yield step


# ---------------------------------------------------------------------------------------
# Training a set on the page: another kind, window or sinks than the shipped sets
# ---------------------------------------------------------------------------------------

TRAIN_KINDS = ("hedgehog", "luna")
MAX_TRAIN_WINDOW = 128
MAX_TRAIN_SINKS = 4


@dataclass
class TrainingStep:
    """Where a live training stands: the share done, the layers trained so far with their last
    loss, and (at the end) the set itself."""

    fraction: float
    losses: list = field(default_factory=list)      # the last loss of each layer trained so far
    seconds: float = 0.0
    maps: LayerMaps | None = None


def _whole(value, low: int, high: int, key: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(Message(key, low=low, high=high, got=str(value)[:40]))
    return value


def check_training(kind, window, sinks, steps) -> tuple[str, int, int, int]:
    if kind not in TRAIN_KINDS:
        raise ValueError(Message("linearize.err_train_kind", choices=", ".join(TRAIN_KINDS), got=repr(str(kind)[:40])))
    return (kind, _whole(window, 0, MAX_TRAIN_WINDOW, "linearize.err_train_window"),
            _whole(sinks, 0, MAX_TRAIN_SINKS, "linearize.err_train_sinks"),
            _whole(steps, 1, live.MAX_STEPS, "linearize.err_train_steps"))


def training_steps(kind, window, sinks, steps, *, stop=None):
    """Train every layer's maps (``linearize.live``), one ``TrainingStep`` after the capture and
    after each layer; the last one carries the set. Refused before any work the cost model puts
    over the server's limit."""
    kind, window, sinks, steps = check_training(kind, window, sinks, steps)
    started = time.perf_counter()
    step = TrainingStep(0.0)

    def work(emit, should_stop):
        def progress(fraction, layer, loss):
            emit(("progress", fraction, loss if layer is not None else None))
        emit(("done", live.train(kind, window, sinks, steps, MODEL, progress=progress, should_stop=should_stop)))

    for event in streamed(work, stop, name="linearize-training"):
        step.seconds = time.perf_counter() - started
        if event[0] == "done":
            step.fraction, step.maps = 1.0, event[1]
        else:
            step.fraction = event[1]
            if event[2] is not None:
                step.losses.append(event[2])
        yield step


def training_summary(step: TrainingStep) -> Message:
    """What was trained and how it went, in words."""
    if step.maps is None and not step.losses:
        return Message("linearize.train_capture", seconds=step.seconds)
    if step.maps is None:
        return Message("linearize.train_running", layers=len(step.losses), total=LAYERS,
                       loss=step.losses[-1], seconds=step.seconds)
    maps = step.maps
    return Message("linearize.train_done", kind=Message(f"linearize.train_kind_{maps.kind}"),
                   exact=exact_words(maps.window, maps.sinks), steps=maps.info.get("steps", 0),
                   passages=maps.info.get("passages", 0), tokens=maps.info.get("tokens", 0), seconds=step.seconds,
                   loss=sum(step.losses) / max(1, len(step.losses)))
