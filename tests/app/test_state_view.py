"""The state tab's view and figures: all six updates, the step's erased and written parts, the
capacity panel, every control checked in one sentence, every word in both languages: one
view, computed without a language, said in each."""

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from explorer import catalog, figures, mechanisms, views
from explorer.diagnostics import state, state_probes
from explorer.figures.style import said_figure
from explorer.measure import cost
from explorer.text import say, said_throughout
from explorer.views import state as state_views
from helpers.words import chinese_leftovers

STATE_KINDS = mechanisms.state_kinds()


@pytest.fixture(scope="module")
def sample():
    return views.load_sample("random", preset="local", n=24, d=8)


@pytest.fixture(scope="module")
def view_en(sample):
    return views.state_view(sample, 0, 0, "elu1", 8, 0, 0.9, 2.0, t=5, kind="deltanet", lags=(1, 16, 64))


def _labels(lang: str) -> list[str]:
    return [say(state_views.kind_label(kind), lang) for kind in STATE_KINDS]


def test_view_has_every_update_in_both_languages(view_en):
    view = view_en
    for lang in ("en", "zh"):
        labels = _labels(lang)
        assert said_throughout(list(view.traces), lang) == labels
        assert said_throughout(list(view.recall), lang) == labels
        reference = say(state_views.kind_label(state.UNIT_ADDITIVE), lang)
        assert said_throughout(list(view.capacity), lang) == labels + [reference]
        for label in view.traces:
            rc = view.recall[label]
            assert len(rc["cosine"]) == len(rc["recent_cosine"]) == 3
    named = dict(zip(said_throughout(list(view.traces), "zh"), view.traces.values()))
    assert named["无衰减"]["normaliser_norm"] is not None
    assert named["DeltaNet"]["normaliser_norm"] is None
    assert named["HGRN2 门控"]["state_norm"] is view.traces["HGRN2 gates"]["state_norm"]


def test_view_numbers_are_the_probes(sample, view_en):
    """The capacity and recall the view shows are the engine's probes with the view's controls."""
    fmap = views.make_feature_map("elu1", 8, 8, 0)[0]
    pairs = state_views.capacity_pairs(8)
    cap = state_probes.capacity_probe(None, 8, pairs, "deltanet", beta=catalog.STATE_DEFAULTS["beta"], gamma=0.9,
                               strength=2.0, lower_bound=catalog.STATE_DEFAULTS["lower_bound"],
                               trials=state_views.CAPACITY_TRIALS)
    np.testing.assert_array_equal(view_en.capacity["DeltaNet"]["recalled"], cap.recalled.numpy())
    hgrn = state_probes.recall_probe(fmap, 8, [1, 16, 64], "hgrn2", position="recent", gamma=0.9, strength=2.0,
                              lower_bound=catalog.STATE_DEFAULTS["lower_bound"])
    np.testing.assert_allclose(view_en.recall["HGRN2 gates"]["recent_cosine"], hgrn.cosine.numpy())
    assert pairs[0] < 8 < pairs[-1] == 16 * 8


def test_step_of_the_delta_rule_has_erased_and_written_parts(sample, view_en):
    s = view_en.step
    assert s["kind_id"] == "deltanet" and s["t"] == 5 and s["erased"] is not None
    k, v = sample.k[0, 0].double(), sample.v[0, 0].double()
    unit = k / k.norm(dim=-1, keepdim=True)
    beta = catalog.STATE_DEFAULTS["beta"]
    sv = torch.zeros(8, 8, dtype=torch.float64)
    for t in range(6):
        before = sv
        sv = sv - beta * torch.outer(unit[t], unit[t] @ sv) + beta * torch.outer(unit[t], v[t])
    np.testing.assert_allclose(s["state"], sv.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(s["update"], (beta * torch.outer(unit[5], v[5])).numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(s["erased"], (beta * torch.outer(unit[5], unit[5] @ before)).numpy(),
                               rtol=1e-4, atol=1e-5)
    plain = views.state_step(sample, 0, 0, "elu1", 8, 0, 0.9, 2.0, 5, "gla")
    assert plain["erased"] is None and plain["kind_id"] == "gla"


# --- checks -----------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, en_word, zh_word", [
    (dict(kind="mamba"), "Update", "更新方式"),
    (dict(kind=["linear"]), "Update", "更新方式"),
    (dict(map_id="softmax"), "Feature map", "特征映射"),
    (dict(map_id="nope"), "Feature map", "特征映射"),
    (dict(m=0), "Features m", "特征数 m"),
    (dict(m=2.5), "Features m", "特征数 m"),
    (dict(m="abc"), "Features m", "特征数 m"),
    (dict(seed=-1), "Seed", "随机种子"),
    (dict(gamma=0.0), "RetNet γ", "RetNet γ"),
    (dict(gamma=float("nan")), "RetNet γ", "RetNet γ"),
    (dict(strength=9.0), "Gate strength", "门控强度"),
    (dict(lower_bound=1.0), "HGRN2 lower bound", "HGRN2 下界"),
    (dict(lower_bound=float("inf")), "HGRN2 lower bound", "HGRN2 下界"),
    (dict(beta=0.0), "DeltaNet", "DeltaNet"),
    (dict(beta=True), "DeltaNet", "DeltaNet"),
])
def test_each_control_is_refused_in_one_sentence_naming_it(kwargs, en_word, zh_word):
    from explorer.text import say_error
    with pytest.raises(ValueError) as excinfo:
        state_views.check_controls(**kwargs)
    for lang, word in (("en", en_word), ("zh", zh_word)):
        message = say_error(excinfo.value, lang)
        assert message.startswith(word) and message.count("\n") == 0, message
        assert message.rstrip().endswith(("." if lang == "en" else "。")), message
        if lang == "zh":
            assert not chinese_leftovers(message.replace("softmax", "").replace("elu", "")), message


def test_a_long_value_is_not_echoed_in_full():
    with pytest.raises(ValueError) as excinfo:
        state_views.check_controls(kind="x" * 100_000)
    assert len(str(excinfo.value)) < 160


def test_defaults_pass_and_step_is_checked():
    c = state_views.check_controls()
    assert c.kind == "linear" and c.beta == catalog.STATE_DEFAULTS["beta"]
    assert state_views.check_step(7.0) == 7
    with pytest.raises(ValueError, match="Step t"):
        state_views.check_step(-1)


def test_the_view_is_refused_before_it_allocates(monkeypatch, sample):
    """The cost model sees every update and both probes: the refusal comes before any work."""
    seen = {}

    def refuse(estimate, **_):
        seen["estimate"] = estimate
        raise ValueError("refused")

    monkeypatch.setattr(cost, "check", refuse)
    calls = []
    monkeypatch.setattr(state, "rule_trace", lambda *a, **k: calls.append(1))
    with pytest.raises(ValueError, match="refused"):
        views.state_view(sample, 0, 0, "elu1", 8, 0)
    assert not calls
    small = cost.estimate("state", n=24, d=8, dv=8, label="elu1", m=8)
    assert seen["estimate"].bytes > small.bytes and seen["estimate"].seconds > small.seconds


# --- figures ----------------------------------------------------------------------------

def _figures(view, presentation=False):
    from explorer.ui import state_tab
    return state_tab.render(view, presentation)


def _texts(fig: go.Figure) -> list[str]:
    """Every text a figure shows: title, subtitle, axis titles, annotations, legend, trace
    names, colour bars, hover templates."""
    out = [fig.layout.title.text or "", (fig.layout.title.subtitle.text or "") if fig.layout.title.subtitle else ""]
    for name in fig.layout:
        obj = fig.layout[name]
        if name.startswith(("xaxis", "yaxis")) and obj.title and obj.title.text:
            out.append(obj.title.text)
        if name.startswith("coloraxis") and obj.colorbar and obj.colorbar.title:
            out.append(obj.colorbar.title.text or "")
    out += [a.text or "" for a in fig.layout.annotations or ()]
    if fig.layout.legend and fig.layout.legend.title:
        out.append(fig.layout.legend.title.text or "")
    for trace in fig.data:
        out += [trace.name or "", getattr(trace, "hovertemplate", None) or ""]
    return out


def _axes_with_data(fig: go.Figure) -> set[str]:
    used = set()
    for trace in fig.data:
        used.add("xaxis" + (trace.xaxis or "x")[1:])
        used.add("yaxis" + (trace.yaxis or "y")[1:])
    return used


def _said(figs, lang: str) -> list:
    return [said_figure(fig, lang) for fig in figs]


@pytest.mark.parametrize("presentation", [False, True])
def test_every_axis_is_titled(view_en, presentation):
    figs = _figures(view_en, presentation)
    for fig in [*figs, *_said(figs, "zh")]:
        for name in _axes_with_data(fig):
            assert fig.layout[name].title.text, (fig.layout.title.text, name)


@pytest.mark.slow
def test_chinese_figures_have_no_english_words(view_en, sample):
    figs = list(_figures(view_en))
    # The other steps too: additive and HGRN2.
    for kind in ("linear", "hgrn2"):
        s = views.state_step(sample, 0, 0, "elu1", 8, 0, 0.9, 2.0, 5, kind)
        figs.append(figures.state_step(s["update"], s["state"], s["t"], s["token"], s["kind"], erased=s["erased"],
                                       kind_id=s["kind_id"]))
    for fig in _said(figs, "zh"):
        for text in _texts(fig):
            assert not chinese_leftovers(text), (chinese_leftovers(text), text)
    for notice in said_throughout(view_en.notices, "zh"):
        assert not chinese_leftovers(notice), notice


def test_the_checker_finds_english(view_en):
    """The check above can fail: the English figures are full of words it reports."""
    leftovers = [word for fig in _figures(view_en) for text in _texts(fig) for word in chinese_leftovers(text)]
    assert {"capacity", "recalled", "erased"} <= {word.lower() for word in leftovers}


def test_figures_show_every_update_and_the_engine_numbers(view_en):
    view = view_en
    built = _figures(view)
    for lang, (step, curves, memory, capacity) in (("en", built), ("zh", _said(built, "zh"))):
        labels = _labels(lang)
        legend = [t.name for t in curves.data if t.showlegend is not False]
        assert legend == labels
        recall = [t for t in curves.data if t.xaxis == "x4"]
        assert len(recall) == 2 * len(STATE_KINDS)                   # early and recent key for each
        names = [t.name for t in capacity.data]
        assert set(labels) <= set(names)
        for label, kind in zip(labels, STATE_KINDS):
            line = next(t for t in capacity.data if t.name == label)
            np.testing.assert_array_equal(line.y, view.capacity[state_views.kind_label(kind)]["recalled"])
    # The delta rule's step: three heatmaps, erased beside written, one shared scale.
    heatmaps = [t for t in built[0].data if t.type == "heatmap"]
    assert len(heatmaps) == 3
    np.testing.assert_array_equal(heatmaps[0].z, view.step["update"])
    np.testing.assert_array_equal(heatmaps[1].z, view.step["state"])
    np.testing.assert_array_equal(heatmaps[2].z, view.step["erased"])
    assert heatmaps[0].coloraxis == heatmaps[2].coloraxis != heatmaps[1].coloraxis
    # The normaliser panel draws only the updates that have one.
    z_panel = [t.name for t in _figures(view_en)[1].data if t.xaxis == "x2"]
    assert z_panel == [state_views.kind_label(kind) for kind in STATE_KINDS
                       if mechanisms.for_state_kind(kind).has_normaliser]
    assert z_panel[:3] == ["no decay", "RetNet γ", "GLA gates"]


def test_capacity_marks_d_on_its_log_axis(view_en):
    fig = _figures(view_en)[3]
    assert fig.layout.xaxis.type == "log"
    mark = [a for a in fig.layout.annotations if "P = d" in (a.text or "")]
    assert mark and mark[0].x == pytest.approx(np.log10(view_en.head_dim))
    assert any(s.x0 == view_en.head_dim for s in fig.layout.shapes)
