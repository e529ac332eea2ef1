"""A probe's files: one CSV that grows a text at a time, then Parquet and provenance beside it.

``run(corpus, settings, out)`` writes ``out.csv`` as it goes (every text's rows in one append,
flushed), so a run that is stopped keeps every text it finished; run again with the same
settings it skips them (a text is done when all its rows are there for its line index and
the SHA-256 of its words) and goes on. When every text of its shard is done it writes
``out.parquet`` (the same table, the provenance in its metadata) and ``out.json`` (the
provenance). ``merge(parts, out)`` joins shard tables into one, refusing shards computed
under other settings or from another corpus, and dropping rows present twice.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pandas as pd

from .. import stopping
from .probe import COLUMNS, KEY_COLUMNS, Corpus, Prober, ProbeSettings, provenance


def paths(out) -> dict:
    """The files of a probe written to ``out`` (a stem; a .csv or .parquet suffix is dropped)."""
    out = Path(out)
    if out.suffix in (".csv", ".parquet", ".json"):
        out = out.with_suffix("")
    return {kind: out.with_name(out.name + "." + kind) for kind in ("csv", "parquet", "json")}


def shard_stem(out, index: int, count: int) -> Path:
    """Where shard ``index`` of ``count`` writes: ``out.shard-3-of-8`` (one stem when count is 1)."""
    stem = paths(out)["csv"].with_suffix("")
    return stem if count == 1 else stem.with_name(f"{stem.name}.shard-{index}-of-{count}")


def parse_shard(text: str) -> tuple[int, int]:
    """"3/8" -> (3, 8), or ValueError."""
    try:
        index, count = (int(x) for x in str(text).split("/"))
    except ValueError:
        raise ValueError(f"--shard: expected i/n such as 0/4, got {str(text)[:40]!r}") from None
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"--shard: i/n needs n >= 1 and 0 <= i < n, got {index}/{count}")
    return index, count


def read_table(path) -> pd.DataFrame:
    """A probe's CSV as written (floats exactly, inf kept apart from NaN)."""
    return pd.read_csv(path, float_precision="round_trip", keep_default_na=False,
                       na_values=[""], dtype={"text_sha256": str, "settings_sha256": str})


def tidy(table: pd.DataFrame, maps=None) -> pd.DataFrame:
    """Rows in the order of the key (maps in the order asked), columns in the order of COLUMNS."""
    table = table.copy()
    order = list(maps) if maps else list(dict.fromkeys(table["map_id"]))
    table["_map_order"] = table["map_id"].map({map_id: i for i, map_id in enumerate(order)})
    table = table.sort_values(["text_index", "layer", "head", "_map_order"], kind="stable")
    columns = [c for c in COLUMNS if c in table.columns] + [c for c in table.columns if c not in COLUMNS]
    return table.drop(columns="_map_order")[[c for c in columns if c != "_map_order"]].reset_index(drop=True)


def _done_texts(csv: Path, settings: ProbeSettings, per_text: int) -> tuple[set, pd.DataFrame | None]:
    """(keys (index, sha) of the texts whose rows are all in ``csv``, the rows kept). Rows
    of a text cut short are dropped (the file is rewritten without them): it is done again."""
    if not csv.exists() or csv.stat().st_size == 0:
        return set(), None
    _drop_partial_line(csv)
    try:
        table = read_table(csv)
    except (pd.errors.ParserError, ValueError) as exc:
        raise ValueError(f"{csv}: not a probe table this run can resume ({exc}); choose another --out") from None
    if table.empty:
        return set(), None
    if set(table.columns) != set(COLUMNS):
        # Rows appended now would not line up with its header (an engine with other metrics wrote it).
        raise ValueError(f"{csv}: its columns are not the ones this engine writes (missing: "
                         f"{sorted(set(COLUMNS) - set(table.columns))[:5]}, extra: "
                         f"{sorted(set(table.columns) - set(COLUMNS))[:5]}); choose another --out, or delete it "
                         "to start again")
    digests = set(table["settings_sha256"].astype(str))
    if digests != {settings.digest()}:
        raise ValueError(f"{csv}: written under other settings (maps, layers, heads, m, seed, causal or model); "
                         "choose another --out, or delete it to start again")
    counts = table.groupby(["text_index", "text_sha256"]).size()
    done = {key for key, count in counts.items() if count == per_text}
    if len(done) < len(counts):
        keep = [(i, h) in done for i, h in zip(table["text_index"], table["text_sha256"])]
        table = table[keep]
        _write_csv(table, csv)
    return done, table


def _drop_partial_line(csv: Path) -> None:
    """Cut a last line that a stop left half written (the file then ends without a newline)."""
    with open(csv, "rb+") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 1))
        if handle.read(1) == b"\n":
            return
        handle.seek(0)
        data = handle.read()
        handle.truncate(data.rfind(b"\n") + 1)


def _write_csv(table: pd.DataFrame, csv: Path) -> None:
    """Replace ``csv`` by ``table`` at once (a stop in between leaves the old file)."""
    tmp = csv.with_name(csv.name + ".tmp")
    table.to_csv(tmp, index=False)
    os.replace(tmp, csv)


def _append(rows: list[dict], csv: Path) -> None:
    frame = pd.DataFrame(rows, columns=[c for c in COLUMNS if c in rows[0]] + [c for c in rows[0] if c not in COLUMNS])
    header = not csv.exists() or csv.stat().st_size == 0
    text = frame.to_csv(index=False, header=header)
    with open(csv, "a", encoding="utf-8", newline="") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


def _progress_line(done: int, total: int, started: float, skipped: int) -> None:
    elapsed = time.perf_counter() - started
    rate = elapsed / max(1, done - skipped)
    left = rate * (total - done)
    width = 30
    bar = "#" * int(width * done / max(1, total))
    print(f"\r[{bar:<{width}}] {done}/{total} texts  {elapsed:6.1f} s, ~{left:5.0f} s left", end="",
          file=sys.stderr, flush=True)


def run(corpus: Corpus, settings: ProbeSettings, out, device: str = "cpu", shard=(0, 1), progress=None,
        should_stop=None) -> dict:
    """Probe every text of ``corpus`` in ``shard`` (index, count) into the files at ``out``
    (see ``paths``; with a shard, ``shard_stem``). ``progress(done, total, started, skipped)``
    hears about each text (default: a bar on stderr). Returns {"table": DataFrame or None
    when stopped, "paths", "failed": [(index, why)], "provenance"}."""
    prober = Prober(settings, device=device, should_stop=should_stop)
    settings = prober.settings
    files = paths(shard_stem(out, *shard))
    files["csv"].parent.mkdir(parents=True, exist_ok=True)
    per_text = len(settings.layers) * len(settings.heads) * len(settings.maps)
    done, _ = _done_texts(files["csv"], settings, per_text)
    from .probe import text_digest

    texts = corpus.shard(*shard)
    todo = [(i, t) for i, t in texts if (i, text_digest(t)) not in done]
    skipped = len(texts) - len(todo)
    progress = progress or _progress_line
    started = time.perf_counter()
    failed = []
    progress(skipped, len(texts), started, skipped)
    for count, (index, text) in enumerate(todo, start=skipped + 1):
        stopping.check(should_stop)
        try:
            rows = prober.rows(index, text)
        except (stopping.Stopped, stopping.PastDeadline):
            raise
        except ValueError as exc:            # a text the model cannot read: said, and the others go on
            failed.append((index, str(exc)))
            continue
        _append(rows, files["csv"])
        progress(count, len(texts), started, skipped)
    if progress is _progress_line:
        print(file=sys.stderr)
    record = provenance(settings, device, corpus, shard)
    record["failed"] = [{"text_index": i, "why": why} for i, why in failed]
    table = finish(files, settings, record, texts)
    return {"table": table, "paths": files, "failed": failed, "provenance": record}


def finish(files: dict, settings: ProbeSettings, record: dict, texts=()) -> pd.DataFrame | None:
    """Write the Parquet and the provenance of a complete CSV; returns the tidy table.
    ``texts`` (line index, text) are those the run was given: the ones the table holds go
    into the provenance's ``texts`` (``texts_read``)."""
    if not files["csv"].exists():
        table = pd.DataFrame(columns=list(COLUMNS))
    else:
        table = tidy(read_table(files["csv"]), settings.maps)
    record["texts"] = texts_read(table, texts)
    write(table, files, record)
    return table


TEXT_ROLE = "probe"


def texts_read(table: pd.DataFrame, texts) -> list[dict]:
    """The provenance's ``texts`` of a probe: each text of ``texts`` (line index, text) that
    ``table`` holds, told by digest as a corpus is too large to repeat (explorer.provenance,
    ``text_digest``): role "probe", its line ``index``, ``sha256`` of its UTF-8, ``chars``,
    and ``tokens``, how many the model read (after ``max_tokens``), in line order."""
    from .probe import text_digest

    held = table.drop_duplicates(["text_index", "text_sha256"])
    tokens = {(int(i), str(h)): int(n) for i, h, n in zip(held["text_index"], held["text_sha256"], held["n_tokens"])}
    out = []
    for index, text in sorted(texts, key=lambda pair: pair[0]):
        key = (int(index), text_digest(text))
        if key in tokens:
            out.append({"role": TEXT_ROLE, "index": key[0], "sha256": key[1], "chars": len(text),
                        "tokens": tokens[key]})
    return out


def write(table: pd.DataFrame, files: dict, record: dict) -> None:
    """The table as CSV and Parquet (the provenance in its metadata) and the provenance as JSON."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    _write_csv(table, files["csv"])
    arrow = pa.Table.from_pandas(table, preserve_index=False)
    meta = dict(arrow.schema.metadata or {})
    meta[b"explorer.probe"] = json.dumps(record, sort_keys=True).encode()
    pq.write_table(arrow.replace_schema_metadata(meta), files["parquet"])
    files["json"].write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------
# Joining shards
# ---------------------------------------------------------------------------------------

def merge(parts, out) -> dict:
    """Join the shard tables ``parts`` (CSV paths or stems, each with its .json beside it)
    into one at ``out``. ValueError when the shards disagree on settings or corpus, or when
    one line index holds different texts. Rows present in several shards are kept once.
    Returns {"table", "paths", "missing": how many texts of the corpus no shard holds, "failed"}."""
    parts = [paths(p) for p in parts]
    if not parts:
        raise ValueError("merge: name at least one shard table")
    records, tables = [], []
    for files in parts:
        if not files["json"].exists():
            raise ValueError(f"{files['json']}: missing; merge shards that have finished (their provenance is "
                             "written at the end)")
        records.append(json.loads(files["json"].read_text(encoding="utf-8")))
        tables.append(read_table(files["csv"]))
    first = records[0]
    for files, record in zip(parts, records):
        if record.get("settings_sha256") != first.get("settings_sha256"):
            raise ValueError(f"{files['csv']}: computed under other settings than {parts[0]['csv']} "
                             f"({record.get('settings')} against {first.get('settings')})")
        if (record.get("corpus") or {}).get("sha256") != (first.get("corpus") or {}).get("sha256"):
            raise ValueError(f"{files['csv']}: from another corpus than {parts[0]['csv']}")
        if _model_files(record) != _model_files(first):
            raise ValueError(f"{files['csv']}: read by another model file than {parts[0]['csv']} "
                             f"(SHA-256 {_model_files(record)} against {_model_files(first)})")
    table = pd.concat(tables, ignore_index=True)
    texts = table.drop_duplicates(["text_index", "text_sha256"])
    clash = texts["text_index"].duplicated(keep=False)
    if clash.any():
        raise ValueError(f"merge: line(s) {sorted(set(texts.loc[clash, 'text_index']))[:10]} hold different texts "
                         "in different shards")
    table = tidy(table.drop_duplicates(list(KEY_COLUMNS)), first["settings"]["maps"])
    total = (first.get("corpus") or {}).get("texts")
    failed = sorted({f["text_index"] for r in records for f in r.get("failed", [])})
    record = merged_record(records)
    files = paths(out)
    files["csv"].parent.mkdir(parents=True, exist_ok=True)
    write(table, files, record)
    have = int(table["text_index"].nunique()) if len(table) else 0
    missing = None if total is None else max(0, int(total) - have - len(failed))
    return {"table": table, "paths": files, "missing": missing, "failed": failed}


# What each shard's record says of its own run: kept per shard in a merge, where they may differ.
SHARD_FIELDS = ("shard", "device", "created_utc", "engine", "python", "platform", "packages", "models", "failed")


def _model_files(record: dict) -> list:
    """The SHA-256 of each model file a record names, in order: what a merge must share."""
    return [file.get("sha256") for model in record.get("models") or [] for file in model.get("files") or []]


def merged_record(records: list) -> dict:
    """The provenance of shards merged: every field of the first shard's record (the same
    settings, corpus and model files in every shard, which ``merge`` checks), with what
    differs from shard to shard joined: ``created_utc`` the latest (when the last of the
    numbers was computed), ``seeds`` and ``failed`` the union, ``texts`` every text of every
    shard once, in line order; ``shard`` and ``device`` none at the top (each shard's is in
    ``shards``, with its own engine, Python, platform, packages, models and failures)."""
    first = records[0]
    record = dict(first)
    record["created_utc"] = max(str(r.get("created_utc") or "") for r in records) or None
    record["seeds"] = sorted({int(seed) for r in records for seed in r.get("seeds") or []})
    record["failed"] = sorted({(f["text_index"], f.get("why")) for r in records for f in r.get("failed") or []})
    record["failed"] = [{"text_index": i, "why": why} for i, why in record["failed"]]
    texts = {(t["index"], t["sha256"]): t for r in records for t in r.get("texts") or []}
    record["texts"] = [texts[key] for key in sorted(texts)]
    devices = {r.get("device") for r in records}
    record["device"] = devices.pop() if len(devices) == 1 else None
    record["shard"] = None
    record["shards"] = [{key: r.get(key) for key in SHARD_FIELDS} for r in records]
    return record
