"""The maps shipped for the lecture: small, loadable, and better than elu+1 on the
lecture's own sentence (which no training text contains)."""

import torch

from explorer.lecture.ch5_closing_the_gap.maths import row_kl_by_map
from explorer.lecture.text import DEFAULT_TEXT
from explorer.experiments import learning
from explorer.maps import create, learned
from explorer.sources import from_text

LAYER, HEAD = 2, 0          # the head chapter 5 shows by default


def test_shipped_files_are_small_and_describe_themselves():
    sizes = [learned.pretrained_path(kind, LAYER).stat().st_size for kind in learned.LEARNED_CLASSES]
    assert sum(sizes) < 400 * 1024
    for kind in learned.LEARNED_CLASSES:
        fmap = learned.load_map(learned.pretrained_path(kind, LAYER))
        assert fmap.name == kind and fmap.heads == (12,) and fmap.head_dim == 32
        assert fmap.info["layer"] == str(LAYER) and fmap.info["seed"] == "0"


def test_pretrained_gives_one_head_or_none():
    for kind in learned.LEARNED_CLASSES:
        one = learned.pretrained(kind, LAYER, HEAD)
        assert one.name == kind and one.heads == () and not any(p.requires_grad for p in one.parameters())
        layer_map = learned.pretrained(kind, LAYER)
        x = torch.randn(5, 32)
        torch.testing.assert_close(one(x), layer_map.select(HEAD)(x))
        assert learned.pretrained(kind, LAYER, 12) is None       # MiniLM has heads 0..11
    assert learned.pretrained("hedgehog", 5, 0) is None          # no map shipped for layer 5


def test_shipped_maps_halve_elu1_row_kl_on_the_lecture_sentence():
    assert DEFAULT_TEXT not in learning.read_texts("assets/texts/train.txt")
    sample = from_text(DEFAULT_TEXT)
    q, k = sample.q[LAYER, HEAD], sample.k[LAYER, HEAD]
    for kind in learned.LEARNED_CLASSES:
        kl = row_kl_by_map(q, k, {"elu1": create("elu1", 32), kind: learned.pretrained(kind, LAYER, HEAD)})
        assert kl[kind]["undefined"] == 0
        assert kl[kind]["mean"] * 2 <= kl["elu1"]["mean"], kind
        assert kl[kind]["median"] * 2 <= kl["elu1"]["median"], kind
