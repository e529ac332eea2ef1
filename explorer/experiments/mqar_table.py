"""The recall table: every mixer x widths x seeds trained on one MQAR task, as one record.

``run(points, ...)`` trains the points (in worker processes, one thread each, when
``jobs`` > 1: a point's result does not depend on which worker ran it) and ``record``
writes what a reader needs to trust the numbers: the task, the training, the model's
shape, every point, the package versions and when. ``shipped()`` reads the table that
ships with the package (``assets/mqar/results.json``); ``check`` retrains some of its
points and says whether each lands within its seeds' spread.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import json
import platform
import statistics
from dataclasses import asdict, dataclass

from .. import stopping
from ..resources import asset
from ..measure import cost
from .mqar import (CONV, MIXERS, WINDOW, ModelShape, RecallResult, Task, Training, chance, price,
                   spread_holds, train, with_seed)

SCHEMA = 1
WIDTHS = (32, 64)
SEEDS = (0, 1)
SHIPPED = ("mqar", "results.json")         # under the package's assets
# The grid is refused above this many estimated seconds, summed over its points (the whole
# table on one thread of the shared machine is priced at about half of it).
GRID_SECONDS = 3600.0


@dataclass(frozen=True)
class Point:
    mixer: str
    width: int
    seed: int


def grid(mixers=MIXERS, widths=WIDTHS, seeds=SEEDS) -> list[Point]:
    """Every (mixer, width, seed), seeds outermost, so a table stopped early has whole seeds."""
    return [Point(m, w, s) for s in seeds for m in mixers for w in widths]


def price_grid(points: list[Point], task: Task, training: Training, head_dim: int) -> cost.Estimate:
    """The grid's summed estimate (its bytes are one point's: the points run one per worker)."""
    estimates = [price(ModelShape(p.mixer, p.width, head_dim), task, with_seed(training, p.seed)) for p in points]
    largest = max(estimates, key=lambda e: e.bytes)
    return cost.Estimate(largest.bytes, sum(e.seconds for e in estimates), largest.what, largest.lower)


def _train_point(point: Point, task: Task, training: Training, head_dim: int) -> RecallResult:
    import torch
    torch.set_num_threads(1)          # one thread per point: on a shared machine it runs fastest
    return train(ModelShape(point.mixer, point.width, head_dim), task, with_seed(training, point.seed),
                 limit_seconds=float("inf"))


def run(points: list[Point], task: Task = Task(), training: Training = Training(), head_dim: int = 4,
        jobs: int = 1, should_stop=None, on_result=None, limit_seconds: float = GRID_SECONDS) -> list[RecallResult]:
    """Train ``points`` (priced first, refused over ``limit_seconds``), in their order.
    ``on_result(result)`` sees each as it finishes; ``should_stop`` is asked between points."""
    cost.check(price_grid(points, task, training, head_dim), limit_seconds=limit_seconds)
    results: dict[Point, RecallResult] = {}
    if jobs <= 1:
        for point in points:
            stopping.check(should_stop)
            results[point] = _train_point(point, task, training, head_dim)
            if on_result is not None:
                on_result(results[point])
    else:
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(_train_point, p, task, training, head_dim): p for p in points}
            try:
                for future in concurrent.futures.as_completed(futures):
                    stopping.check(should_stop)
                    results[futures[future]] = future.result()
                    if on_result is not None:
                        on_result(results[futures[future]])
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
    return [results[p] for p in points]


def versions() -> dict:
    import numpy
    import torch

    from .. import __version__
    return {"python": platform.python_version(), "torch": torch.__version__, "numpy": numpy.__version__,
            "explorer": __version__}


def record(results: list[RecallResult], task: Task, training: Training, head_dim: int, seconds: float) -> dict:
    """The table as JSON-ready data. Each point keeps its final loss, not its whole curve;
    ``seconds`` is the training's wall time, summed over the points."""
    points = []
    for r in results:
        entry = r.as_dict()
        losses = entry.pop("losses")
        entry["final_loss"] = round(statistics.fmean(losses[-20:]), 4) if losses else None
        entry["accuracy"] = None if entry["diverged"] is not None else round(entry["accuracy"], 4)
        entry["seconds"] = round(entry["seconds"], 1)
        points.append(entry)
    return {
        "schema_version": SCHEMA,
        "task": {**asdict(task), "keys": len(task.keys), "values": len(task.values), "chance": chance(task),
                 "questions": "every key asked once, in a random order, at random places after the pairs"},
        "training": {**{k: v for k, v in asdict(training).items() if k != "seed"}, "optimiser": "Adam",
                     "schedule": "one-cycle", "fresh sequences every step": True},
        "model": {"layers": 2, "head_dim": head_dim, "conv_taps": CONV, "window": WINDOW, "mlp": "2x, GELU",
                  "state_dtype": "float32"},
        "points": points,
        "seconds": round(seconds, 1),
        "versions": versions(),
        "created_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def merge(table: dict, extra: dict) -> dict:
    """``table`` with the points of ``extra``, a table trained later with the same task,
    training, model and package versions (e.g. for a mixer added since): refused otherwise,
    or when both hold the same (mixer, width, seed). Seconds add up; the date is the later."""
    for part in ("schema_version", "task", "training", "model"):
        if table[part] != extra[part]:
            raise ValueError(f"{part}: the tables were trained differently and cannot be merged")
    mine = {k: v for k, v in table["versions"].items() if k != "explorer"}
    theirs = {k: v for k, v in extra["versions"].items() if k != "explorer"}
    if mine != theirs:
        raise ValueError(f"versions: {mine} against {theirs}; retrain the whole table instead")
    seen = {(p["mixer"], p["width"], p["seed"]) for p in table["points"]}
    twice = [(p["mixer"], p["width"], p["seed"]) for p in extra["points"] if (p["mixer"], p["width"], p["seed"]) in seen]
    if twice:
        raise ValueError(f"points: {twice[:3]} are in both tables")
    points = sorted(table["points"] + extra["points"],
                    key=lambda p: (p["seed"], MIXERS.index(p["mixer"]), p["width"]))
    return {**table, "points": points, "seconds": round(table["seconds"] + extra["seconds"], 1),
            "created_utc": max(table["created_utc"], extra["created_utc"])}


def settings(table: dict) -> tuple[Task, Training, int]:
    """(task, training, head_dim) a table was made with."""
    t, tr = table["task"], table["training"]
    task = Task(vocab=t["vocab"], length=t["length"], pairs=t["pairs"])
    training = Training(steps=tr["steps"], batch=tr["batch"], lr=tr["lr"], test=tr["test"])
    return task, training, table["model"]["head_dim"]


def shipped() -> dict:
    """The table that ships with the package."""
    return json.loads(asset(*SHIPPED).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Summary:
    """One mixer at one width over its seeds."""

    mixer: str
    width: int
    state_bytes: int
    mean: float
    low: float
    high: float
    seeds: tuple[float, ...]
    diverged: tuple[int, ...] = ()      # the seeds whose training diverged (no accuracy)


def summarise(table: dict) -> list[Summary]:
    """Per (mixer, width), in ``MIXERS`` order then width: the mean and range of the seeds
    that trained to the end (a diverged seed has no accuracy, and is listed apart)."""
    groups: dict[tuple[str, int], list[dict]] = {}
    for p in table["points"]:
        groups.setdefault((p["mixer"], p["width"]), []).append(p)
    out = []
    for (mixer, width), ps in sorted(groups.items(), key=lambda kv: (MIXERS.index(kv[0][0]), kv[0][1])):
        ps = sorted(ps, key=lambda p: p["seed"])
        accs = tuple(p["accuracy"] for p in ps if p["accuracy"] is not None)
        failed = tuple(p["seed"] for p in ps if p["accuracy"] is None)
        if accs:
            out.append(Summary(mixer, width, ps[0]["state_bytes"], statistics.fmean(accs), min(accs), max(accs),
                               accs, failed))
    return out


@dataclass(frozen=True)
class Reproduced:
    point: Point
    accuracy: float
    shipped: tuple[float, ...]
    holds: bool


def check(table: dict, points: list[Point], jobs: int = 1, should_stop=None, on_result=None) -> list[Reproduced]:
    """Retrain ``points`` of ``table`` with its settings; each holds if its accuracy lies within
    the shipped seeds' range (``spread_holds``)."""
    task, training, head_dim = settings(table)
    shipped_accs = {}
    for p in table["points"]:
        if p["accuracy"] is not None:
            shipped_accs.setdefault((p["mixer"], p["width"]), []).append(p["accuracy"])
    for p in points:
        if (p.mixer, p.width) not in shipped_accs:
            raise ValueError(f"no shipped point has {p.mixer} at width {p.width}")
    diverged = {(p["mixer"], p["width"], p["seed"]) for p in table["points"] if p["accuracy"] is None}
    results = run(points, task, training, head_dim, jobs=jobs, should_stop=should_stop, on_result=on_result)
    # A seed that diverged in the table is reproduced when it diverges again.
    return [Reproduced(p, r.accuracy, tuple(shipped_accs[(p.mixer, p.width)]),
                       r.diverged is not None if (p.mixer, p.width, p.seed) in diverged
                       else spread_holds(r.accuracy, shipped_accs[(p.mixer, p.width)]))
            for p, r in zip(points, results)]
