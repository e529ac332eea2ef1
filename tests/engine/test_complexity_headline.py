"""The complexity headline compares like for like: with causal on, causal SDPA against the
causal chunked linear form, and the FLOP ratio of the same two runs (issue 23, point 3).
Before, causal SDPA was set against the non-causal linear form with a non-causal FLOP ratio."""

from __future__ import annotations

import pytest

from explorer.measure import bench
from explorer.text import say
from explorer.views import complexity as cx


class FakeSweep:
    """The part of a sweep result the headline reads, with made-up times."""

    def __init__(self, times: dict, causal: bool, n=1024, d=32, m=32):
        self.disturbed = False
        self.rows = [{"method": method, "n": n, "time_ms": ms, "causal": bench.effective_causal(method, causal),
                      "flops": bench.method_flops(method, n, d, m, bool(bench.effective_causal(method, causal)))}
                     for method, ms in times.items()]

    def row(self, method, n):
        return next((r for r in self.rows if r["method"] == method and r["n"] == n), None)

    def time_ms(self, method, n):
        r = self.row(method, n)
        return None if r is None or r.get("skipped") else r["time_ms"]


TIMES = {"sdpa": 165.0, "linear_parallel": 7.5, "linear_chunked": 17.2, "linear_recurrent": 90.0}


def test_causal_headline_sets_causal_sdpa_against_the_causal_chunked_form():
    sweep = FakeSweep(TIMES, causal=True)
    got = cx.measured_headline(sweep, causal=True)["measured"]
    assert got["linear_method"] == "linear_chunked" and got["causal"] is True
    assert got["ratio"] == pytest.approx(165.0 / 17.2)
    flops = {r["method"]: r["flops"] for r in sweep.rows}
    assert got["flop_ratio"] == pytest.approx(flops["sdpa"] / flops["linear_chunked"])
    # the causal count is not the non-causal one that was quoted before
    assert got["flop_ratio"] != pytest.approx(bench.method_flops("sdpa", 1024, 32, 32, False)
                                              / bench.method_flops("linear_parallel", 1024, 32, 32, False))
    assert str(got["quadratic_name"]) == "causal SDPA" and str(got["linear_name"]) == "causal chunked linear"


def test_causal_headline_falls_back_to_the_recurrent_form_never_to_the_non_causal_one():
    times = {k: v for k, v in TIMES.items() if k != "linear_chunked"}
    got = cx.measured_headline(FakeSweep(times, causal=True), causal=True)["measured"]
    assert got["linear_method"] == "linear_recurrent"
    only_parallel = {"sdpa": 165.0, "linear_parallel": 7.5}
    headline = cx.measured_headline(FakeSweep(only_parallel, causal=True), causal=True)
    assert headline["measured"] is None
    assert say("complexity.sum_none", "en", a=headline["pair"][0], b=headline["pair"][1]) == \
        "No N where both causal SDPA and causal chunked linear were measured: select both to compare."


def test_non_causal_headline_keeps_the_associativity_form():
    got = cx.measured_headline(FakeSweep(TIMES, causal=False), causal=False)["measured"]
    assert got["linear_method"] == "linear_parallel" and got["ratio"] == pytest.approx(165.0 / 7.5)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_live_causal_sweep_says_the_pair_it_timed(lang):
    from explorer import figures
    from explorer.ui import complexity_tab

    from explorer.figures.style import said_figure
    view = cx.complexity_view(64, 128, 2, 16, None, True, "elu1", ["sdpa", "linear_parallel", "linear_chunked"],
                              repeats=1)
    measured = view.claim["measured"]
    assert measured["linear_method"] == "linear_chunked" and measured["n"] == 128
    text = complexity_tab.summary(view, lang)
    assert say("complexity.pair.linear_chunked_causal", lang) in text
    assert say("complexity.pair.linear_parallel", lang) not in text
    c = view.claim
    fig = said_figure(figures.flop_claim(c["n"], c["head_dim"], c["quadratic_flops"], c["linear_flops"], measured),
                      lang)
    shown = str(fig.to_plotly_json()["layout"])
    assert say("complexity.pair.sdpa_causal", lang) in shown
