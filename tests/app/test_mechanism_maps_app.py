"""The mechanisms through the /maps endpoint: drawn beside softmax with their rows in the
table, their settings in the link, and out-of-range settings refused in one sentence."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import pytest
from gradio_client import Client
from gradio_client.exceptions import AppError

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def client(app_url):
    return Client(app_url, verbose=False)


def test_maps_endpoint_draws_the_mechanisms_and_links_their_settings(client):
    plot, table, badge, notices, query = client.predict(
        maps=["softmax", "elu1"], mechanisms=["retnet", "gla", "hgrn2", "deltanet", "gated_deltanet"],
        gamma=0.9, beta=0.5, mechanism_seed=3, lower_bound=0.8, api_name="/maps")
    names = [row[0] for row in table["data"]]
    assert names == ["softmax", "elu+1", "RetNet γ", "GLA gates (seeded)", "HGRN2 gates", "DeltaNet", "Gated DeltaNet"]
    fig = json.loads(plot["plot"])
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert "RetNet γ − causal softmax" in titles and "GLA gates (seeded)" in titles
    assert "gates seeded" in json.dumps(fig["layout"]["title"])
    assert "causal softmax" in notices
    params = parse_qs(query)
    assert params["mech"] == ["retnet,gla,hgrn2,deltanet,gated_deltanet"]
    assert params["mgamma"] == ["0.9"] and params["mbeta"] == ["0.5"] and params["mseed"] == ["3"]
    assert params["mlb"] == ["0.8"] and params["mgates"] == ["seeded"]


@pytest.mark.parametrize("bad", [dict(gamma=1.5), dict(beta=1.5), dict(gamma=-0.1), dict(lower_bound=1.0), dict(gates="learned"),
                                 dict(mechanisms=["mamba"]), dict(mechanism_seed=-1)])
def test_out_of_range_mechanism_settings_are_refused_in_words(client, bad):
    with pytest.raises(AppError) as excinfo:
        client.predict(**{"mechanisms": ["retnet"], **bad}, api_name="/maps")
    message = str(excinfo.value)
    assert "Traceback" not in message and "must" in message.lower(), message
