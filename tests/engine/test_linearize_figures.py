"""The linearized model's figures draw the engine's numbers as they are, in both languages."""

from __future__ import annotations

import math

import pytest

from explorer.figures import keep_softmax_curves, sensitivity_bars
from explorer.figures.style import said_figure

CURVE = {"kind": "hedgehog", "window": 0, "ks": [0, 1, 2], "original_perplexity": 12.5,
         "greedy": [900.0, 80.0, 20.0], "first": [900.0, 300.0, 90.0], "even": [900.0, 120.0, 40.0],
         "kept": {"greedy": [[], [3], [3, 9]], "first": [[], [0], [0, 1]], "even": [[], [1], [0, 2]]}}
ROWS = [{"layer": 0, "kl": 0.5, "perplexity": 20.0, "rank": 1}, {"layer": 1, "kl": 0.1, "perplexity": 13.0, "rank": 2}]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_keep_softmax_curves_one_trace_per_kind_and_rule(lang):
    fig = said_figure(keep_softmax_curves([CURVE, {**CURVE, "kind": "elu1", "window": 64}]), lang)
    assert len(fig.data) == 6
    assert list(fig.data[0].y) == CURVE["greedy"] and list(fig.data[1].y) == CURVE["first"]
    assert list(fig.data[2].y) == CURVE["even"] and list(fig.data[0].x) == CURVE["ks"]
    assert fig.layout.yaxis.type == "log"
    assert any(shape.y0 == 12.5 for shape in fig.layout.shapes)
    # The original's label sits at the line (log10 on a log axis), not at 10^12.5.
    label = next(a for a in fig.layout.annotations if "12.50" in a.text)
    assert label.yref == "y" and abs(label.y - math.log10(12.5)) < 1e-12
    assert ("困惑度" in fig.layout.title.text) == (lang == "zh")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_sensitivity_bars_are_the_rows_kl(lang):
    fig = said_figure(sensitivity_bars(ROWS, "elu1", 0), lang)
    assert list(fig.data[0].x) == [0, 1] and list(fig.data[0].y) == [0.5, 0.1]
    assert "{" not in fig.data[0].hovertemplate.replace("%{", "")
    assert ("层" in fig.layout.xaxis.title.text) == (lang == "zh")
    assert ("困惑度" in fig.data[0].hovertemplate) == (lang == "zh")
