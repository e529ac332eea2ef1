"""Train the shipped linearized maps of SmolLM2-135M: every layer, Hedgehog at w = 0, at w = 64,
and at w = 16 beside one attention sink (token 0 kept exact).

    python scripts/train_linearized_maps.py                 # writes assets/maps/linearized-smollm2-*.safetensors
    python scripts/train_linearized_maps.py --layers 0 --steps 3 --out /tmp/x   # a quick check

Reproducible bit for bit: one thread, fixed seeds (layer L trains with seed + L), the training
windows fixed by the texts in assets/texts/linearize/*/train.txt. Each variant costs one
capture of 48 windows through the model and 30 layers x 100 small Adam steps; run it with
``nice``. The time printed per layer is the one to quote, measured on the machine at hand.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from explorer.linearize import build, maps  # noqa: E402
from explorer.sources.models import get_model  # noqa: E402

VARIANTS = (("hedgehog", 0, 0), ("hedgehog", 64, 0), ("hedgehog", 16, 1))


def parse_variant(text: str) -> tuple[str, int, int]:
    """"hedgehog:16:1" -> ("hedgehog", 16, 1): kind, window, sinks."""
    kind, _, exact = text.partition(":")
    window, _, sinks = exact.partition(":")
    return kind, int(window or 0), int(sinks or 0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=str, default="all", help="'all' or comma-separated layer indices")
    parser.add_argument("--variants", type=str, default=",".join(f"{k}:{w}:{s}" for k, w, s in VARIANTS),
                        help="kind:window:sinks, comma-separated")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--per-language", type=int, default=24, help="training windows of 256 tokens per language")
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=ROOT / "assets" / "maps")
    args = parser.parse_args(argv)

    torch.set_num_threads(1)            # the same bytes on every machine, and polite on shared cores
    torch.manual_seed(args.seed)
    loaded = get_model(maps.MODEL)
    layers = None if args.layers == "all" else [int(x) for x in args.layers.split(",")]
    variants = [parse_variant(v) for v in args.variants.split(",")]
    start = time.perf_counter()
    data = build.training_data(loaded, args.per_language, layers=layers)
    print(f"captured {len(next(iter(data.values())))} windows x {len(data)} layers in "
          f"{time.perf_counter() - start:.0f} s", flush=True)

    def report(layer, kind, window, sinks, losses):
        print(f"{kind} {maps.describe(window, sinks)} layer {layer:2d}: loss {losses[0]:.3f} -> {losses[-1]:.3f} "
              f"({time.perf_counter() - start:.0f} s)", flush=True)

    sets = build.train_sets(data, variants, steps=args.steps, batch_size=args.batch, seed=args.seed,
                            num_features=args.features, progress=report)
    args.out.mkdir(parents=True, exist_ok=True)
    settings = {"steps": args.steps, "batch": args.batch, "per_language": args.per_language, "seed": args.seed,
                "sequence_length": build.LENGTH, "texts": "assets/texts/linearize/{en,zh}/train.txt",
                "loss": "per-head relative output error", "layers": sorted(data)}
    for (kind, window, sinks), layer_maps in sets.items():
        path = args.out / maps.map_path(kind, window, sinks=sinks).name
        maps.write_maps(layer_maps, path, **settings, final_loss=[round(x, 6) for x in layer_maps.info["final_loss"]])
        print(f"wrote {path} ({path.stat().st_size / 2 ** 20:.2f} MB)")
    print(json.dumps({"seconds": round(time.perf_counter() - start)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
