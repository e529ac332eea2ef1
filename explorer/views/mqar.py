"""The recall (MQAR) section of the state tab: the shipped accuracy-against-state figure,
one point trained live beside it, and what that model reads at each question.

``check_live`` checks the section's controls (a refusal is one sentence, a message said in
the page's language where it is shown); ``train_live`` prices the run (``mqar.price``,
refused over ``LIVE_SECONDS``), trains it on the shipped table's task and training with the
visitor's steps and seed, asking its stop signal at every step, and returns a ``LivePoint``
that keeps the model for ``inspect_live``. The live points of a page live in a
``RecallSession`` (at most ``MAX_LIVE_POINTS``, the oldest dropped first). Nothing here
depends on the language: the words are messages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ..experiments import mqar, mqar_inspect, mqar_table
from ..measure import cost
from ..text import Message
from .common import echoed, whole_in

WIDTHS = mqar_table.WIDTHS
STEPS = (20, 500)
DEFAULT_STEPS = 300
MAX_SEED = 10_000
SEQUENCES = (0, 999)
# A live run is refused when priced above this: the price errs high (the slowest mixer on a
# busy machine), so what is allowed ends well within a minute on two cores.
LIVE_SECONDS = 60.0
MAX_LIVE_POINTS = 8
KEPT_INSPECTIONS = 4          # sequences of the last live model kept read (a language switch redraws them)


@dataclass
class LivePoint:
    """One model trained in the app: the figure's point, and the model itself."""

    point: dict                 # mixer, width, steps, seed, accuracy (None: diverged), state_bytes, seconds, diverged
    model: object = field(repr=False, default=None)
    shape: mqar.ModelShape | None = None
    task: mqar.Task | None = None
    # sequence -> what the model read there: another language, layer or head draws it again
    # from here, without a forward pass (the last KEPT_INSPECTIONS sequences).
    inspections: dict = field(repr=False, default_factory=dict)


@dataclass
class RecallSession:
    """What a page has trained: its live points, the last one's model for inspection."""

    points: list = field(default_factory=list)
    last: LivePoint | None = None

    def add(self, live: LivePoint) -> "RecallSession":
        points = (self.points + [live.point])[-MAX_LIVE_POINTS:]
        return replace(self, points=points, last=live)


_shown = echoed


def _whole(value, name_key, low, high) -> int:
    return whole_in(value, low, high, "mqar.err_whole", name_key)


def check_live(mixer="softmax", width=32, steps=DEFAULT_STEPS, seed=0) -> tuple:
    """(ModelShape, Training) of a live point, checked; else a ValueError carrying a message."""
    if not isinstance(mixer, str) or mixer not in mqar.MIXERS:
        raise ValueError(Message("mqar.err_mixer", choices=", ".join(f"“{m}”" for m in mqar.MIXERS),
                                 value=_shown(mixer)))
    if isinstance(width, bool) or not isinstance(width, (int, float, str)) or str(width) not in {str(w) for w in WIDTHS}:
        raise ValueError(Message("mqar.err_width", choices=", ".join(map(str, WIDTHS)), value=_shown(width)))
    steps = _whole(steps, "mqar.name_steps", *STEPS)
    seed = _whole(0 if seed is None else seed, "mqar.name_seed", 0, MAX_SEED)
    task, training, head_dim = mqar_table.settings(mqar_table.shipped())
    return mqar.ModelShape(mixer, int(width), head_dim), replace(training, steps=steps, seed=seed)


def live_price(mixer="softmax", width=32, steps=DEFAULT_STEPS, seed=0) -> cost.Estimate:
    """``mqar.price`` of a live point, with what a visitor can lower (the steps or the width)."""
    shape, training = check_live(mixer, width, steps, seed)
    return replace(mqar.price(shape, shipped_task(), training), lower=Message("mqar.lower_live"))


def shipped_task() -> mqar.Task:
    return mqar_table.settings(mqar_table.shipped())[0]


def train_live(mixer="softmax", width=32, steps=DEFAULT_STEPS, seed=0, should_stop=None,
               on_step=None, limit_seconds: float = LIVE_SECONDS) -> LivePoint:
    """Train one point on the shipped task (priced first: ``cost.Refusal`` over
    ``limit_seconds``); ``on_step(step, steps, loss)`` sees each step."""
    shape, training = check_live(mixer, width, steps, seed)
    task = shipped_task()
    estimate = live_price(mixer, width, steps, seed)
    if not cost.fits(estimate, limit_seconds=limit_seconds):
        cost.check(estimate, limit_seconds=limit_seconds)       # refused, naming what the visitor can lower
    report = None if on_step is None else (lambda step, loss: on_step(step + 1, training.steps, loss))
    result, model = mqar.fit(shape, task, training, should_stop=should_stop, limit_seconds=limit_seconds,
                             on_step=report)
    accuracy = None if result.diverged is not None else round(float(result.accuracy), 4)
    point = {"mixer": shape.mixer, "width": shape.width, "steps": training.steps, "seed": training.seed,
             "accuracy": accuracy, "state_bytes": result.state_bytes, "seconds": round(result.seconds, 1),
             "diverged": result.diverged, "questions": training.test * task.pairs}
    return LivePoint(point, model if result.diverged is None else None, shape, task)


def trained_message(live: LivePoint) -> Message:
    """What the last live point came to: its accuracy and time, or the step it diverged at."""
    p = live.point
    mixer = Message(f"mqar.mixer.{p['mixer']}")
    if p["accuracy"] is None:
        return Message("mqar.diverged_live", mixer=mixer, width=p["width"], step=p["diverged"])
    return Message("mqar.trained", mixer=mixer, width=p["width"], seconds=f"{p['seconds']:.1f}",
               accuracy=f"{p['accuracy']:.3f}", questions=p["questions"], bytes=f"{p['state_bytes']:,}")


def check_inspect(session: RecallSession | None, sequence=0, layer=2, head="best") -> tuple:
    """(layer index or None, head: an index, "mean" or "best", sequence) for the last live
    model; else a ValueError. ``layer`` "best" (None) is the layer that reads the pairs most."""
    if session is None or session.last is None or session.last.model is None:
        raise ValueError(Message("mqar.err_train_first"))
    shape = session.last.shape
    sequence = _whole(0 if sequence is None else sequence, "mqar.name_sequence", *SEQUENCES)
    layer = None if layer == "best" else _whole(layer, "mqar.name_layer", 1, shape.layers) - 1
    if head in (None, "", "mean", "best"):
        return layer, head or "mean", sequence
    try:
        h = float(head) if not isinstance(head, bool) else math.nan
    except (TypeError, ValueError, OverflowError):
        h = math.nan
    if not (math.isfinite(h) and h == int(h) and 1 <= h <= shape.heads):
        raise ValueError(Message("mqar.err_head", heads=shape.heads, value=_shown(head)))
    return layer, int(h) - 1, sequence


def inspect_live(session: RecallSession, sequence=0, layer=2, head="best"):
    """(inspection, layer index, head) of the last live model on one sequence: head an index,
    None for the mean over heads; "best" is the head that reads the asked pairs most, and
    the layer "best" the layer that holds the best of those."""
    layer, head, sequence = check_inspect(session, sequence, layer, head)
    live = session.last
    found = live.inspections.get(sequence)
    if found is None:
        found = mqar_inspect.inspect(live.model, live.task, sequence)
        kept = list(live.inspections.items())[-(KEPT_INSPECTIONS - 1):]
        live.inspections = dict(kept + [(sequence, found)])
    if layer is None:
        layer = found.reading_layer()
    if head == "best":
        head = found.reading_head(layer)
    return found, layer, None if head == "mean" else head


def shipped_status() -> Message:
    """What the shipped table holds: its points, mixers, widths and the torch it ran on."""
    table = mqar_table.shipped()
    points = table["points"]
    return Message("mqar.shipped_status", points=len(points),
               mixers=len({p["mixer"] for p in points}), widths=", ".join(str(w) for w in sorted({p["width"] for p in points})),
               torch=table["versions"]["torch"])
