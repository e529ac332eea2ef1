"""The small gaps of a public server: each refused in one sentence that says what is wrong,
never an internal error, and no message repeats more than 80 characters of a request."""

from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.ui import lecture_handlers
from helpers.server import MAPS_ARGS, api_call


def test_values_whose_dot_products_overflow_are_refused_in_words():
    from explorer import views
    from explorer.sources.arrays import from_arrays

    rng = np.random.default_rng(0)
    q, k = (rng.standard_normal((16, 8)) * 1e19).astype(np.float32), (rng.standard_normal((16, 8)) * 1e19).astype(np.float32)
    with pytest.raises(ValueError, match="float32 range"):
        views.maps_view(from_arrays(q, k), 0, "0", ["softmax", "elu1"], False, 64, 0)


def test_a_long_uploaded_file_name_is_cut(tmp_path):
    from explorer.sources.arrays import load_file

    file = tmp_path / ("x" * 190 + ".npy")
    file.write_bytes(b"not an array at all")
    with pytest.raises(ValueError) as caught:
        load_file(file)
    assert "x" * 61 not in str(caught.value) and "xxxx…" in str(caught.value)


@pytest.mark.parametrize("model", [["SmolLM2-135M"], True, 1e308, -1, 1])
def test_the_lecture_refuses_a_model_that_is_not_text(model):
    with pytest.raises(ValueError, match="model must be text"):
        lecture_handlers.lecture_api(chapter=1, text="The cat sat.", model=model)


def _error(app_url, index, value) -> str:
    args = list(MAPS_ARGS)
    args[index] = value
    event, payload = api_call(app_url, "maps", args)
    assert event == "error", payload[:200]
    return json.loads(payload)["error"]


@pytest.mark.slow
def test_the_maps_endpoint_refuses_in_one_short_sentence(app_url):
    message = _error(app_url, 12, None)                      # maps=null
    assert message.startswith("maps must be a list of values from") and len(message) < 400, message
    assert "preprocess" not in message
    for text in (5, ["a"]):                                  # text that is not text
        assert _error(app_url, 1, text).startswith("text must be text")
    assert "must be" in _error(app_url, 10, "-1")             # head -1, as layer -1
    assert "must be" in _error(app_url, 9, -1)
