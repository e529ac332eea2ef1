"""The lecture's layer and head sliders on the page follow the model a chapter reads: chapter 5
on SmolLM2 (when installed and converted) opens with SmolLM2's range and its own head, and a
link past the model's last layer is clamped to it with the link's notice. Real Chromium."""

from __future__ import annotations

import pytest

from explorer.lecture import chapters
from helpers.models import SMOLLM2, needs_smollm2, smollm2_shape
from helpers.page import TIMEOUT_MS, Watched, wait_quiet, wait_toast

pytestmark = pytest.mark.browser

# A chapter's slider: each chapter has its own drawer of controls, its inputs named by elem_id.
SLIDER_JS = """([ch, name]) => { const box = document.querySelector('#lecture-controls-' + ch + ' #lecture-' + ch + '-' + name);
    const range = box && box.querySelector('input[type=range]');
    return range ? [range.min, range.max, range.value] : null; }"""


def _slider(page, ch: int, name: str, expected: list[str]):
    """Until the chapter's slider shows ``expected`` ([min, max, value]); else what it shows."""
    from playwright.sync_api import TimeoutError as PageTimeout
    try:
        page.wait_for_function(f"(args) => JSON.stringify(({SLIDER_JS})(args.slice(0, 2))) === JSON.stringify(args[2])",
                               arg=[ch, name, expected], timeout=TIMEOUT_MS)
    except PageTimeout:
        shown = page.evaluate(SLIDER_JS, [ch, name])
        raise AssertionError(f"chapter {ch}'s {name} slider shows {shown}, not {expected}") from None


@needs_smollm2
def test_chapter_fives_sliders_take_smollm2s_range_and_a_link_is_clamped_to_it(browser, app_url):  # noqa: F811
    layers, heads = smollm2_shape()
    layer, head = chapters.causal_lecture_head(SMOLLM2)
    context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    app = Watched(page)
    try:
        page.goto(app_url + f"?tab=lecture&ch=5&c_layer={layers + 10}")
        _slider(page, 5, "layer", ["0", str(layers - 1), str(layers - 1)])
        _slider(page, 5, "head", ["0", str(heads - 1), str(head)])
        page.wait_for_function("(ch) => new URLSearchParams(location.search).get('ch') === ch", arg="5",
                               timeout=TIMEOUT_MS)
        page.wait_for_function(f"() => new URLSearchParams(location.search).get('c_layer') === '{layers - 1}'",
                               timeout=TIMEOUT_MS)
        wait_toast(page, f"c_layer = {layers + 10} is outside 0..{layers - 1}; using {layers - 1}")
        app.check_clean()
        # A plain address opens on the chapter's own head on SmolLM2, whose shipped map it shows.
        # (A page of its own: leaving the first page while its queue connection is open, the
        # next chapter being computed, logs that connection's abort.)
        page.close()
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        app = Watched(page)
        page.goto(app_url + "?tab=lecture&ch=5")
        _slider(page, 5, "layer", ["0", str(layers - 1), str(layer)])
        _slider(page, 5, "head", ["0", str(heads - 1), str(head)])
        page.wait_for_selector("#lecture-plot-0 .js-plotly-plot .main-svg", state="attached", timeout=TIMEOUT_MS)
        wait_quiet(page, queue=False)
        app.check_clean()
    finally:
        context.close()
