"""The per-layer table of the shipped linearized maps as a figure: each layer's attention-output
error on held-out text, for the trained Hedgehog maps and the untrained baselines.

    python scripts/figure_linearized_layers.py      # docs/linearize-layers.png + .json, table on stdout

Held out: the first ``--per-language`` passages of assets/texts/linearize/{en,zh}/heldout.txt
and ``--pydoc`` of the standard library's help topics (text nobody here wrote), each read up to
``--tokens`` tokens. The error of a layer is ||Y^ - Y||_F / ||Y||_F against the layer's own
softmax output (explorer.linearize.judge). One thread; about 5 minutes on 2 shared cores.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from explorer.linearize import judge, maps, texts  # noqa: E402
from explorer.sources.models import get_model  # noqa: E402

# name shown -> (kind, window, sinks); each trained set beside elu+1 with the same exact keys
SETS = {"elu+1": ("elu1", 0, 0), "FAVOR+": ("favor_plus", 0, 0), "Hedgehog": ("hedgehog", 0, 0),
        "elu+1, w = 64": ("elu1", 64, 0), "Hedgehog, w = 64": ("hedgehog", 64, 0),
        "elu+1, sink + w = 16": ("elu1", 16, 1), "Hedgehog, sink + w = 16": ("hedgehog", 16, 1)}
TRAINED = ("Hedgehog", "Hedgehog, w = 64", "Hedgehog, sink + w = 16")
COLOURS = {"elu+1": "#9e9e9e", "FAVOR+": "#c7a76c", "Hedgehog": "#1f77b4", "elu+1, w = 64": "#d62728",
           "Hedgehog, w = 64": "#2ca02c", "elu+1, sink + w = 16": "#ff9896", "Hedgehog, sink + w = 16": "#9467bd"}


def figure(errors: dict, count: dict):
    import plotly.graph_objects as go
    fig = go.Figure()
    layers = list(range(len(next(iter(errors.values())))))
    for name, values in errors.items():
        dash = "dot" if name.startswith(("elu", "FAVOR")) else "solid"
        fig.add_trace(go.Scatter(x=layers, y=values, name=name, mode="lines+markers",
                                 line=dict(color=COLOURS[name], dash=dash, width=2), marker=dict(size=6)))
    fig.update_layout(
        title=dict(text=("SmolLM2-135M, attention-output error per layer on held-out text<br>"
                         "<sup>layers where Hedgehog's error is ≤ ⅓ of elu+1's (pure linear): "
                         + ", ".join(f"{name} {count[name]}/30" for name in TRAINED if name in count)
                         + "</sup>"), font=dict(size=15)),
        xaxis=dict(title="layer", dtick=1, range=[-0.5, len(layers) - 0.5]), yaxis=dict(title="‖Ŷ − Y‖ / ‖Y‖ (log)", type="log"),
        template="plotly_white", height=560, legend=dict(orientation="h", y=-0.18))
    return fig


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-language", type=int, default=4)
    parser.add_argument("--pydoc", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=384)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "linearize-layers.png")
    parser.add_argument("--replot", action="store_true", help="redraw from the .json beside --out, measuring nothing")
    args = parser.parse_args(argv)
    if args.replot:
        saved = json.loads(args.out.with_suffix(".json").read_text(encoding="utf-8"))
        figure(saved["errors"], saved["at_most_a_third_of_elu1"]).write_image(
            str(args.out), format="png", width=1400, height=560, scale=1.5)
        return 0
    torch.set_num_threads(1)
    loaded = get_model(maps.MODEL)
    sample = [p for lang in texts.LANGS for p in texts.load(lang, "heldout")[:args.per_language]]
    sample += texts.pydoc_topics(args.pydoc)
    sets = {name: maps.layer_maps(kind, window, sinks=sinks) for name, (kind, window, sinks) in SETS.items()}
    errors = judge.layer_errors(loaded, sample, sets, max_tokens=args.tokens)
    count = {name: sum(judge.ratio_holds(errors, name, "elu+1", 1 / 3)) for name in TRAINED}
    fig = figure(errors, count)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.write_image(str(args.out), format="png", width=1400, height=560, scale=1.5)
    args.out.with_suffix(".json").write_text(json.dumps(
        {"texts": len(sample), "tokens_per_text": args.tokens, "errors": errors, "at_most_a_third_of_elu1": count},
        indent=1), encoding="utf-8")
    names = list(SETS)
    print("| layer | " + " | ".join(names) + " |\n|" + "---|" * (len(names) + 1))
    for layer in range(len(errors[names[0]])):
        print(f"| {layer} | " + " | ".join(f"{errors[n][layer]:.3f}" for n in names) + " |")
    print(json.dumps(count))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
