"""Decay, gates and the delta rule in the maps tab: the map drawn is the mechanism's own
``attention_map`` for the inputs the tab documents, its product with V is the mechanism's
output, its metrics equal a plain float64 recomputation, and it is always causal."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from explorer import mechanisms, views
from explorer.measure import cost, metrics
from explorer.sources.sample import Sample
from explorer.text import said, say
from explorer.mechanisms.recurrence import seeded_projection
from explorer.views.mechanism_maps import MechanismSettings, mechanism_label, mechanism_map, mechanism_maps

MECHANISM_MAPS = mechanism_maps()


def _sample(n=13, d=8, heads=3, seed=0) -> Sample:
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, heads, n, d, generator=gen) for _ in range(3))
    return Sample(q, k, v, [f"t{i}" for i in range(n)], source="random")


# The documented inputs of each mechanism's map, written out again by hand (elu+1 features for
# RetNet and GLA, unit queries, and keys for the delta rule, gates and beta from seeded
# projections): the view's map must be the mechanism's own map of these.

def _elu1(q, k):
    return F.elu(q) + 1, F.elu(k) + 1


def _plain_retnet(q, k, settings, head):
    gamma = settings.gamma if settings.gamma is not None else 1 - 2.0 ** (-5 - head)
    return (*_elu1(q, k), {"log_decay": torch.tensor([[math.log(gamma)]], dtype=torch.float64)})


def _plain_gla(q, k, settings, head):
    fq, fk = _elu1(q, k)
    w = seeded_projection(q.shape[-1], q.shape[-1], settings.seed)
    return fq, fk, {"log_decay": F.logsigmoid(fk @ w) / 16.0}


def _plain_scalar_gate(q, k, settings, head):
    fq, fk = _elu1(q, k)
    w = seeded_projection(q.shape[-1], 1, settings.seed, salt=4)
    return fq, fk, {"log_decay": F.logsigmoid(fk @ w) / 16.0}


def _plain_hgrn2(q, k, settings, head):
    w = seeded_projection(q.shape[-1], q.shape[-1], settings.seed, salt=1)
    lb = settings.lower_bound
    f = lb + (1 - lb) * torch.sigmoid(k @ w)
    return F.normalize(q, dim=-1), k, {"f_log": torch.log(f)}


def _plain_delta(q, k, settings, head, gated=False):
    d = q.shape[-1]
    qn, kn = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
    beta = torch.sigmoid(kn @ seeded_projection(d, 1, settings.seed, salt=2))[..., 0]
    if settings.beta is not None:
        beta = torch.full_like(beta, settings.beta)
    params = {"beta": beta}
    if gated:
        params["log_decay"] = F.logsigmoid(kn @ seeded_projection(d, 1, settings.seed, salt=3))[..., 0] / 16.0
    return qn, kn, params


PLAIN_INPUTS = {"retnet": _plain_retnet, "gla": _plain_gla, "scalar_gate": _plain_scalar_gate, "hgrn2": _plain_hgrn2,
                "deltanet": _plain_delta,
                "gated_deltanet": lambda *a: _plain_delta(*a, gated=True)}


SETTINGS = [MechanismSettings(), MechanismSettings(gamma=0.8, seed=7, lower_bound=0.5, beta=0.3)]


@pytest.mark.parametrize("settings", SETTINGS)
@pytest.mark.parametrize("name", MECHANISM_MAPS)
def test_the_map_drawn_is_the_mechanisms_own_map_and_its_metrics_a_float64_recomputation(name, settings):
    if name not in PLAIN_INPUTS:
        pytest.skip(f"no plain re-derivation of {name}'s inputs written in this test yet")
    sample = _sample()
    head = 1
    view = views.maps_view(sample, 0, head, ["softmax"], True, mechanisms=[name], mechanism_settings=settings)
    assert view.labels[name] == mechanism_label(name, settings)      # keyed by name, labelled in words
    q, k, v = sample.q[0, head].double(), sample.k[0, head].double(), sample.v[0, head].double()
    mq, mk, params = PLAIN_INPUTS[name](q, k, settings, head)
    mechanism = mechanisms.get(name)
    expected = mechanism.attention_map(mq, mk, **params).double()
    assert torch.allclose(torch.from_numpy(view.maps[name]).double(), expected, atol=1e-6)
    # O = M V: the map's product with V is the recurrence's output, token by token in float64.
    out = mechanism.reference(mq, mk, v, **params)
    assert torch.allclose(expected @ v, out, atol=1e-9, rtol=1e-9)
    assert torch.equal(expected.triu(1), torch.zeros_like(expected))
    # The table's numbers: metrics.compare_plain on the float64 map against causal softmax.
    reference = torch.softmax((q @ k.T / math.sqrt(q.shape[-1])).masked_fill(
        ~torch.ones(q.shape[0], q.shape[0], dtype=torch.bool).tril(), -math.inf), -1)
    logits = (q @ k.T / math.sqrt(q.shape[-1])).masked_fill(~torch.ones_like(reference, dtype=torch.bool).tril(),
                                                           -math.inf)
    plain = metrics.compare_plain(reference, expected, v, logits, ill_defined=~torch.isfinite(expected).all(-1),
                                  feature_dim=q.shape[-1], causal=True, head_dim=q.shape[-1])
    row = next(r for r in view.metrics if r["map"] == name)
    for key in ("map_rel_error", "output_rel_error", "kl_mean", "entropy_approx", "monotonicity",
                "negative_fraction", "kl_rows_infinite", "kl_rows_undefined", "causal"):
        if plain[key] is None:
            assert row[key] is None, key
        else:
            assert row[key] == pytest.approx(plain[key], rel=1e-6, abs=1e-9), key


def test_on_non_causal_data_the_mechanisms_are_causal_judged_against_causal_softmax_and_said_so():
    sample = _sample()
    view = views.maps_view(sample, 0, 0, ["softmax", "elu1"], False, mechanisms=list(MECHANISM_MAPS))
    labels = list(MECHANISM_MAPS)
    assert view.causal_only == labels
    assert say("maps.mechanisms_causal") in view.notices
    rows = {r["map"]: r for r in view.metrics}
    assert rows["elu1"]["causal"] == 0 and all(rows[label]["causal"] == 1 for label in labels)
    causal = views.maps_view(sample, 0, 0, ["softmax"], True, mechanisms=list(MECHANISM_MAPS))
    for label in labels:
        assert rows[label] == next(r for r in causal.metrics if r["map"] == label)
        # The error drawn is against causal softmax, not the softmax panel shown.
        assert torch.allclose(torch.from_numpy(view.errors[label]),
                              torch.from_numpy(view.maps[label] - causal.maps["softmax"]), atol=1e-7)


def test_mean_over_heads_gives_each_head_its_own_retnet_gamma():
    sample = _sample()
    view = views.maps_view(sample, 0, "mean", ["softmax"], True, mechanisms=["retnet"])
    maps = [mechanism_map("retnet", sample.q[0, h], sample.k[0, h], MechanismSettings(), h) for h in range(3)]
    assert torch.allclose(torch.from_numpy(view.maps["retnet"]).double(), torch.stack(maps).mean(0), atol=1e-6)


def test_gla_says_whether_its_gates_are_seeded_or_fitted():
    sample = _sample(n=10)
    seeded = views.maps_view(sample, 0, 0, ["softmax"], True, mechanisms=["gla"])
    fitted = views.maps_view(sample, 0, 0, ["softmax"], True, mechanisms=["gla"],
                             mechanism_settings=MechanismSettings(gates="fitted"))
    assert seeded.labels["gla"] == "GLA gates (seeded)" and fitted.labels["gla"] == "GLA gates (fitted)"
    assert said(fitted.labels["gla"], "zh") == "GLA 门控（拟合）"
    assert say("maps.note_gla_fitted") in fitted.mechanism_note and say("maps.note_gla_seeded", seed=0) in \
        seeded.mechanism_note


@pytest.mark.parametrize("bad", [dict(gamma=0.0), dict(gamma=1.5), dict(gates="learned"), dict(seed=-1),
                                 dict(lower_bound=1.0), dict(beta=0.0), dict(beta=2.0)])
def test_settings_out_of_range_are_refused_in_words(bad):
    with pytest.raises(ValueError) as excinfo:
        views.maps_view(_sample(), 0, 0, ["softmax"], True, mechanisms=["retnet"],
                        mechanism_settings=MechanismSettings(**bad))
    assert "Traceback" not in str(excinfo.value)
    with pytest.raises(ValueError, match="mechanisms"):
        views.maps_view(_sample(), 0, 0, ["softmax"], True, mechanisms=["mamba"])


@pytest.mark.slow
def test_the_cost_model_prices_every_mechanism_and_a_refused_one_is_a_notice():
    from explorer.views.mechanism_maps import cost_form
    assert {cost_form(name) for name in MECHANISM_MAPS} == set(cost.MECHANISM_FORMS)
    for name in MECHANISM_MAPS:
        small = cost.estimate("mechanism", n=64, d=32, form=cost_form(name))
        large = cost.estimate("mechanism", n=2048, d=64, form=cost_form(name))
        assert 0 < small.bytes < large.bytes and 0 < small.seconds < large.seconds
    fit = cost.estimate("mechanism", n=512, d=64, form="per_feature", fit_steps=80)
    assert fit.seconds > cost.estimate("mechanism", n=512, d=64, form="per_feature").seconds
    # Per-feature gates at N = 2048, d = 64 hold ~6 GB of decays: refused before any is formed.
    assert not cost.fits(cost.estimate("mechanism", n=2048, d=64, form="per_feature"))
    gen = torch.Generator().manual_seed(0)
    n, d = 2048, 64
    big = Sample(*(torch.randn(1, 1, n, d, generator=gen) for _ in range(3)), [f"t{i}" for i in range(n)])
    view = views.maps_view(big, 0, 0, ["softmax"], True, mechanisms=["gla"], spread=0)
    assert "gla" not in view.maps
    assert any(x.startswith(say("maps.not_shown", label="GLA gates (seeded)", why="")[:20]) for x in view.notices)


def test_quality_per_map_panels_include_every_mechanism():
    quality = views.quality_view(_sample(), 0, 0, ["favor_plus_iid"], ms=(4, 8), seeds=2, spread=0)
    shown = {row["map"] for row in quality.shape_rows}
    assert set(MECHANISM_MAPS) <= shown
    assert say("maps.mechanisms_causal") not in quality.notices


@pytest.mark.parametrize("n", [1, 2, 65])
def test_every_mechanism_draws_at_any_length(n):
    view = views.maps_view(_sample(n=n, heads=1), 0, 0, ["softmax"], True, mechanisms=list(MECHANISM_MAPS))
    assert len(view.maps) == 1 + len(MECHANISM_MAPS)
    for name in MECHANISM_MAPS:
        assert view.maps[name].shape == (n, n)
