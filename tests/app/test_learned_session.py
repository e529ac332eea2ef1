"""Trained maps belong to the browser session that trained (or loaded) them, and show on
exactly the heads they were trained on."""

from types import SimpleNamespace

import numpy as np
import pytest

from explorer import views
from explorer.diagnostics import attention
from explorer.maps import learned
from explorer.views import common
from explorer.views import learn as lv

TINY = dict(num_features=8, steps=5, seed=2, train_count=2, heldout_count=1)
HEDGEHOG, LUNA = "hedgehog_trained", "luna_trained"
TEXT = "The cat sat on the mat because it was warm."


@pytest.fixture(scope="module")
def sample():
    return views.load_sample("text", text=TEXT)


@pytest.fixture(autouse=True)
def forget():
    yield
    for session in ("A", "B", "C", None):
        common.forget_trained(session)


def shown(view, label):
    return label in view.maps


def test_a_map_trained_on_layer_2_head_7_shows_on_layer_2_head_7(sample):
    result = lv.learn_view(2, 7, session="A", **TINY)
    view = views.maps_view(sample, 2, 7, ["softmax", HEDGEHOG], False, 8, 0, session="A")
    assert shown(view, HEDGEHOG), view.notices
    expected = attention.kernel_map(sample.q[2, 7], sample.k[2, 7], result.feature_map).numpy()
    np.testing.assert_allclose(view.maps[HEDGEHOG], expected, rtol=1e-5, atol=1e-7)
    assert not [n for n in view.notices if HEDGEHOG in n]


def test_elsewhere_it_is_not_shown_and_the_notice_says_where_it_was_trained(sample):
    lv.learn_view(2, 7, session="A", **TINY)
    for layer, head in ((0, 0), (2, 6), (3, 7), (2, "mean")):
        view = views.maps_view(sample, layer, head, ["softmax", HEDGEHOG], False, 8, 0, session="A")
        assert not shown(view, HEDGEHOG)
        assert any("trained on layer 2, head 7" in n for n in view.notices), view.notices


def test_the_notice_elsewhere_is_all_chinese_in_chinese(sample):
    from helpers.words import english_words

    lv.learn_view(2, 7, session="A", **TINY)
    from explorer.text import said_throughout
    view = views.maps_view(sample, 0, 0, ["softmax", HEDGEHOG], False, 8, 0, session="A")
    notices = [n for n in said_throughout(view.notices, "zh") if "Hedgehog" in n]
    assert notices and "在此训练" in notices[0]
    assert not english_words(notices[0]), notices[0]


def test_no_other_session_sees_it(sample):
    lv.learn_view(2, 7, session="A", **TINY)
    for other in ("B", None):
        view = views.maps_view(sample, 2, 7, ["softmax", HEDGEHOG], False, 8, 0, session=other)
        assert not shown(view, HEDGEHOG)
        assert any("no Hedgehog trained yet in this session" in n for n in view.notices)


def test_a_trained_luna_shows_like_the_trained_hedgehog(sample):
    result = lv.learn_view(2, 7, kind="luna", session="B", **TINY)
    assert result.kind == "luna" and result.feature_map.heads == ()
    assert [r["name"] for r in result.rows][:2] == ["luna", "hedgehog"]
    view = views.maps_view(sample, 2, 7, ["softmax", LUNA, HEDGEHOG], False, 8, 0, session="B")
    assert shown(view, LUNA) and not shown(view, HEDGEHOG)
    expected = attention.kernel_map(sample.q[2, 7], sample.k[2, 7], result.feature_map).numpy()
    np.testing.assert_allclose(view.maps[LUNA], expected, rtol=1e-5, atol=1e-7)
    assert not shown(views.maps_view(sample, 2, 7, ["softmax", LUNA], False, 8, 0, session="A"), LUNA)


def test_a_layer_map_shows_on_every_head_of_its_layer_only(sample):
    result = lv.pretrained_result("luna", 2, heldout_count=1, session="C")
    assert result.whole_layer and result.kl_ratio.shape == (1, 12)
    for head in (0, 5, "mean"):
        assert shown(views.maps_view(sample, 2, head, ["softmax", LUNA], False, 8, 0, session="C"), LUNA)
    view = views.maps_view(sample, 3, 5, ["softmax", LUNA], False, 8, 0, session="C")
    assert not shown(view, LUNA) and any("12 heads of layer 2" in n for n in view.notices)


def test_the_maps_tab_handler_reads_the_session_of_its_request(sample):
    from explorer.ui import maps_tab
    lv.learn_view(2, 7, session="A", **TINY)

    def draw(session):
        out = maps_tab.run_maps("text", TEXT, layer=2, head="7", maps=["softmax", HEDGEHOG], m=8,
                                request=SimpleNamespace(session_hash=session), progress=lambda *a, **k: None)
        return out[4]
    assert shown(draw("A"), HEDGEHOG)
    assert not shown(draw("B"), HEDGEHOG)


def test_the_store_is_bounded(monkeypatch):
    monkeypatch.setattr(common._trained, "size", 3)      # as if TRAINED_SESSIONS were 3
    fmap = learned.Hedgehog(32, 8)
    for i in range(5):
        common.set_trained(f"s{i}", "hedgehog", fmap, 0, 0)
    assert common.trained_entry("s0", "hedgehog") is None and common.trained_entry("s1", "hedgehog") is None
    assert all(common.trained_entry(f"s{i}", "hedgehog") is not None for i in (2, 3, 4))
    for i in range(5):
        common.forget_trained(f"s{i}")


def test_quality_tab_offers_the_session_s_trained_map(sample):
    lv.learn_view(2, 7, session="A", **TINY)
    rows = views.quality_view(sample, 2, 7, ["favor_plus_iid"], ms=(8,), seeds=1, m=8, session="A").shape_rows
    assert HEDGEHOG in [r["map"] for r in rows]
    rows = views.quality_view(sample, 2, 7, ["favor_plus_iid"], ms=(8,), seeds=1, m=8, session="B").shape_rows
    assert HEDGEHOG not in [r["map"] for r in rows]
