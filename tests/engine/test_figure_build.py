"""The maps grid is built without plotly's validation (for speed): what it sends must be what a
validated figure of the same content sends, and everything in it must be valid."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer import figures


@pytest.mark.parametrize("presentation", [False, True])
def test_the_unvalidated_grid_is_exactly_its_validated_self(presentation):
    rng = np.random.default_rng(0)
    n = 7
    soft = rng.random((n, n))
    soft /= soft.sum(1, keepdims=True)
    signed = soft - 0.05                                     # negative weights: its own colour axes
    maps = {"softmax": soft, "elu1": soft[::-1].copy(), "taylor1": signed}
    errors = {name: maps[name] - soft for name in maps if name != "softmax"}
    fig = figures.attention_grid([f"t{i}" for i in range(n)], maps, errors, title="a title · with a part",
                                 note="a note", style=presentation, infinite_kl={"elu1": [2]})
    sent = json.loads(fig.to_json())
    validated = go.Figure(sent)                              # raises on anything plotly would refuse
    assert json.loads(validated.to_json()) == sent
    assert isinstance(sent["layout"]["coloraxis"]["colorscale"], list)   # named scales written out
