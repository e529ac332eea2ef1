"""Refused before the work: a quality request is priced as a whole
(every seed, every m, the overview of every head) from the sample's shape, which for a text
is the tokenizer's count and the model's config: the model never reads a text whose request
is refused."""

from __future__ import annotations

import time

import gradio as gr
import pytest

from explorer.sources import text as text_source
from explorer.ui import quality_tab

pytestmark = pytest.mark.slow      # reads SmolLM2

SMOLLM2 = "SmolLM2-135M"
TEXT_1350 = ("Attention compares every token with every other one, and a kernel map trades that for "
             "features whose count is chosen up front. ") * 12
TEXT_1350 = TEXT_1350[:1350]


@pytest.fixture()
def forwards(monkeypatch):
    """Every forward pass a text source makes, recorded (the model is loaded, never run here)."""
    text_source.text_shape("warm the tokenizer", model=SMOLLM2)
    quality_tab.figures_and_views()                              # the engine imported, as on a running server
    seen = []
    real = text_source._capture
    monkeypatch.setattr(text_source, "_capture", lambda *args, **kwargs: seen.append(1) or real(*args, **kwargs))
    return seen


def _quality(text, seeds=30, m=512, overview="taylor2"):
    return quality_tab.run_quality("text", text, "clustered", 128, 32, 0, 1.0, None, SMOLLM2, 2, "3", True,
                                   None, seeds, "m", m, overview, "map_rel_error", False, "en")


def test_a_costly_quality_request_on_smollm2_is_refused_before_the_model_reads_the_text(forwards):
    assert len(TEXT_1350) == 1350
    started = time.perf_counter()
    with pytest.raises(gr.Error, match="limit on this server"):
        _quality(TEXT_1350)
    took = time.perf_counter() - started
    assert forwards == [], "the model read a text whose request was then refused"
    assert took < 1.0, f"refused after {took:.1f} s"


def test_a_512_token_text_is_refused_by_the_cell_cap_before_the_model_reads_it(forwards):
    text = " ".join(["token"] * 600)             # more than the 512 tokens read: cut to 512
    n, layers, heads, _ = text_source.text_shape(text, model=SMOLLM2)
    assert n == 512 and (layers, heads) == (30, 9)
    with pytest.raises(gr.Error, match="cells|cap"):
        _quality(text, seeds=1, m=64, overview="elu1")
    assert forwards == []


def test_a_request_within_the_limits_is_priced_and_then_run():
    from explorer import views
    estimate = views.price_sample_request("random", n=64, d=16, head=0, seeds=2, m=16)
    assert estimate.seconds > 0 and estimate.bytes > 0
    assert views.price_sample_request("file") is None          # an upload's shape is known once it is read


def test_the_curves_and_the_overview_are_priced_together(monkeypatch):
    """Each part alone fits the memory limit, the two together do not: refused."""
    from explorer import views
    from explorer.measure import cost
    from explorer.views import quality
    shape = dict(n=128, d=32, layers=6, heads=12)
    *_, curves = quality._plan_curves(128, 32, 1, None, quality.QUALITY_MS, 4)
    overview = quality._plan_overview(128, 32, 6, 12, "elu1", 64)
    monkeypatch.setattr(cost, "LIMIT_BYTES", max(curves.bytes, overview.bytes) + 1)
    monkeypatch.setattr(cost, "LIMIT_SECONDS", 1e9)
    with pytest.raises(ValueError, match="memory"):
        views.price_request(**shape, seeds=4, m=64, overview_map="elu1")
