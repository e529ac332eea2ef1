"""Chapter 3's Taylor gap (build b2): the article's "the gap between linear and softmax
attention is the gap between a first-order Taylor map and the whole series", measured on the
chapter's head. Its bars are the view's shares, and the shares are what a plain float64 sum
over the same q, k gives."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from helpers.lecture import said_chapter_figures
from explorer.lecture import chapters
from explorer.lecture import text as lecture_text
from explorer.lecture.ch3_kernels import maths as kernels
from explorer.lecture import view as lecture
from explorer.views.common import load_sample


@pytest.fixture(scope="module")
def sample():
    return load_sample("text", text=lecture_text.DEFAULT_TEXT)


@pytest.fixture(scope="module")
def view(sample):
    return lecture.chapter_view(3, sample=sample)


def plain_shares(q, k, orders):
    """sum_ij s_ij^n / n! over sum_ij exp(s_ij), n = 0..orders, with s = q.k / sqrt(d), in float64."""
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    s = (q @ k.T / math.sqrt(q.shape[-1])).ravel()
    total = sum(math.exp(x) for x in s)
    shares = [sum(x ** n / math.factorial(n) for x in s) / total for n in range(orders + 1)]
    kept = sum(1.0 + x for x in s) / total
    return shares, kept


def test_the_gap_build_follows_the_truncations(view):
    record = chapters.chapter(3)
    assert record.builds[2] == "b2" and len(record.builds) == 7
    for lang in ("en", "zh"):
        fig = said_chapter_figures(view, lang, True)[2]
        assert fig.layout.title.text == lecture_text.t("ch3.b2.title", lang)


def test_the_shares_are_a_plain_float64_sum_over_the_heads_pairs(view, sample):
    layer, head = view.controls["layer"], view.controls["head"]
    q, k = sample.q[layer, head], sample.k[layer, head]
    series = view.data["series"]
    orders = int(series["orders"][-1])
    shares, kept = plain_shares(q, k, orders)
    np.testing.assert_allclose(series["shares"], shares, rtol=1e-9, atol=1e-12)
    assert series["kept"] == pytest.approx(kept, rel=1e-9)
    assert series["dropped"] == pytest.approx(1.0 - kept, rel=1e-9)
    assert series["tail"] == pytest.approx(1.0 - sum(shares), abs=1e-9)
    assert series["pairs"] == q.shape[0] * k.shape[0]
    assert view.numbers["taylor1_dropped_share"] == series["dropped"] >= 0.0


def test_the_bars_are_the_views_shares(view):
    series = view.data["series"]
    for lang in ("en", "zh"):
        fig = said_chapter_figures(view, lang, True)[2]
        kept, dropped = fig.data[0], fig.data[1]
        assert list(kept.x) == [0, 1] and list(dropped.x)[:-1] == list(range(2, len(series["orders"])))
        drawn = list(kept.y) + list(dropped.y)[:-1]
        np.testing.assert_allclose(drawn, 100 * series["shares"])
        assert dropped.y[-1] == pytest.approx(100 * series["tail"])       # the orders beyond, one bar
        note = fig.layout.title.subtitle.text.replace("<br>", "")
        assert f"{100 * series['dropped']:.0f} %" in note and f"{100 * series['kept']:.0f} %" in note


def test_most_is_said_only_when_orders_two_and_up_carry_more_than_half(sample):
    # exp(s) >= 1 + s everywhere: the dropped share is never negative, and small where s is.
    small = kernels.series_shares(np.linspace(-0.2, 0.2, 101))
    assert 0.0 <= small["dropped"] < 0.05
    large = kernels.series_shares(np.array([-3.0, 0.0, 4.0, 5.0]))
    assert large["dropped"] > 0.5
    from explorer.lecture.ch3_kernels import view as kernels_view

    quiet = copy.copy(load_sample("random", n=16, d=32))     # a copy: the loaded sample is cached
    quiet.q = quiet.q * 0.05                     # small logits: 1 + s keeps nearly all of exp(s)
    controls = {"layer": 0, "head": 0, "m": 16, "orthogonal": True, "seed": 0}
    small_view = kernels_view.compute(quiet, dict(controls), None)
    assert small_view.numbers["taylor1_dropped_share"] < 0.5
    assert small_view.says["b2"]["claim"][0] == "ch3.b2.claim_less"
    default = lecture.chapter_view(3, sample=sample)
    expected = "ch3.b2.claim_most" if default.numbers["taylor1_dropped_share"] > 0.5 else "ch3.b2.claim_less"
    assert default.says["b2"]["claim"][0] == expected
