"""Benchmark for learned maps and hybrids on the embedded MiniLM:

- one head (layer 2, head 3 by default): Hedgehog and the LUNA-style map (m = 64) trained
  on the training texts, their held-out median row KL beside elu+1's, FAVOR+'s and
  Taylor-2's, and the ratio elu+1 / learned (target: LUNA >= 3x);
- with --all-heads, every head trained jointly: seconds per head, and the median over the
  72 heads of held-out KL to softmax for both learned kinds beside the fixed maps;
- with --all-heads, model level: sentence-embedding cosine to the unmodified model with
  every layer linear (elu+1, Hedgehog, LUNA) and with the best k = 1, 2, 3 softmax layers
  kept (greedy).

Run: python scripts/bench_learned.py [--steps 300] [--layer 2 --head 3] [--all-heads] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from explorer import maps as feature_maps
from explorer.experiments import hybrids, learning  # noqa: E402
from explorer.maps import learned  # noqa: E402
from explorer.sources.text import get_model  # noqa: E402

TEXTS = Path(__file__).resolve().parents[1] / "assets" / "texts"


def one_head(train, heldout, args) -> dict:
    """Both learned kinds on one head, with the fixed maps, held-out median row KL."""
    from explorer.sources import from_text
    cache = {}

    def source(text):
        if text not in cache:
            cache[text] = from_text(text)
        return cache[text]

    exp = {kind: learning.experiment(train, heldout, kind=kind, layer=args.layer, head=args.head,
                                    num_features=args.features, steps=args.steps, seed=args.seed, source=source,
                                    hedgehog=learned.Hedgehog(32, 2) if kind == "luna" else None)
           for kind in ("hedgehog", "luna")}
    print(f"Layer {args.layer}, head {args.head}: trained on {len(train)} texts, judged on {len(heldout)} held-out texts "
          f"(median over every row of every held-out text)")
    print(f"{'map':<12}{'m':>6}{'KL median':>12}{'KL mean':>10}{'elu+1 / map':>13}{'train s':>9}")
    q = {**exp["hedgehog"].quality, "luna": exp["luna"].quality["luna"]}
    rows = {}
    dims = {"hedgehog": args.features, "luna": args.features, "elu1": 32, "favor_plus": args.features,
            "taylor2": feature_maps.create("taylor2", 32).num_features}
    elu = float(q["elu1"]["kl_median"])
    for name in ("luna", "hedgehog", "elu1", "favor_plus", "taylor2"):
        med, mean = float(q[name]["kl_median"]), float(q[name]["kl"])
        seconds = exp[name].run.seconds if name in exp else float("nan")
        rows[name] = {"m": dims[name], "kl_median": med, "kl_mean": mean, "ratio": elu / med, "train_s": seconds}
        print(f"{name:<12}{dims[name]:>6}{med:>12.4f}{mean:>10.4f}{elu / med:>12.1f}x{seconds:>9.1f}")
    for name in ("luna", "hedgehog"):
        ratio = rows[name]["ratio"]
        print(f"Target: {name} median row KL >= 3x lower than elu+1's: {ratio:.1f}x  {'PASS' if ratio >= 3 else 'MISS'}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--layer", type=int, default=2)
    parser.add_argument("--head", type=int, default=3)
    parser.add_argument("--all-heads", action="store_true", help="also train every head and run the hybrids (minutes)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    train, heldout = learning.read_texts(TEXTS / "train.txt"), learning.read_texts(TEXTS / "heldout.txt")
    head_rows = one_head(train, heldout, args)
    if not args.all_heads:
        if args.json:
            args.json.write_text(json.dumps({"one_head": head_rows}, indent=2))
        return
    print()

    start = time.perf_counter()
    exp = learning.hedgehog_experiment(train, heldout, num_features=args.features, steps=args.steps, seed=args.seed)
    total = time.perf_counter() - start
    luna = learning.experiment(train, heldout, kind="luna", num_features=args.features, steps=args.steps,
                              seed=args.seed, hedgehog=exp.feature_map)
    exp.quality["luna"] = luna.quality["luna"]
    print(f"LUNA m={args.features}: {exp.quality['luna']['kl'].numel()} heads trained jointly in "
          f"{luna.run.seconds:.1f} s ({luna.run.seconds / exp.quality['luna']['kl'].numel():.2f} s per head)")
    n_heads = exp.quality["hedgehog"]["kl"].numel()
    per_head = exp.run.seconds / n_heads
    print(f"Hedgehog m={args.features}: {n_heads} heads trained jointly in {exp.run.seconds:.1f} s "
          f"({per_head:.2f} s per head; {total:.1f} s with reading {len(train)}+{len(heldout)} texts); "
          f"loss {exp.run.losses[0]:.3f} -> {exp.run.losses[-1]:.3f} (row cross-entropy, training texts)")
    print(f"\nHeld-out texts ({len(heldout)}), median / mean over heads")
    print(f"{'map':<12}{'m':>6}{'KL median':>12}{'KL mean':>10}{'entropy':>10}{'monotonic':>11}")
    dims = {"hedgehog": args.features, "luna": args.features, "elu1": 32, "favor_plus": args.features,
            "taylor2": feature_maps.create("taylor2", 32).num_features}
    rows = {}
    for name in ("luna", "hedgehog", "elu1", "favor_plus", "taylor2"):
        q = exp.quality[name]
        rows[name] = {"m": dims[name], "kl_median": q["kl"].median().item(), "kl_mean": q["kl"].mean().item(),
                      "entropy": q["entropy"].mean().item(), "monotonicity": q["monotonicity"].mean().item()}
        r = rows[name]
        print(f"{name:<12}{r['m']:>6}{r['kl_median']:>12.4f}{r['kl_mean']:>10.4f}{r['entropy']:>10.3f}{r['monotonicity']:>11.3f}")
    print(f"{'softmax':<12}{'':>6}{'':>12}{'':>10}{exp.quality['softmax']['entropy'].mean().item():>10.3f}{1.0:>11.3f}")
    ratio = rows["elu1"]["kl_median"] / rows["hedgehog"]["kl_median"]
    print(f"\nTarget: Hedgehog median KL >= 3x lower than elu+1's: {ratio:.1f}x  {'PASS' if ratio >= 3 else 'MISS'}")
    luna_ratio = rows["elu1"]["kl_median"] / rows["luna"]["kl_median"]
    print(f"Target: LUNA median KL >= 3x lower than elu+1's: {luna_ratio:.1f}x  {'PASS' if luna_ratio >= 3 else 'MISS'}")
    print(f"Target: <= 30 s per head: {per_head:.2f} s  {'PASS' if per_head <= 30 else 'MISS'}")

    loaded = get_model()
    elu = feature_maps.create("elu1", 32)
    hedgehog = exp.run.feature_map
    model_rows = []
    print("\nModel level: sentence-embedding cosine to the original model (held-out texts)")
    luna_map = luna.feature_map
    for name, map_for in (("elu1", lambda i: elu), ("hedgehog", lambda i: hedgehog.select(i)),
                          ("luna", lambda i: luna_map.select(i))):
        steps = hybrids.greedy_softmax_layers(loaded, heldout, map_for, budget=3)
        for kept, report in steps:
            model_rows.append({"map": name, "softmax_layers": list(kept), "cosine_mean": report.cosine_mean,
                               "cosine_min": report.cosine_min})
            label = "every layer linear" if not kept else f"softmax kept in layers {list(kept)}"
            print(f"  {name:<9} k={len(kept)}  {label:<34} cosine mean {report.cosine_mean:.4f}  min {report.cosine_min:.4f}")
    if args.json:
        args.json.write_text(json.dumps({"one_head": head_rows, "training_s": exp.run.seconds, "per_head_s": per_head,
                                         "luna_training_s": luna.run.seconds, "heldout": rows,
                                         "model": model_rows, "kl_ratio_elu1_over_hedgehog": ratio}, indent=2))


if __name__ == "__main__":
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    main()
