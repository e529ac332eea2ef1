"""docs/maps.md is true: the module it shows adds a map that draws, and its commands run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from explorer import maps, plugins
from explorer.core.feature_maps import SPECS

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "maps.md").read_text(encoding="utf-8")


@pytest.fixture
def doc_module(tmp_path, monkeypatch):
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("EXPLORER_PUBLIC", raising=False)
    code = re.search(r"```python\n(.*?)```", DOC, re.S).group(1)
    path = tmp_path / "my_maps.py"
    path.write_text(code, encoding="utf-8")
    yield path
    from explorer.maps import base
    for name in [name for name in SPECS if name == "softplus"]:
        SPECS.pop(name)
        base._REGISTRY.pop(name, None)


def test_the_documented_module_adds_a_map_that_draws(doc_module):
    assert plugins.load(str(doc_module)) == ["softplus"]
    phi = maps.create("softplus", head_dim=16)
    x = torch.randn(3, 10, 16)
    out = phi(x)
    assert out.shape == (3, 10, 16) and bool((out > 0).all())
    assert torch.allclose(out, torch.nn.functional.softplus(x / 2.0))


@pytest.mark.slow
def test_the_documented_commands_run(doc_module):
    env = {**os.environ, "EXPLORER_FEATURE_MAPS": str(doc_module)}
    env.pop("SPACE_ID", None)
    env.pop("EXPLORER_PUBLIC", None)
    for command in ([sys.executable, "app.py", "--help"], [sys.executable, "-m", "explorer", "probe", "--help"]):
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (command, done.stderr[-2000:])
    assert "--feature-maps" in subprocess.run([sys.executable, "app.py", "--help"], cwd=ROOT, capture_output=True,
                                              text=True, timeout=120).stdout
    assert "python app.py --feature-maps my_maps.py" in DOC and "EXPLORER_FEATURE_MAPS=my_maps.py" in DOC
