"""Every registered mechanism three ways: its N x N map times V, its fast forms and its float64
loop give one output."""

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from explorer import mechanisms

B, H, DK, DV = 2, 3, 16, 24
PACKAGE = Path(mechanisms.__file__).resolve().parent
# Every folder of explorer/mechanisms/ is a mechanism.
FOLDERS = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}


def rel_err(out, ref):
    """Largest absolute difference over the largest reference value."""
    return float((out.double() - ref.double()).abs().max() / ref.double().abs().max())


def inputs(n, seed=0):
    """Positive unit queries and keys: valid features for the kernel maps (a positive
    normaliser) and unit keys for the delta rule, as the callers would give them."""
    gen = torch.Generator().manual_seed(seed)
    q = F.normalize(torch.rand(B, H, n, DK, generator=gen) + 0.05, dim=-1)
    k = F.normalize(torch.rand(B, H, n, DK, generator=gen) + 0.05, dim=-1)
    v = torch.randn(B, H, n, DV, generator=gen)
    return q, k, v


def test_the_registry_lists_every_folder_once():
    assert set(mechanisms.names()) == FOLDERS and len(mechanisms.names()) == len(FOLDERS)
    for name in FOLDERS:
        assert mechanisms.get(name).name == name
    with pytest.raises(ValueError, match="name"):
        mechanisms.get("mamba")


@pytest.mark.parametrize("name", mechanisms.names())
@pytest.mark.parametrize("n", [1, 37, 301])
def test_the_map_times_v_is_the_recurrent_output(name, n):
    mech = mechanisms.get(name)
    q, k, v = inputs(n)
    params = mech.default_params(q, k, seed=0)
    a = mech.attention_map(q, k, **params)
    assert a.shape == (B, H, n, n)
    assert torch.all(a.triu(1) == 0)                            # causal: no future key is read
    out = mech.output(q, k, v, method="recurrent", **params)
    assert out.shape == (B, H, n, DV)
    assert rel_err(a @ v, out) < 1e-5


@pytest.mark.parametrize("name", mechanisms.names())
@pytest.mark.parametrize("method", ["recurrent", "chunked"])
@pytest.mark.parametrize("n", [1, 37, 301])
def test_each_fast_form_equals_the_float64_loop(name, method, n):
    mech = mechanisms.get(name)
    q, k, v = inputs(n, seed=1)
    params = mech.default_params(q, k, seed=3)
    ref = mech.reference(q, k, v, **params)
    assert ref.dtype == torch.float64
    assert rel_err(mech.output(q, k, v, method=method, **params), ref) < 1e-5


def test_the_decays_and_gates_change_the_map():
    """RetNet and GLA are the linear map with a decay mask: their default parameters are used."""
    q, k, _ = inputs(37)
    plain = mechanisms.get("linear").attention_map(q, k)
    for name in ("retnet", "gla"):
        mech = mechanisms.get(name)
        assert rel_err(mech.attention_map(q, k, **mech.default_params(q, k)), plain) > 1e-3
    delta, gated = mechanisms.get("deltanet"), mechanisms.get("gated_deltanet")
    p = gated.default_params(q, k)
    assert rel_err(gated.attention_map(q, k, **p), delta.attention_map(q, k, beta=p["beta"])) > 1e-3


def test_default_params_are_seeded():
    q, k, _ = inputs(37)
    for name in ("gla", "hgrn2", "deltanet", "gated_deltanet"):
        mech = mechanisms.get(name)
        a, b, c = (mech.default_params(q, k, seed=s) for s in (0, 0, 1))
        assert all(torch.equal(a[p], b[p]) for p in a)
        assert any(not torch.equal(a[p], c[p]) for p in a)


def test_bad_method_and_unknown_parameters_are_refused():
    q, k, v = inputs(5)
    mech = mechanisms.get("deltanet")
    params = mech.default_params(q, k)
    with pytest.raises(ValueError, match="method"):
        mech.output(q, k, v, method="parallel", **params)
    with pytest.raises(ValueError, match="params"):
        mech.output(q, k, v, gamma=0.9, **params)
    with pytest.raises(ValueError, match="needs beta"):
        mech.attention_map(q, k)
    with pytest.raises(ValueError, match="needs log_decay"):
        mechanisms.get("retnet").output(q, k, v)


def test_the_state_tab_updates_come_from_the_registry():
    kinds = [mechanisms.get(name).state_kind for name in mechanisms.names()]
    assert mechanisms.state_kinds() == tuple(kind for kind in kinds if kind is not None)
    assert mechanisms.for_state_kind("linear").name == "linear"
    assert mechanisms.get("softmax").state_kind is None
    for kind in mechanisms.state_kinds():
        assert mechanisms.for_state_kind(kind).writes == mechanisms.writes(kind)


def test_a_mechanism_lives_in_its_folder_the_registry_and_the_language_files():
    # The newest mechanism is the canary: nothing else in the app names it, so the next one is
    # one new folder plus its lines in the two language files.
    root = Path(__file__).resolve().parents[2]
    named = sorted(str(path.relative_to(root)) for folder in ("explorer", "scripts", "assets")
                   for path in (root / folder).rglob("*") if path.suffix in (".py", ".toml", ".js", ".txt")
                   and "scalar_gate" in path.read_text(encoding="utf-8", errors="replace"))
    # The MQAR experiment chooses the mixers it trains, each with its own learned gates (a
    # new mechanism needs no line there: it is simply not trained until one is written).
    allowed = ("explorer/mechanisms/scalar_gate/", "explorer/mechanisms/__init__.py", "explorer/text/",
               "explorer/experiments/mqar.py")
    assert [path for path in named if not path.startswith(allowed)] == []
    assert "explorer/mechanisms/__init__.py" in named


def test_every_state_update_has_its_year_and_its_words():
    from explorer.text import say
    for kind, year in mechanisms.state_kind_years():
        assert 2019 < year < 2030
        for lang in ("en", "zh"):
            assert str(year) in say(f"state.road_short.{kind}", lang, year=year)
            assert say(f"state.kind.{kind}", lang)
