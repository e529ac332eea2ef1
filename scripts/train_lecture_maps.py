"""Train the learned maps the lecture shows from its first second, and write them to
assets/maps/ as safetensors (about 100 KB each).

The lecture's chapters use layer 2 of the embedded MiniLM (chapter 5 shows head 0; the
learn tab opens on head 3; chapter 6 needs every head of the layer), so this trains
Hedgehog and the LUNA-style map for all 12 heads of layer 2 at once (each head has its
own parameters; the loss is the mean over heads), on the app's training texts
(assets/texts/train.txt, also joined into longer passages), with fixed seeds: running it again writes the same maps, up to
float rounding on other hardware. ``explorer.maps.learned.pretrained(kind, layer, head)``
loads them.

When the packaged causal SmolLM2-135M is installed and converted, it also trains a
Hedgehog and a LUNA map for every head of SmolLM2's layer ``chapters.SHIPPED_MAP_LAYERS``
names (chapter 5's default head on that model, ``chapters.MODEL_HEADS``, is in it), against
the model's *causal* softmax (each query sees keys j <= i), on the same texts and seeds
(``explorer.experiments.learning.train_map`` on a causal batch), and writes
{hedgehog,luna}-smollm2-layerL.safetensors (about 150 KB each).
``pretrained(kind, layer, head, model="SmolLM2-135M")`` loads them.

Run: python scripts/train_lecture_maps.py [--steps 300] [--features 64] [--layer 2]
                                          [--models minilm,smollm2] [--kinds hedgehog,luna]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from explorer.lecture.chapters import SHIPPED_MAP_LAYERS, causal_lecture_head  # noqa: E402
from explorer.lecture.ch5_closing_the_gap.maths import row_kl_by_map  # noqa: E402
from explorer.lecture.text import DEFAULT_TEXT, DEFAULT_TEXT_ZH  # noqa: E402
from explorer.experiments import learning  # noqa: E402
from explorer.maps import create, learned  # noqa: E402
from explorer.sources import from_text, packaged  # noqa: E402

TEXTS = ROOT / "assets" / "texts"
CAUSAL_MODEL = packaged.SMOLLM2.name


def passages(texts: list[str]) -> list[str]:
    """The training texts, and the same texts joined two and three at a time.

    MiniLM's position embeddings are absolute, so a query at position 40 lives elsewhere
    than one at position 10. The training texts are 19-25 tokens long; the lecture's
    sentence is 42. The joined passages (up to ~70 tokens) let the maps see those
    positions too. Nothing here is held out: the held-out texts are never joined in.
    """
    pairs = [" ".join(texts[i:i + 2]) for i in range(0, len(texts) - 1, 2)]
    triples = [" ".join(texts[i:i + 3]) for i in range(0, len(texts) - 2, 3)]
    return texts + pairs + triples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--layer", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=learned.PRETRAINED_DIR)
    parser.add_argument("--models", default="minilm,smollm2",
                        help="which models' maps to train, comma-separated (minilm, smollm2)")
    parser.add_argument("--kinds", default=",".join(learned.LEARNED_CLASSES),
                        help="which kinds of SmolLM2's maps to train, comma-separated (hedgehog, luna)")
    args = parser.parse_args()
    torch.set_num_threads(1)          # one thread: the same sums in the same order on every run
    models = {m.strip().lower() for m in args.models.split(",") if m.strip()}
    if "minilm" in models:
        train_minilm(args)
    if "smollm2" in models:
        if packaged.installed():
            train_smollm2(args)
        else:
            print(f"{CAUSAL_MODEL} is not installed ({packaged.SMOLLM2.install}): no map trained for it")


def train_minilm(args) -> None:
    train = [from_text(t) for t in passages(learning.read_texts(TEXTS / "train.txt"))]
    heldout = [learning.head_block(from_text(t), args.layer) for t in learning.read_texts(TEXTS / "heldout.txt")]
    batch = learning.PaddedBatch.from_samples(train, layer=args.layer)        # heads: (12,)
    lecture = from_text(DEFAULT_TEXT)
    args.out.mkdir(parents=True, exist_ok=True)
    for kind in learned.LEARNED_CLASSES:
        run = learning.train_map(batch, kind, args.features, steps=args.steps, seed=args.seed)
        path = args.out / learned.pretrained_path(kind, args.layer).name
        learned.save_map(run.feature_map, path, layer=args.layer, steps=args.steps, seed=args.seed,
                         lr=learning.DEFAULT_LR[kind], texts="assets/texts/train.txt", model="all-MiniLM-L6-v2")
        quality = learning.heldout_quality(heldout, {kind: run.feature_map, "elu1": create("elu1", batch.q.shape[-1])})
        ratio = (quality["elu1"]["kl_median"] / quality[kind]["kl_median"]).flatten()
        print(f"{kind}: {run.seconds:.1f} s, loss {run.losses[0]:.3f} -> {run.losses[-1]:.3f}; wrote {path.name} "
              f"({path.stat().st_size / 1024:.0f} KB)")
        print(f"  held-out median row KL, elu+1 / {kind} per head: " + " ".join(f"{r:.1f}" for r in ratio.tolist()))
        q, k = lecture.q[args.layer], lecture.k[args.layer]
        for head in range(q.shape[0]):
            kl = row_kl_by_map(q[head], k[head], {"elu1": create("elu1", q.shape[-1]),
                                                  kind: run.feature_map.select(head)})
            if head in (0, 3):
                print(f"  lecture sentence, head {head}: mean row KL elu+1 {kl['elu1']['mean']:.3f}, "
                      f"{kind} {kl[kind]['mean']:.3f} ({kl['elu1']['mean'] / kl[kind]['mean']:.1f}x)")


def train_smollm2(args) -> None:
    """Each kind of map for every head of SmolLM2's chapter-5 layer, fitted to its causal softmax."""
    layer = SHIPPED_MAP_LAYERS[CAUSAL_MODEL]
    chapter_layer, chapter_head = causal_lecture_head(CAUSAL_MODEL)
    if chapter_layer != layer:
        raise SystemExit(f"chapter 5's head on {CAUSAL_MODEL} is in layer {chapter_layer}, the maps ship for {layer}")
    def read(text):
        return from_text(text, model=CAUSAL_MODEL)          # the first call converts the model once (~40 s)

    train = [read(t) for t in passages(learning.read_texts(TEXTS / "train.txt"))]
    heldout = [read(t) for t in learning.read_texts(TEXTS / "heldout.txt")]
    batch = learning.PaddedBatch.from_samples(train, layer=layer)        # heads: (9,); causal, as the samples are
    elu = create("elu1", batch.q.shape[-1])
    args.out.mkdir(parents=True, exist_ok=True)
    for kind in (k.strip() for k in args.kinds.split(",") if k.strip()):
        run = learning.train_map(batch, kind, args.features, steps=args.steps, seed=args.seed)
        path = args.out / learned.pretrained_path(kind, layer, CAUSAL_MODEL).name
        learned.save_map(run.feature_map, path, layer=layer, steps=args.steps, seed=args.seed,
                         lr=learning.DEFAULT_LR[kind], texts="assets/texts/train.txt", model=CAUSAL_MODEL,
                         causal=True)
        print(f"{kind} ({CAUSAL_MODEL}, layer {layer}, causal): {run.seconds:.1f} s, loss {run.losses[0]:.3f} -> "
              f"{run.losses[-1]:.3f}; wrote {path.name} ({path.stat().st_size / 1024:.0f} KB)")

        def mean_kl(sample, head, fmap=run.feature_map, kind=kind):
            kl = row_kl_by_map(sample.q[layer, head], sample.k[layer, head],
                               {"elu1": elu, kind: fmap.select(head)}, causal=True)
            return kl["elu1"]["mean"], kl[kind]["mean"]

        ratios = []
        for head in range(batch.q.shape[1]):
            pairs = [mean_kl(s, head) for s in heldout]
            ratios.append(sum(p[0] for p in pairs) / sum(p[1] for p in pairs))
        print(f"  held-out mean causal row KL, elu+1 / {kind} per head: " + " ".join(f"{r:.1f}" for r in ratios))
        for name, sentence in (("en", DEFAULT_TEXT), ("zh", DEFAULT_TEXT_ZH)):
            e, h = mean_kl(read(sentence), chapter_head)
            print(f"  lecture sentence ({name}), head {chapter_head}: mean causal row KL elu+1 {e:.3f}, "
                  f"{kind} {h:.3f} ({e / h:.1f}x)")


if __name__ == "__main__":
    main()
