"""Hedgehog: a positive learned map, trained reproducibly, judged on held-out text only."""

import pytest
import torch

from explorer import maps as fm
from explorer.experiments import learning
from explorer.experiments.learning import PaddedBatch
from explorer.maps.learned import Hedgehog

TRAIN = learning.read_texts("assets/texts/train.txt")
HELDOUT = learning.read_texts("assets/texts/heldout.txt")


def test_map_is_positive_and_broadcasts_over_heads():
    phi = fm.create("hedgehog", 8, num_features=12, heads=(2, 3))
    x = torch.randn(2, 3, 5, 8) * 4
    out = phi(x)
    assert out.shape == (2, 3, 5, 12) and (out > 0).all()
    # each half is a softmax over its features
    torch.testing.assert_close(out[..., :6].sum(-1), torch.ones(2, 3, 5))
    one = phi.select(1, 2)
    torch.testing.assert_close(one(x[1, 2]), out[1, 2])
    with pytest.raises(ValueError, match="num_features"):
        fm.create("hedgehog", 8, num_features=7)


def test_save_and_load_round_trip(tmp_path):
    phi = Hedgehog(4, 8, seed=1, heads=(3,))
    with torch.no_grad():
        phi.wq.add_(torch.randn_like(phi.wq))
    phi.save(tmp_path / "h.pt")
    back = Hedgehog.load(tmp_path / "h.pt")
    x = torch.randn(3, 6, 4)
    assert torch.equal(back(x, is_query=True), phi(x, is_query=True))
    torch.save({"kind": "other"}, tmp_path / "bad.pt")
    with pytest.raises(ValueError, match="path"):
        Hedgehog.load(tmp_path / "bad.pt")


def synthetic_batch(seed=0, texts=4, n=12, d=8):
    """Spiky softmax targets from random q, k: enough to see training work, no model needed."""
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(texts, 2, n, d, generator=g) * 2, torch.randn(texts, 2, n, d, generator=g) * 2
    att = torch.softmax(q @ k.transpose(-1, -2) / d ** 0.5, -1)
    valid = torch.ones(texts, n, dtype=torch.bool)
    valid[0, 9:] = False                                   # one padded text
    att[0, :, :, 9:] = 0
    att[0] = att[0] / att[0].sum(-1, keepdim=True)
    return PaddedBatch(q, k, att, valid)


def test_training_is_reproducible_and_lowers_the_loss():
    batch = synthetic_batch()
    a = learning.train_hedgehog(batch, num_features=16, steps=60, seed=3)
    b = learning.train_hedgehog(batch, num_features=16, steps=60, seed=3)
    assert a.losses == b.losses
    assert torch.equal(a.feature_map.wq, b.feature_map.wq)
    assert a.losses[-1] < 0.8 * a.losses[0]


def test_padding_does_not_leak_into_the_loss():
    batch = synthetic_batch()
    before = learning.row_cross_entropy(batch.attention, learning.masked_log_map(Hedgehog(8, 16, heads=(2,)), batch.q, batch.k, batch.valid), batch.valid)
    batch.q[0, :, 9:] = 1e3                                # garbage in padded positions
    batch.k[0, :, 9:] = -1e3
    after = learning.row_cross_entropy(batch.attention, learning.masked_log_map(Hedgehog(8, 16, heads=(2,)), batch.q, batch.k, batch.valid), batch.valid)
    torch.testing.assert_close(before, after)


def test_heldout_texts_must_not_be_trained_on():
    assert not set(TRAIN) & set(HELDOUT)
    with pytest.raises(ValueError, match="heldout_texts"):
        learning.hedgehog_experiment(TRAIN[:3], [TRAIN[1]], layer=0, head=0, steps=2)


def test_experiment_on_one_head_beats_elu1_on_heldout_text():
    seen = []

    def source(text):
        seen.append(text)
        from explorer.sources import from_text
        return from_text(text)

    exp = learning.hedgehog_experiment(TRAIN[:8], HELDOUT[:3], layer=1, head=4, steps=80, source=source)
    # training read the training texts, evaluation only the held-out ones (in that order)
    assert seen == TRAIN[:8] + HELDOUT[:3]
    q = exp.quality
    assert q["hedgehog"]["kl"].shape == (1, 1)
    assert float(q["hedgehog"]["kl"]) < float(q["elu1"]["kl"])
    assert exp.run.losses[-1] < exp.run.losses[0]
