"""A new mechanism is its folder, its line in the registry and its words in the two language
files, nothing else (docs/mechanisms.md). The toy here, linear attention whose state decays
by 0.9 at every step, is written into a temporary folder the registry reads as one of its
own: it passes the reference checks and draws in the maps, quality and state views, in
English and Chinese, with every slider of the maps tab's drawer set."""

from __future__ import annotations

import math
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

from explorer import mechanisms, text, views
from explorer.measure import cost
from explorer.sources.sample import Sample
from explorer.text import said, said_throughout, say
from explorer.views.mechanism_maps import MechanismSettings, mechanism_label, mechanism_maps

NAME = "decay09"
INIT = f'''
    """A toy: linear attention whose state decays by 0.9 at every step."""

    from explorer.mechanisms import WRITES_FEATURES

    STATE_KIND = "{NAME}"
    WRITES = WRITES_FEATURES
    YEAR = 2026
'''
MECHANISM = '''
    import math

    import torch

    from explorer.mechanisms.linear.mechanism import KernelRecurrence
    from . import STATE_KIND, WRITES


    class Decay09(KernelRecurrence):
        name = __package__.rpartition(".")[2]
        state_kind = STATE_KIND
        writes = WRITES
        params = required = ("log_decay",)

        def default_params(self, q, k, seed=0):
            return {"log_decay": torch.full((1, 1), math.log(0.9), dtype=k.dtype)}

        def gate_preset(self, n, m, *, log_gamma, strength, seed, head, dtype):
            return torch.full((n, 1), math.log(0.9), dtype=dtype)


    MECHANISM = Decay09()
'''
# Its words: the two language files' lines for it.
WORDS = {
    f"state.kind.{NAME}": ("decay 0.9", "衰减 0.9"),
    f"state.road.{NAME}": ("{year} decay 0.9", "{year} 年：衰减 0.9"),
    f"state.road_short.{NAME}": ("{year} decay 0.9", "{year} 衰减 0.9"),
    f"maps.note_{NAME}": ("decay 0.9: elu+1 features, seed {seed}", "衰减 0.9：elu+1 特征，种子 {seed}"),
}


@pytest.fixture
def toy(tmp_path, monkeypatch):
    folder = tmp_path / NAME
    folder.mkdir()
    (folder / "__init__.py").write_text(textwrap.dedent(INIT), encoding="utf-8")
    (folder / "mechanism.py").write_text(textwrap.dedent(MECHANISM), encoding="utf-8")
    monkeypatch.setattr(mechanisms, "__path__", [*mechanisms.__path__, str(tmp_path)])
    monkeypatch.setattr(mechanisms, "NAMES", (*mechanisms.NAMES, NAME))          # its registry line
    for key, (en, zh) in WORDS.items():
        monkeypatch.setitem(text.TEXT, key, {"en": en, "zh": zh})
    mechanisms.for_state_kind.cache_clear()
    yield mechanisms.get(NAME)
    mechanisms.for_state_kind.cache_clear()
    for module in [m for m in sys.modules if m.startswith(f"{mechanisms.__name__}.{NAME}")]:
        del sys.modules[module]


def _qkv(n, d=8, heads=2, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(1, heads, n, d, generator=gen, dtype=torch.float64) for _ in range(3))


def _sample(n=13, d=8, heads=2):
    q, k, v = (x.float() for x in _qkv(n, d, heads))
    return Sample(q, k, v, [f"t{i}" for i in range(n)], source="random")


@pytest.mark.parametrize("n", [1, 37, 301])
def test_the_toy_passes_the_reference_checks(toy, n):
    q, k, v = _qkv(n)
    q, k = F.elu(q) + 1, F.elu(k) + 1
    params = toy.default_params(q, k)
    reference = toy.reference(q, k, v, **params)
    assert torch.allclose(toy.attention_map(q, k, **params) @ v, reference, rtol=1e-9, atol=1e-12)
    for method in ("recurrent", "chunked"):
        assert torch.allclose(toy.output(q, k, v, method=method, **params), reference, rtol=1e-9, atol=1e-12)
    # The decay written out: w_ij = phi(q_i).phi(k_j) 0.9^(i - j) for j <= i, rows normalised.
    i, j = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    w = (q @ k.transpose(-1, -2)) * torch.where(j <= i, 0.9 ** (i - j).double(), torch.zeros(()))
    assert torch.allclose(toy.attention_map(q, k, **params), w / w.sum(-1, keepdim=True), atol=1e-12)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_toy_draws_in_the_maps_tab_with_every_slider_set(toy, lang):
    assert NAME in mechanism_maps()
    settings = MechanismSettings(gamma=0.7, gates="fitted", seed=3, lower_bound=0.5, beta=0.4)
    view = views.maps_view(_sample(), 0, 1, ["softmax"], True, mechanisms=[NAME], mechanism_settings=settings)
    label = mechanism_label(NAME, settings)
    assert label == "decay 0.9" and NAME in view.maps and view.labels[NAME] == label
    assert said(label, "zh") == "衰减 0.9"
    assert say(view.mechanism_note, lang) == say(f"maps.note_{NAME}", lang, seed=3)
    q, k = (F.elu(x[0, 1].double()) + 1 for x in _qkv(13)[:2])
    n = q.shape[0]
    i, j = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    w = (q @ k.T) * torch.where(j <= i, 0.9 ** (i - j).double(), torch.zeros(()))
    assert torch.allclose(torch.from_numpy(view.maps[NAME]).double(), w / w.sum(-1, keepdim=True), atol=1e-6)
    assert cost.estimate("mechanism", n=64, d=8, form=toy.cost_form).seconds > 0


def test_the_toy_is_in_the_quality_tabs_panels(toy):
    quality = views.quality_view(_sample(), 0, 0, ["favor_plus_iid"], ms=(4, 8), seeds=2, spread=0)
    assert NAME in {row["map"] for row in quality.shape_rows}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_toy_is_an_update_of_the_state_tab(toy, lang):
    assert NAME in mechanisms.state_kinds() and (NAME, 2026) in mechanisms.state_kind_years()
    view = views.state_view(_sample(), 0, 0, "elu1", 8, 0, 0.9, 2.0, t=5, kind=NAME, lags=(1, 16, 64))
    words = say(f"state.kind.{NAME}", lang)
    assert words in said_throughout(list(view.recall), lang) and words in said_throughout(list(view.traces), lang)
    # Its log gates: 0.9 at every step, whatever the sliders say.
    assert toy.gate_preset(4, 8, log_gamma=None, strength=1.0, seed=0, head=0, dtype=torch.float64).tolist() == \
        [[math.log(0.9)]] * 4
