"""Your own feature map, with no edit to the package: a module in a folder of its own, named by
EXPLORER_FEATURE_MAPS (or app.py --feature-maps), joins every view that lists maps; a public
server refuses to import it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from explorer import catalog, maps, plugins, views
from explorer.core.feature_maps import SPECS
from explorer.measure import cost
from explorer.sources.sample import Sample
from explorer.text import said

ROOT = Path(__file__).resolve().parents[2]
NAME = "softplus_plugin"
PLUGIN = f'''
    import torch
    from pathlib import Path

    from explorer.core.feature_maps import FeatureMapSpec, add_spec
    from explorer.maps import FeatureMap, register

    Path(__file__).with_suffix(".imported").write_text("yes")


    @register
    class SoftplusPlugin(FeatureMap):
        """softplus(x) of each coordinate: a positive map of d features (its kernel is not softmax's)."""

        spec = add_spec(FeatureMapSpec("{NAME}", "softplus (mine)", lambda d: d))

        def features(self, x, is_query):
            return torch.nn.functional.softplus(x)
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    path = tmp_path / "my_maps.py"
    path.write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("EXPLORER_PUBLIC", raising=False)
    monkeypatch.setenv(plugins.ENV, str(path))
    yield path
    SPECS.pop(NAME, None)
    from explorer.maps import base
    base._REGISTRY.pop(NAME, None)


def test_a_map_from_outside_the_package_is_in_every_view_that_lists_maps(plugin):
    assert plugins.load() == [NAME] and NAME in maps.names()
    label = NAME
    # A map with no words in the language files is named by its spec, in both languages.
    assert label in catalog.map_choices() and said(catalog.map_label(label), "zh") == "softplus (mine)"
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 12, 8, generator=gen) for _ in range(3))
    sample = Sample(q, k, v, [f"t{i}" for i in range(12)], source="random")
    view = views.maps_view(sample, 0, 1, ["softmax", label], True)
    fq, fk = (torch.nn.functional.softplus(x[0, 1].double()) for x in (q, k))
    w = (fq @ fk.T).tril()
    assert torch.allclose(torch.from_numpy(view.maps[label]).double(), w / w.sum(-1, keepdim=True), atol=1e-6)
    assert any(row["map"] == label for row in view.metrics)
    quality = views.quality_view(sample, 0, 1, ["favor_plus_iid"], ms=(4, 8), seeds=2, spread=0)
    assert label in {row["map"] for row in quality.shape_rows}
    overview = views.head_overview(sample, label, "map_rel_error", m=8)
    assert overview.values.shape == (1, 2)
    assert cost.estimate("maps", n=12, d=8, maps=[label]).seconds > 0


def test_a_public_server_imports_nothing_from_outside(plugin, monkeypatch):
    monkeypatch.setenv("SPACE_ID", "someone/space")
    with pytest.raises(plugins.Refused, match=plugins.ENV):
        plugins.load()
    assert not plugin.with_suffix(".imported").exists() and NAME not in SPECS
    # The app's own command line says so and stops before serving anything.
    done = subprocess.run([sys.executable, str(ROOT / "app.py"), "--public", "--feature-maps", str(plugin)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={k: v for k, v in __import__("os").environ.items() if k != "SPACE_ID"})
    assert done.returncode == 2 and "public server" in done.stderr
    assert not plugin.with_suffix(".imported").exists()


def test_no_plugin_named_loads_nothing(monkeypatch):
    monkeypatch.delenv(plugins.ENV, raising=False)
    assert plugins.load() == [] and plugins.named(" , ") == []
