"""The ``/state`` endpoint through gradio_client against a running app: every update, the
words in the language asked for, one clear sentence for a bad value, and the server stays up."""

from __future__ import annotations

import json

import pytest
from gradio_client import Client
from gradio_client.exceptions import AppError

pytestmark = pytest.mark.slow

from explorer import mechanisms
from explorer.text import say

STATE_KINDS = mechanisms.state_kinds()


@pytest.fixture(scope="module")
def client(app_url):
    return Client(app_url, verbose=False)


def figure(value) -> dict:
    assert isinstance(value, dict) and value.get("type") == "plotly", value
    return json.loads(value["plot"])


def test_the_endpoint_offers_every_update_and_control(client):
    info = client.view_api(print_info=False, return_format="dict")["named_endpoints"]["/state"]
    params = {p["parameter_name"]: p for p in info["parameters"]}
    assert {"kind", "lower_bound", "beta", "lang"} <= set(params)
    assert set(params["kind"]["type"]["enum"]) == set(STATE_KINDS)


@pytest.mark.parametrize("kind", ["hgrn2", "gated_deltanet"])
def test_every_update_draws(client, kind):
    step, curves, memory, notices, t, query, capacity = client.predict(kind=kind, api_name="/state")
    heatmaps = [tr for tr in figure(step)["data"] if tr["type"] == "heatmap"]
    assert len(heatmaps) == (3 if kind == "gated_deltanet" else 2)
    legend = [tr["name"] for tr in figure(curves)["data"] if tr.get("showlegend") is not False]
    assert legend == [say(f"state.kind.{kind}") for kind in STATE_KINDS]
    assert {"DeltaNet", "no decay"} <= {tr["name"] for tr in figure(capacity)["data"]}
    assert f"kind={kind}" in query and "beta=" in query and "lb=" in query


def test_chinese_words(client):
    step, curves, memory, notices, t, query, capacity = client.predict(kind="deltanet", lang="zh", api_name="/state")
    assert figure(capacity)["layout"]["title"]["text"].startswith("容量")
    assert "无衰减" in {tr["name"] for tr in figure(curves)["data"]}
    assert "合成" in notices


@pytest.mark.parametrize("kwargs, words", [
    # the page's one validation path refuses before the tab runs: the parameter, its range, what was sent
    (dict(kind="mamba"), ["kind", "deltanet", "mamba"]),
    (dict(lower_bound=1.5), ["lower_bound", "0.99", "1.5"]),
    (dict(beta=0.0), ["beta", "0.05", "0.0"]),
])
def test_bad_values_get_one_clear_sentence(client, app_url, server_alive, kwargs, words):
    with pytest.raises(AppError) as excinfo:
        client.predict(**kwargs, api_name="/state")
    message = str(excinfo.value)
    assert "Traceback" not in message and all(word.lower() in message.lower() for word in words), message
    assert server_alive(app_url)
