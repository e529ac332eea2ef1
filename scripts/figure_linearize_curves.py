"""The linearized SmolLM2's two figures, measured on texts: perplexity against the number k of
layers kept softmax (greedy, first k, evenly spaced; one set of curves per map kind) and the
per-layer sensitivity of the first kind.

    python scripts/figure_linearize_curves.py                                  # held-out texts, hedgehog and elu+1
    python scripts/figure_linearize_curves.py --sets hedgehog:0 hedgehog:64 --ks 0 2 4 6 8 --max-tokens 128
    python scripts/figure_linearize_curves.py --texts FILE --sets elu1:0 --ks 0 1 2 --max-tokens 16   # a quick check

Writes build/linearize/keep-k-<lang>.html, sensitivity-<lang>.html (plotly, self-contained: no
CDN) and numbers.json (every number the figures show, with the layers each rule kept), and
prints the table: the original's perplexity, every layer linearized for each set, and the
smallest k whose greedy perplexity is within 10 % of the original's. The greedy search reads
L + (L - 1) + ... forwards per text: minutes at full size on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from explorer.__main__ import _held_out_texts, _progress, _read_texts  # noqa: E402
from explorer.figures import keep_softmax_curves, sensitivity_bars  # noqa: E402
from explorer.figures.style import said_figure  # noqa: E402
from explorer.linearize import keep_softmax, sensitivity  # noqa: E402
from explorer.linearize.evaluation import MAX_FORWARD_TOKENS  # noqa: E402

README_PNG = ROOT / "docs" / "linearize-keep-k.png"


def parse_set(text: str) -> tuple[str, int, int]:
    """"hedgehog:64" -> ("hedgehog", 64, 0); "hedgehog:16:1" -> ("hedgehog", 16, 1): kind, window, sinks."""
    kind, _, exact = text.partition(":")
    window, _, sinks = exact.partition(":")
    if not window.isdigit() or not (sinks.isdigit() or not sinks):
        raise argparse.ArgumentTypeError(f"expected KIND:WINDOW[:SINKS] such as hedgehog:0 or hedgehog:16:1, got {text!r}")
    return kind, int(window), int(sinks or 0)


def within(curve: dict, share: float = 0.10):
    """The smallest k whose greedy perplexity is within ``share`` of the original's, or None."""
    limit = curve["original_perplexity"] * (1 + share)
    return next((k for k, value in zip(curve["ks"], curve["greedy"]) if value <= limit), None)


def _draw(curves: list, rows: list, args) -> None:
    """The figures of ``curves`` (perplexity against k) and ``rows`` (the first set's
    sensitivity) into ``args.out``, in both languages, and the README's PNG if asked."""
    kind, window, sinks = curves[0]["kind"], curves[0]["window"], curves[0].get("sinks", 0)
    curves_fig, bars_fig = keep_softmax_curves(curves), sensitivity_bars(rows, kind, window, sinks=sinks)
    for lang in ("en", "zh"):
        said_figure(curves_fig, lang).write_html(args.out / f"keep-k-{lang}.html", include_plotlyjs=True)
        said_figure(bars_fig, lang).write_html(args.out / f"sensitivity-{lang}.html", include_plotlyjs=True)
    if args.png:
        curves_fig.write_image(str(args.png), format="png", width=1400, height=620,
                                                             scale=1.5)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=parse_set, nargs="+", default=[("hedgehog", 0, 0), ("elu1", 0, 0)],
                        metavar="KIND:WINDOW[:SINKS]")
    parser.add_argument("--ks", type=int, nargs="+", help="the k to measure (default 0 ... 30)")
    parser.add_argument("--texts", metavar="FILE", help="UTF-8 passages separated by blank lines (default: held out)")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--max-forward-tokens", type=int, default=50 * MAX_FORWARD_TOKENS)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "linearize")
    parser.add_argument("--png", type=Path, metavar="FILE", nargs="?", const=README_PNG,
                        help=f"also write the English perplexity-against-k figure as a PNG (alone: {README_PNG.name}, "
                             "the README's)")
    parser.add_argument("--replot", action="store_true",
                        help="redraw the figures from OUT/numbers.json, measuring nothing")
    args = parser.parse_args(argv)
    if args.replot:
        saved = json.loads((args.out / "numbers.json").read_text())
        _draw(saved["curves"], saved["sensitivity"], args)
        return 0
    texts = _read_texts(args.texts) if args.texts else _held_out_texts()
    curves = []
    for kind, window, sinks in args.sets:
        curves.append(keep_softmax(texts, kind, window, ks=args.ks, max_tokens=args.max_tokens,
                                   max_forward_tokens=args.max_forward_tokens, sinks=sinks,
                                   progress=lambda f, k=kind, w=window, s=sinks: _progress(f, f"{k} w={w} s={s}")))
    kind, window, sinks = args.sets[0]
    rows = sensitivity(texts, kind, window, max_tokens=args.max_tokens, max_forward_tokens=args.max_forward_tokens,
                       sinks=sinks)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "numbers.json").write_text(json.dumps({"curves": curves, "sensitivity": rows,
                                                       "texts": len(texts), "max_tokens": args.max_tokens}, indent=1))
    _draw(curves, rows, args)
    print(f"original perplexity {curves[0]['original_perplexity']:.3f} on {len(texts)} texts "
          f"(at most {args.max_tokens} tokens each)")
    for curve in curves:
        k = within(curve)
        print(f"{curve['kind']:>10} w={curve['window']:<4} s={curve.get('sinks', 0)} k={curve['ks'][0]}: {curve['greedy'][0]:>12.3f}   "
              f"smallest k within 10 %: {k if k is not None else 'none measured'}   "
              f"greedy no worse than both rules at every k: "
              f"{all(g <= min(f, e) for g, f, e in zip(curve['greedy'], curve['first'], curve['even']))}")
    print(f"most sensitive layers ({kind} w={window}): "
          f"{[r['layer'] for r in sorted(rows, key=lambda r: r['rank'])[:6]]}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
