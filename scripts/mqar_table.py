"""Train the recall table (every mixer x widths x seeds on one MQAR task) and write
assets/mqar/results.json, the table the package ships.

    nice -n 10 python scripts/mqar_table.py              # the whole grid, two workers
    nice -n 10 python scripts/mqar_table.py --jobs 1 --out /tmp/results.json
    nice -n 10 python scripts/mqar_table.py --mixers based hedgehog --add   # new mixers into the shipped table

With ``--add`` the points trained are added to the table already at --out (which must have
been trained with the same task, training and package versions: ``mqar_table.merge``)
instead of replacing it.

Each point trains on one thread; its result does not depend on the worker that ran it.
Each finished point is appended to results.partial.jsonl beside the output, and a run that
was interrupted resumes from it (points trained with other settings are not reused); the
file is removed once the table is written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from explorer.experiments import mqar, mqar_table  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mixers", nargs="+", choices=mqar.MIXERS, default=list(mqar.MIXERS))
    parser.add_argument("--widths", nargs="+", type=int, default=list(mqar_table.WIDTHS))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(mqar_table.SEEDS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "assets" / "mqar" / "results.json")
    parser.add_argument("--add", action="store_true", help="add the points to the table at --out")
    args = parser.parse_args(argv)

    task, training, head_dim = mqar.Task(), mqar.Training(), mqar.ModelShape().head_dim
    points = mqar_table.grid(args.mixers, args.widths, args.seeds)
    print(f"{len(points)} models: {task}, {training}, head_dim {head_dim}", flush=True)

    def show(r):
        print(f"{r.mixer:>15} width {r.width:>3} seed {r.seed}: accuracy {r.accuracy:.3f}, "
              f"state {r.state_bytes:>7,} B, {r.seconds:.0f} s", flush=True)

    partial = args.out.with_name(args.out.stem + ".partial.jsonl")
    settings = repr((task, training, head_dim))
    done = {}
    if partial.exists():
        for line in partial.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry.pop("settings") == settings:
                result = mqar.RecallResult(**entry)
                done[mqar_table.Point(result.mixer, result.width, result.seed)] = result
    print(f"{len(done)} of them already trained ({partial.name})", flush=True)

    def keep(r):
        show(r)
        with partial.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({**r.as_dict(), "settings": settings}) + "\n")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    todo = [p for p in points if p not in done]
    if todo:
        mqar_table.run(todo, task, training, head_dim, jobs=args.jobs, on_result=keep)
    for line in partial.read_text(encoding="utf-8").splitlines() if todo else ():
        entry = json.loads(line)
        if entry.pop("settings") == settings:
            result = mqar.RecallResult(**entry)
            done[mqar_table.Point(result.mixer, result.width, result.seed)] = result
    results = [done[p] for p in points]
    table = mqar_table.record(results, task, training, head_dim, sum(r.seconds for r in results))
    if args.add:
        table = mqar_table.merge(json.loads(args.out.read_text(encoding="utf-8")), table)
    args.out.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.unlink(missing_ok=True)
    print(f"wrote {args.out} (training: {table['seconds']:.0f} s, summed over the models)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
