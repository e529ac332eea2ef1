"""The probe page: a small corpus read by the embedded model, every chosen map on every
layer and head of every text (``explorer.experiments.probe``), summed up per map and per head.

The tidy table has one row per text x layer x head x map, exactly what ``python -m explorer
probe`` writes. The summary and the heatmap never flatter: a cell (one text, layer, head and
map) whose metric has no value on more than half of its rows counts as no value
(``showing.mostly_undefined``), and rows where KL is +inf are counted beside the finite mean.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import stopping
from ..catalog import OVERVIEW_METRICS, PROBE_MAX_TEXT_CHARS as MAX_TEXT_CHARS, PROBE_MAX_TEXTS as MAX_TEXTS
from ..experiments import probe
from ..experiments.probe_table import tidy
from ..measure import cost
from ..measure.showing import infinite_count, mostly_undefined
from ..catalog import map_label
from ..text import Message
from .frames import message_frame

SUMMARY_METRICS = ("map_rel_error", "output_rel_error", "kl_mean", "entropy_approx", "monotonicity")


@dataclass
class ProbeView:
    """What the page shows: the tidy table, a summary row per map, the heads x maps grid."""

    table: pd.DataFrame              # one row per text x layer x head x map
    summary: list                    # per map: {"map", "cells", metric -> mean, "kl_inf_rows", "kl_rows"}
    grid: np.ndarray                 # (layers * heads, maps) mean of ``metric`` over the texts; NaN: no value
    heads: list                      # (layer, head) of each grid row
    maps: list                       # catalogue ids of the grid's columns
    metric: str
    texts: int
    notices: list = field(default_factory=list)


def read_corpus(content: str) -> probe.Corpus:
    """The page's corpus from a file's text, within the page's bounds (a ValueError with a message)."""
    corpus = probe.Corpus.from_lines(content.splitlines())
    if not corpus.texts:
        raise ValueError(Message("probe.err_empty"))
    if len(corpus.texts) > MAX_TEXTS:
        raise ValueError(Message("probe.err_lines", count=len(corpus.texts), cap=MAX_TEXTS))
    for index, text in corpus.texts:
        if len(text) > MAX_TEXT_CHARS:
            raise ValueError(Message("probe.err_chars", line=index + 1, count=len(text), cap=MAX_TEXT_CHARS))
    return corpus


def probe_view(corpus: probe.Corpus, maps=probe.DEFAULT_MAPS, metric: str = "kl_mean", m: int = probe.DEFAULT_M,
               seed: int = 0, should_stop=None, progress=None) -> ProbeView:
    """Probe every text of ``corpus`` on every layer and head of the embedded model, priced
    first (the cost model's time and memory for all of it); ``progress(fraction)`` hears
    about each text, ``should_stop`` is asked at every head."""
    if metric not in OVERVIEW_METRICS:
        raise ValueError(Message("probe.err_metric", metric=str(metric)[:40], choices=", ".join(OVERVIEW_METRICS)))
    settings = probe.ProbeSettings(maps=tuple(maps or ()), m=int(m), seed=int(seed))
    prober = probe.Prober(settings, should_stop=should_stop)
    settings = prober.settings
    from ..sources.text import text_shape
    counts = [text_shape(text, settings.model, settings.max_tokens)[0] for _, text in corpus.texts]
    cost.check(probe.estimate(settings, counts, prober.head_dim))

    rows, notices = [], []
    for done, (index, text) in enumerate(corpus.texts):
        stopping.check(should_stop)
        try:
            rows.extend(prober.rows(index, text))
        except (stopping.Stopped, stopping.PastDeadline):
            raise
        except ValueError as exc:
            why = exc.args[0] if exc.args and isinstance(exc.args[0], Message) else str(exc)[:200]
            notices.append(Message("probe.skipped", line=index + 1, why=why))
        if progress is not None:
            progress((done + 1) / len(corpus.texts))
    if not rows:
        raise ValueError(Message("probe.err_nothing"))
    table = tidy(pd.DataFrame(rows), settings.maps)
    unk = int(table.drop_duplicates("text_index")["unk_tokens"].sum())
    if unk:
        notices.append(Message("probe.unk", count=unk))
    heads = [(layer, head) for layer in settings.layers for head in settings.heads]
    grid = _grid(table, metric, heads, settings.maps)
    return ProbeView(table=table, summary=_summary(table, settings.maps), grid=grid,
                     heads=heads, maps=list(settings.maps), metric=metric, texts=int(table["text_index"].nunique()),
                     notices=notices)


def _cell_value(row: dict, key: str) -> float:
    """One cell's value of ``key`` as the tables show it: NaN where mostly undefined."""
    value = row.get(key)
    if mostly_undefined(row, key) or value is None or (isinstance(value, float) and math.isnan(value)):
        return math.nan
    return float(value)


def _records(table: pd.DataFrame) -> list[dict]:
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
            for row in table.to_dict("records")]


def _summary(table: pd.DataFrame, maps) -> list[dict]:
    """Per map: how many cells, the mean of each metric over the cells that have one (and how
    many do), and the rows where KL is +inf out of all rows compared."""
    out = []
    records = _records(table)
    for label in maps:
        cells = [r for r in records if r["map_id"] == label]
        row = {"map": label, "cells": len(cells)}
        for key in SUMMARY_METRICS:
            values = [v for v in (_cell_value(r, key) for r in cells) if math.isfinite(v)]
            row[key] = sum(values) / len(values) if values else None
            row[key + "_cells"] = len(values)
        row["kl_inf_rows"] = sum(infinite_count(r, "kl_mean") for r in cells)
        row["rows"] = sum(int(r.get("total_rows") or 0) for r in cells)
        out.append(row)
    return out


def _grid(table: pd.DataFrame, metric: str, heads, maps) -> np.ndarray:
    """(heads, maps): the mean over the texts of each cell's ``metric``, NaN where no text has one."""
    sums = np.zeros((len(heads), len(maps)))
    counts = np.zeros_like(sums)
    where = {h: i for i, h in enumerate(heads)}
    column = {label: j for j, label in enumerate(maps)}
    for r in _records(table):
        value = _cell_value(r, metric)
        if math.isfinite(value):
            i, j = where[(int(r["layer"]), int(r["head"]))], column[r["map_id"]]
            sums[i, j] += value
            counts[i, j] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def summary_table(view: ProbeView, digits: int = 3) -> pd.DataFrame:
    """The summary as the page shows it, headers and words as messages (the page says them):
    each mean with the cells it is over when some lack a value, KL's +inf rows beside its mean."""
    data = {Message("common.map"): [map_label(r["map"]) for r in view.summary],
            Message("probe.col_cells"): [r["cells"] for r in view.summary]}
    for key in SUMMARY_METRICS:
        column = []
        for r in view.summary:
            value, have = r[key], r[key + "_cells"]
            shown = Message("common.na") if value is None else f"{value:.{digits}g}"
            if have < r["cells"]:
                shown = Message("probe.of_cells", value=shown, have=have, cells=r["cells"])
            column.append(shown)
        data[Message(f"common.short.{key}")] = column
    data[Message("probe.col_inf")] = [Message("probe.inf_rows", inf=r["kl_inf_rows"], rows=r["rows"])
                                      for r in view.summary]
    return message_frame(data)


def head_labels(view: ProbeView) -> list[str]:
    return [Message("probe.head_label", layer=layer, head=head) for layer, head in view.heads]
