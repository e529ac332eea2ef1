"""PNG export of a Chinese view shows the characters: with a CJK font installed (Debian
fonts-noto-cjk, named in packages.txt for Spaces) two different characters render as two
different pictures; without one both would be the same empty box."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("kaleido")
if not Path("/usr/bin/chromium").exists() and not shutil.which("chromium"):
    pytest.skip("PNG export needs chromium", allow_module_level=True)


def _title_png(tmp_path, text: str) -> np.ndarray:
    import plotly.graph_objects as go
    from PIL import Image

    from explorer.figures.style import Style, finish
    from explorer.ui import common

    fig = finish(go.Figure(go.Scatter(x=[0, 1], y=[0, 1])), Style(presentation=True), text, 300)
    path = tmp_path / f"{ord(text[0])}.png"
    assert common._png(fig, path), "kaleido could not write the PNG"
    return np.asarray(Image.open(path).convert("L"))


def test_chinese_characters_are_drawn_not_boxes(tmp_path):
    cat, dog = _title_png(tmp_path, "猫猫猫猫"), _title_png(tmp_path, "狗狗狗狗")
    assert cat.shape == dog.shape
    assert (cat != dog).sum() > 200, "two different characters exported as the same picture: no CJK font?"


def test_a_chinese_chapter_exports(tmp_path):
    from explorer.figures.lecture import chapter_figures
    from explorer.ui import common
    from explorer.views.lecture import chapter_view

    figs = chapter_figures(chapter_view(0, n=4096, d=64), lang="zh")
    paths = common.export_files("lecture-0", {f"figure-{i}": f for i, f in enumerate(figs)}, {})
    pngs = [p for p in paths if p.endswith(".png")]
    assert len(pngs) == len(figs) and all(Path(p).stat().st_size > 10_000 for p in pngs)
