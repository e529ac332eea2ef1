"""Exports a paper can use: the metrics table as numbers, and a view's arrays as files.

    metrics_csv_table(rows) -> DataFrame     numbers at full precision, NaN where undefined,
                                             and how many rows each mean is over
    view_arrays(sample, layer, head, maps, causal, m, seed, window) -> ViewArrays
                                             Q, K, V, the softmax map A, every map's Â and
                                             their per-row metrics, as float32/float64 arrays
    write_npz(arrays, path), write_safetensors(arrays, path)
    write_csv(table, path, record) -> (csv path, provenance path)

Every file written here carries its provenance (``explorer.provenance``: the input text and
token ids, the model file's SHA-256, the engine's version and commit, package versions,
settings and seeds) under the name ``provenance``: an array of the npz, a metadata field of
the safetensors header, and for a CSV, which has no place for it, a JSON file beside it.

The table on screen rounds and writes "n/a (15 of 16 rows)" so that a reader sees at once
which means are over few rows; a file for analysis keeps the number itself (the mean over
the rows that have one), NaN where there is none, and the count of those rows in a
column of its own. A KL that is +inf on some rows (the map gives zero weight to a key
softmax uses) is a value, not a gap: the mean is over the finite rows, the infinite ones
have a count column of their own, and the per-row arrays hold inf there and NaN only where
a row is undefined. Causal means leave out the single-key row 0 (``rowwise.rows_in_means``);
the per-row arrays keep every row. Plain data, no gradio.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from . import provenance
from .catalog import HEADLINE_METRICS, METRIC_INFO, REFERENCE, map_label
from .text import Message

# Arrays of one export (Q, K, V and N x N maps): refused above this, before anything is
# computed. 13 maps at N = 2,048 are 220 MB of float32.
MAX_EXPORT_BYTES = 256 * 2 ** 20


# ---------------------------------------------------------------------------------------
# The metrics table as numbers
# ---------------------------------------------------------------------------------------

def metrics_csv_table(rows: list):
    """One row per map: every metric as a float at full precision (NaN where undefined),
    counts as integers, and for each mean over rows a column "<metric>: rows defined": how
    many rows that mean is over (rows where KL is +inf are not; they have a column of their own)."""
    import pandas as pd

    from .measure.showing import UNDEFINED_ROWS, rows_in_mean

    present = {key for row in rows for key in row if key not in ("map", "label")}
    keys = [key for key in dict.fromkeys([*HEADLINE_METRICS, *METRIC_INFO]) if key in present]
    keys += sorted(present - set(keys))
    data = {"map": [row["map"] for row in rows]}
    for key in keys:
        label = METRIC_INFO.get(key, (key, ""))[0]
        data[label] = [_number(row.get(key)) for row in rows]
        if key in UNDEFINED_ROWS:
            # The rows the mean is over: a row where KL is +inf has a value, but the mean
            # leaves it out (its own count column says how many).
            data[f"{label}: rows defined"] = [rows_in_mean(row, key) if row.get("total_rows") is not None
                                              else math.nan for row in rows]
    return pd.DataFrame(data)


def _number(value):
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return int(value)
    return value


# ---------------------------------------------------------------------------------------
# A view's arrays
# ---------------------------------------------------------------------------------------

@dataclass
class ViewArrays:
    """Named arrays and the text that describes them (tokens, map labels, parameters)."""

    arrays: dict                       # name -> numpy array
    meta: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)     # explorer.provenance.record

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays.values())


def view_arrays(sample, layer=2, head=3, maps=(REFERENCE,), causal=False, m=64, seed=0, window=4) -> ViewArrays:
    """What the maps tab shows for these settings, at full resolution.

    q, k, v:            (N, d) for one head, (H, N, d) for the mean over heads
    A:                  the softmax map (N, N) or (H, N, N)
    A_hat.<map>:        each chosen map's normalised kernel map, same shape
    rows.<map>.<name>:  per-row metrics of that map (``metrics.row_metrics``): +inf where the KL is
                        infinite, NaN where undefined
    rows.softmax.entropy
    The meta holds the tokens, the English name of each array's map and the settings.
    """
    import torch

    from .diagnostics import attention
    from .measure import cost, metrics
    from .views.common import MAX_MAP_CELLS, make_feature_map, select_head

    q, k, v, layer, head, notices = select_head(sample, layer, head)
    n, d = q.shape[-2], q.shape[-1]
    heads = q.shape[0] if q.dim() == 3 else 1
    ids = [REFERENCE] + [x for x in dict.fromkeys(maps or []) if x != REFERENCE]
    if heads * n * n > MAX_MAP_CELLS:
        raise ValueError(Message("common.err_export_cells", cells=f"{heads * n * n:,}", cap=f"{MAX_MAP_CELLS:,}"))
    expected = 4 * (3 * heads * n * d + len(ids) * heads * n * n) + 8 * 6 * len(ids) * heads * n
    if expected > MAX_EXPORT_BYTES:
        raise ValueError(Message("common.err_export_bytes", count=len(ids), n=f"{n:,}", size=f"{expected / 1e6:,.0f}",
                                 cap=f"{MAX_EXPORT_BYTES / 1e6:,.0f}"))
    cost.check(cost.estimate("maps", n=n, d=d, heads=heads, maps=ids, m=m))
    with torch.inference_mode():
        reference = attention.softmax_map(q, k, causal=bool(causal))
        logits = attention.masked_logits(q, k, bool(causal))
        arrays = {"q": _np32(q), "k": _np32(k), "v": _np32(v), "A": _np32(reference)}
        names = {"A": str(map_label(REFERENCE))}
        arrays["rows.softmax.entropy"] = metrics.row_metrics(reference, reference, causal=bool(causal))[
            "entropy_reference"].cpu().numpy()
        for map_id in ids[1:]:
            try:
                fmap, extra = make_feature_map(map_id, d, m, seed, window=window, layer=layer, head=head)
            except ValueError as exc:
                notices.append(f"{map_id}: not exported ({exc}).")
                continue
            notices.extend(extra)
            approx, ill = attention.kernel_map_with_flags(q, k, fmap, causal=bool(causal))
            name = map_id          # a catalogue id is a valid array name
            arrays[f"A_hat.{name}"] = _np32(approx)
            names[f"A_hat.{name}"] = str(map_label(map_id))
            rows = metrics.row_metrics(reference, approx, v, logits, causal=bool(causal), ill_defined=ill)
            for key, values in rows.items():
                if key != "entropy_reference":
                    arrays[f"rows.{name}.{key}"] = values.cpu().numpy()
    meta = {"tokens": list(sample.tokens), "maps": names, "layer": layer,
            "head": "mean" if head is None else head, "causal": bool(causal), "m": int(m), "seed": int(seed),
            "window": int(window), "source": getattr(sample, "source", ""), "notices": [str(x) for x in notices],
            "shapes": "q, k, v: (N, d) or (H, N, d); A, A_hat.*: (N, N) or (H, N, N); rows.*: (N,) or (H, N), "
                      "+inf where a row's KL is infinite (the map gives zero weight to a key softmax uses), "
                      "NaN where a row has no value",
            "means": "the tables' means over rows leave out row 0 of each head when causal (a single key); "
                     "rows.* keep every row"}
    settings = {"layer": layer, "head": meta["head"], "maps": ids, "causal": bool(causal), "m": int(m),
                "seed": int(seed), "window": int(window)}
    return ViewArrays(arrays, meta, provenance.record("maps-arrays", samples=[sample], settings=settings,
                                                      seeds=[int(seed)]))


def _np32(t) -> np.ndarray:
    return np.ascontiguousarray(t.detach().float().cpu().numpy())


def write_npz(view: ViewArrays, path) -> str:
    """The arrays plus ``meta_json`` and ``provenance`` (unicode strings of JSON: they load
    with allow_pickle=False)."""
    np.savez_compressed(path, **view.arrays, meta_json=np.array(json.dumps(view.meta, ensure_ascii=False)),
                        provenance=np.array(provenance.to_json(view.provenance)))
    return str(path)


def write_safetensors(view: ViewArrays, path) -> str:
    """The arrays; the meta and the provenance as JSON in the header's metadata, under
    "meta_json" and "provenance"."""
    from safetensors.numpy import save_file

    save_file({k: np.ascontiguousarray(a) for k, a in view.arrays.items()}, str(path),
              metadata={"meta_json": json.dumps(view.meta, ensure_ascii=False),
                        "provenance": provenance.to_json(view.provenance)})
    return str(path)


def write_csv(table, path, record: dict | None) -> list[str]:
    """``table`` (a DataFrame) as CSV at full precision ("NaN" and "inf" spelled out), and,
    with a ``record``, its provenance beside it (``provenance.sidecar_path``: the same stem,
    ``.provenance.json``) naming the CSV's SHA-256. Returns the paths written."""
    table.to_csv(path, index=False, na_rep="NaN")
    if record is None:
        return [str(path)]
    return [str(path), str(provenance.write_sidecar(record, path, files=[path]))]
