"""One training path for both learned kinds, and trained maps saved as safetensors with
every upload checked before it is read."""

import json
import statistics
import struct

import pytest
import torch

from explorer.experiments import learning
from explorer.maps import create, learned
from explorer.maps.learned import Hedgehog
from explorer.maps.luna import Luna
from explorer.sources import from_text

TRAIN = learning.read_texts("assets/texts/train.txt")
HELDOUT = learning.read_texts("assets/texts/heldout.txt")


def test_luna_experiment_beats_elu1_on_heldout_text():
    exp = learning.experiment(TRAIN[:10], HELDOUT[:4], kind="luna", layer=2, head=3, steps=40)
    q = exp.quality
    assert {"luna", "hedgehog", "elu1", "favor_plus"} <= set(q)
    assert exp.kind == "luna" and set(exp.runs) == {"luna", "hedgehog"}
    assert exp.feature_map.heads == ()                      # one head: no 1 x 1 grid
    assert float(q["luna"]["kl"]) < float(q["elu1"]["kl"])
    assert float(q["luna"]["kl_median"]) < float(q["elu1"]["kl_median"])
    assert exp.run.losses[-1] < exp.run.losses[0]


def test_hedgehog_experiment_is_experiment_with_kind_hedgehog():
    a = learning.hedgehog_experiment(TRAIN[:4], HELDOUT[:2], layer=0, head=1, steps=5)
    b = learning.experiment(TRAIN[:4], HELDOUT[:2], kind="hedgehog", layer=0, head=1, steps=5)
    assert a.run.losses == b.run.losses
    assert isinstance(a.feature_map, Hedgehog) and a.feature_map.heads == ()
    with pytest.raises(ValueError, match="kind"):
        learning.experiment(TRAIN[:4], HELDOUT[:2], kind="performer", layer=0, head=1, steps=5)


def test_median_is_the_median_of_every_text_s_rows():
    samples = [learning.head_block(from_text(t), 1, 2) for t in HELDOUT[:2]]
    quality = learning.heldout_quality(samples, {"elu1": create("elu1", 32)})
    rows = []
    for s in samples:                                        # a plain loop over rows, float64
        a = s.model_attentions[0, 0].double()
        phi_q, phi_k = s.q[0, 0].double(), s.k[0, 0].double()       # elu+1 works on the raw input
        w = (torch.nn.functional.elu(phi_q) + 1) @ (torch.nn.functional.elu(phi_k) + 1).T
        approx = w / w.sum(-1, keepdim=True)
        rows += [float((a[i] * (a[i].log() - approx[i].log())).sum()) for i in range(a.shape[0])]
    assert len(rows) % 2 == 0                                # an even count: where torch's lower median is wrong
    assert float(quality["elu1"]["kl_median"]) == pytest.approx(statistics.median(rows), rel=1e-6)   # the map is float32


def test_row_median_is_the_true_median_of_an_even_count():
    rows = torch.tensor([[4.0, 1.0, 3.0, 2.0], [1.0, float("nan"), 5.0, 2.0], [float("inf"), 1.0, 2.0, 7.0]])
    median = learning.true_row_median(rows)
    assert median.tolist() == [2.5, 2.0, 4.5]                # mean of the two middle ones; NaN left out; inf kept
    assert torch.nanmedian(rows, dim=-1).values[0] == 2.0    # torch's own: the lower middle value


@pytest.mark.parametrize("kind, heads", [("hedgehog", ()), ("luna", ()), ("luna", (2, 3)), ("hedgehog", (4,))])
def test_save_and_load_round_trip(tmp_path, kind, heads):
    fmap = learned.LEARNED_CLASSES[kind](8, 6, seed=3, heads=heads)
    with torch.no_grad():
        for p in fmap.parameters():
            p.add_(torch.randn_like(p))
    path = learned.save_map(fmap, tmp_path / "m.safetensors", layer=1, steps=7)
    back = learned.load_map(path)
    assert type(back) is type(fmap) and back.heads == heads and back.info["steps"] == "7"
    x = torch.randn(*heads, 5, 8)
    assert torch.equal(back(x, is_query=True), fmap(x, is_query=True))


def write_raw(path, header: dict, body: bytes = b""):
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + body)
    return path


def test_uploads_are_checked_before_reading(tmp_path, monkeypatch):
    good = learned.save_map(Luna(8, 6), tmp_path / "good.safetensors")
    header = json.loads(good.read_bytes()[8:8 + struct.unpack("<Q", good.read_bytes()[:8])[0]])

    (tmp_path / "short").write_bytes(b"abc")
    with pytest.raises(ValueError, match="too short"):
        learned.load_map(tmp_path / "short")
    (tmp_path / "junk").write_bytes(struct.pack("<Q", 10 ** 12) + b"x" * 100)
    with pytest.raises(ValueError, match="header length"):
        learned.load_map(tmp_path / "junk")
    (tmp_path / "text").write_bytes(struct.pack("<Q", 4) + b"\xff\xfe{}")
    with pytest.raises(ValueError, match="not JSON"):
        learned.load_map(tmp_path / "text")
    with pytest.raises(ValueError, match="no map description"):
        learned.load_map(write_raw(tmp_path / "bare", {k: v for k, v in header.items() if k != "__metadata__"}))

    wrong_shape = json.loads(json.dumps(header))
    wrong_shape["weight"]["shape"] = [8, 7]
    with pytest.raises(ValueError, match="tensor weight must be F32 shaped"):
        learned.load_map(write_raw(tmp_path / "shape", wrong_shape))
    huge = json.loads(json.dumps(header))
    huge["__metadata__"]["num_features"] = "100000000"
    with pytest.raises(ValueError, match="num_features must be a whole number"):
        learned.load_map(write_raw(tmp_path / "huge", huge))
    alien = json.loads(json.dumps(header))
    alien["__metadata__"]["kind"] = "x" * 5000
    with pytest.raises(ValueError, match="'kind' must be text of at most 256") as err:   # bounded before it is read
        learned.load_map(write_raw(tmp_path / "alien", alien))
    assert len(str(err.value)) < 150

    monkeypatch.setattr(learned, "MAX_FILE_BYTES", 100)
    with pytest.raises(ValueError, match="over the"):
        learned.load_map(good)


def test_non_finite_parameters_are_refused(tmp_path):
    fmap = Hedgehog(4, 4)
    with torch.no_grad():
        fmap.wq[0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        learned.load_map(learned.save_map(fmap, tmp_path / "nan.safetensors"))
