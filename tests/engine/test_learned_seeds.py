"""Learned maps over several seeds (mean ± sd, FAVOR+ redrawn per seed, priced and stoppable
as a whole) and trained on texts of the visitor's own (bounded, never overlapping)."""

import json

import pytest
import torch

from explorer import catalog, stopping
from explorer.experiments import learning
from explorer.measure import cost
from explorer.text import say_error
from explorer.views import learn as lv

TRAIN = learning.read_texts("assets/texts/train.txt")
HELDOUT = learning.read_texts("assets/texts/heldout.txt")
SMALL = dict(layer=2, head=3, num_features=8, steps=8)
OWN_TRAIN = ["The river rose after three days of rain and the bridge was closed.",
             "She counted the coins twice before she paid for the bread.",
             "A quiet street at night sounds louder than a busy one at noon."]
OWN_HELDOUT = ["The old clock in the hall stopped at a quarter past four.",
               "Birds gathered on the wire as the sun went down."]


def test_an_experiment_trains_once_per_seed_and_redraws_favor():
    exp = learning.experiment(TRAIN[:3], HELDOUT[:2], kind="luna", **SMALL)
    assert exp.seeds == (0, 1, 2) and len(exp.by_seed) == len(exp.runs_by_seed) == 3
    favor = exp.per_seed("favor_plus")
    assert len(set(favor)) == 3                              # a new FAVOR+ draw for every seed
    assert len(set(exp.per_seed("luna"))) == 3               # LUNA starts from a seed's FAVOR+ draw
    assert len(set(exp.per_seed("elu1"))) == 1               # elu+1 has nothing random in it
    mean = torch.stack([q["favor_plus"]["kl"] for q in exp.by_seed]).mean(0)
    assert torch.equal(exp.quality["favor_plus"]["kl"], mean)
    assert exp.feature_map is exp.runs_by_seed[0]["luna"].feature_map
    one = learning.experiment(TRAIN[:3], HELDOUT[:2], kind="luna", seeds=[1], **SMALL)
    assert one.per_seed("luna") == pytest.approx([exp.per_seed("luna")[1]])   # seed 1 alone: the same map



def test_a_seed_that_starts_a_map_as_an_earlier_one_did_shares_its_training():
    same = learning.experiment(TRAIN[:2], HELDOUT[:1], **{**SMALL, "num_features": 64})     # W = I: no seed in it
    assert same.same_every_seed == ("hedgehog",)
    assert same.runs_by_seed[0]["hedgehog"] is same.runs_by_seed[2]["hedgehog"]
    alone = learning.experiment(TRAIN[:2], HELDOUT[:1], seeds=[2], **{**SMALL, "num_features": 64})
    assert alone.run.losses == same.run.losses                                         # trained alone: the same
    wide = learning.experiment(TRAIN[:2], HELDOUT[:1], **{**SMALL, "num_features": 80})     # m > 2d: random columns
    assert wide.same_every_seed == () and len({tuple(r["hedgehog"].losses) for r in wide.runs_by_seed}) == 3

def test_the_view_reports_mean_and_sd_over_seeds():
    r = lv.learn_view(2, 3, num_features=8, steps=8, train_count=3, heldout_count=2, kind="luna", seed=4)
    assert r.seeds == (4, 5, 6) and len(r.losses_by_seed) == 3 and len(r.feature_maps) == 3
    rows = {row["name"]: row for row in r.rows}
    favor = rows["favor_plus"]
    assert len(favor["kl_seeds"]) == 3
    assert favor["kl"] == pytest.approx(sum(favor["kl_seeds"]) / 3)
    assert favor["kl_sd"] == pytest.approx(torch.tensor(favor["kl_seeds"], dtype=torch.float64).std().item())
    assert rows["elu1"]["kl_sd"] == 0.0                      # exactly: the same value every seed
    per_head = lv.per_head_table(r)
    assert sorted(set(per_head["seed"])) == [4, 5, 6]        # the seed list travels in the export
    assert sorted(set(lv.loss_table(r)["seed"])) == [4, 5, 6]


def test_an_order_is_claimed_only_outside_seed_noise():
    assert learning.apart([1.0, 1.1, 0.9], [2.0, 2.1, 1.9])
    assert not learning.apart([1.0, 1.2, 0.8], [1.3, 1.5, 1.1])      # gap 0.3 < 0.2 + 0.2
    assert not learning.apart([1.0], [5.0])                           # one seed: no spread to judge by
    mean, sd = learning.spread([0.068, 0.068, 0.068])
    assert sd == 0.0 and mean == pytest.approx(0.068)
    rows = [{"name": "a", "kl": 1.0, "kl_seeds": [1.0, 1.2, 0.8]}, {"name": "b", "kl": 1.3, "kl_seeds": [1.3, 1.5, 1.1]},
            {"name": "c", "kl": 9.0, "kl_seeds": [9.0, 9.0, 9.0]}]
    best, second, apart = lv.ranking(rows)
    assert (best["name"], second["name"], apart) == ("a", "b", False)


@pytest.mark.parametrize("seeds", [0, 9, [1, 1], [-1], True, [0.5]])
def test_seed_lists_are_bounded(seeds):
    with pytest.raises(ValueError, match="seed"):
        learning.seed_list(0, seeds)


def test_every_seed_is_priced_together_before_any_work(monkeypatch):
    one = cost.estimate("learn", n=40, m=64, steps=300, texts=40, seeds=1)
    three = cost.estimate("learn", n=40, m=64, steps=300, texts=40, seeds=3)
    assert three.seconds == pytest.approx(3 * one.seconds) and three.bytes == one.bytes
    read = []
    monkeypatch.setattr(lv, "cached_sample", lambda *a, **k: read.append(a) or pytest.fail("read a text"))
    monkeypatch.setattr(lv, "MAX_TRAINING_SECONDS", three.seconds * 0.9)   # one seed would fit, three do not
    with pytest.raises(ValueError, match="3 seeds"):
        lv.learn_view(2, 3, steps=300, seeds=3, all_heads=False)
    assert read == []

    with pytest.raises(ValueError, match="Taylor-2"):        # long held-out texts on every head: refused unread
        lv.learn_view(all_heads=True, steps=10, seeds=1, train_count=2, heldout_texts=["word " * 399] * 2)
    assert read == []


def test_the_stop_signal_is_asked_at_every_step_of_every_seed():
    calls = []

    def should_stop():
        calls.append(1)
        return len(calls) > 8 + 3              # through seed 0's 8 steps, into seed 1's
    with pytest.raises(stopping.Stopped):
        learning.experiment(TRAIN[:2], HELDOUT[:1], should_stop=should_stop, **SMALL)
    assert len(calls) == 12


# --------------------------------------------------------------------------- texts of one's own

def test_own_texts_are_trained_on_and_change_the_result():
    mine = lv.learn_view(2, 3, num_features=8, steps=8, seeds=1, train_texts=OWN_TRAIN, heldout_texts=OWN_HELDOUT)
    built_in = lv.learn_view(2, 3, num_features=8, steps=8, seeds=1, train_count=3, heldout_count=2)
    assert mine.own_texts and not built_in.own_texts
    assert (mine.train_count, mine.heldout_count) == (3, 2)
    assert mine.losses != built_in.losses
    assert mine.rows[0]["kl"] != pytest.approx(built_in.rows[0]["kl"])
    record = json.dumps(lv.run_provenance(mine), ensure_ascii=False)       # the export says which texts
    assert OWN_TRAIN[0] in record and OWN_HELDOUT[1] in record and HELDOUT[0] not in record
    saved = json.dumps(lv.trained_provenance(mine), ensure_ascii=False)
    assert OWN_TRAIN[2] in saved and TRAIN[0] not in saved
    three = lv.learn_view(2, 3, num_features=8, steps=8, seeds=3, train_texts=OWN_TRAIN, heldout_texts=OWN_HELDOUT)
    assert sorted(lv.run_provenance(three)["seeds"]) == [0, 1, 2]


@pytest.mark.parametrize("texts, key", [
    (["a"] * (catalog.LEARN_MAX_TEXTS + 1), "learn.err_texts_count"),
    (["x" * (catalog.LEARN_MAX_TEXT_CHARS + 1)], "learn.err_text_long"),
    (["  ", ""], "learn.err_texts_none"),
    ("one text, not a list", "learn.err_texts_type"),
    ([1, 2], "learn.err_texts_type"),
])
def test_own_texts_are_bounded_in_both_languages(texts, key):
    with pytest.raises(ValueError) as refused:
        learning.experiment(texts, OWN_HELDOUT, **SMALL)
    message = refused.value.args[0]
    assert message.key == key and "train_texts" in message
    assert say_error(refused.value, "zh") != str(message) and "train_texts" in say_error(refused.value, "zh")


def test_a_text_in_both_sets_is_refused_before_reading():
    read = []
    with pytest.raises(ValueError, match="heldout_texts: 1 text") as refused:
        learning.experiment(OWN_TRAIN, [OWN_TRAIN[1], *OWN_HELDOUT], source=lambda t: read.append(t), **SMALL)
    assert read == [] and "留出文本不能拿来训练" in say_error(refused.value, "zh")
    with pytest.raises(ValueError, match="heldout_texts"):          # the built-in held-out ones too
        lv.learn_view(2, 3, num_features=8, steps=8, train_texts=[HELDOUT[0], *OWN_TRAIN], heldout_count=2)

