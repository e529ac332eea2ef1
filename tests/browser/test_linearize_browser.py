"""The Linearize section of the learn tab at 1280×720, in English and in Chinese, as a lecturer
uses it: judge the hybrid, change k, see the numbers change; continue a prompt and watch the
memory plot grow, token by token, for the original only (every layer linearized: its state is
one size). The Chinese page says all of it in Chinese, its prompt included.
Screenshots: test-artifacts/linearize-<lang>.png.
"""

from __future__ import annotations

import pytest

from explorer import catalog
from explorer.text import say
from helpers.page import ARTIFACTS, TEXTS_JS, TIMEOUT_MS, Watched, wait_quiet
from helpers.words import english_words

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not catalog.causal_model_installed(), reason="SmolLM2-135M is not installed")]

VIEWPORT = {"width": 1280, "height": 720}
SECTION = "#linearize-section"
NEW_TOKENS = 6

# The table's rows as the reader sees them: its visible text, the five headings, then five cells
# a row (gradio also keeps a hidden row of the widest cells for measuring, which is not read).
ROWS_JS = """() => {
  const lines = document.querySelector('#linearize-numbers').innerText.split('\\n').map((s) => s.trim()).filter((s) => s);
  const rows = [];
  for (let i = 5; i + 5 <= lines.length; i += 5) { rows.push(lines.slice(i, i + 5)); }
  return rows;
}"""


# The memory plot's two lines (the original's KV cache, the linearized model's state), read on
# every animation frame while the generation streams: each distinct pair of lengths is a draw.
RECORD_MEMORY_JS = """() => {
  window.__memory = [];
  const read = () => {
    const plot = document.querySelector('#linearize-memory .js-plotly-plot');
    if (plot && plot.data && plot.data.length === 2) {
      const seen = plot.data.map((t) => Array.from(t.y || []));
      const last = window.__memory[window.__memory.length - 1];
      if (!last || JSON.stringify(last) !== JSON.stringify(seen)) { window.__memory.push(seen); }
    }
    requestAnimationFrame(read);
  };
  requestAnimationFrame(read);
}"""


def _open_section(chromium, app_url, query: str):
    """A page on ``query`` with the Linearize section opened (it opens folded), drawn."""
    context = chromium.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    app = Watched(page)
    try:
        page.goto(app_url + query)
        page.wait_for_selector(f"{SECTION} .label-wrap")
        wait_quiet(page)
        page.locator(f"{SECTION} .label-wrap").click()
        page.wait_for_selector("#linearize-run")
        wait_quiet(page)
    except BaseException:
        context.close()
        raise
    return context, app


def _set_number(page, elem_id: str, value: int):
    box = page.locator(f"#{elem_id} input[type=number]")
    box.fill(str(value))
    box.press("Enter")


def _judge(page, keep: int) -> list:
    _set_number(page, "linearize-keep", keep)
    page.click("#linearize-run")
    page.wait_for_function(f"""(keep) => {{ const rows = ({ROWS_JS})();
        return rows.length === 2 && rows[1][1] === String(keep) && rows[1][0].endsWith('k = ' + keep); }}""",
                           arg=keep, timeout=TIMEOUT_MS)
    wait_quiet(page)
    return page.evaluate(ROWS_JS)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_numbers_follow_k_and_the_memory_grows_for_the_original_only(chromium, app_url, lang):
    context, app = _open_section(chromium, app_url, f"?tab=learn&lang={lang}")
    page = app.page
    try:
        # The prompt and the table's headings are the page's language before anything runs.
        assert page.locator("#linearize-prompt textarea").input_value() == say("linearize.default_prompt", lang)
        assert say("linearize.col_perplexity", lang) in page.locator("#linearize-numbers").inner_text()

        few, many = _judge(page, 0), _judge(page, 12)
        original = say("linearize.row_original", lang)
        assert few[0][0] == original and many[0][0] == original
        assert few[0][2] == many[0][2]                            # the original is the same model
        assert (few[1][1], many[1][1]) == ("0", "12")
        assert few[1][2] != many[1][2] and few[1][4] != many[1][4]   # perplexity and KL follow k
        assert float(many[1][4]) < float(few[1][4])              # more softmax layers, closer to the original

        _judge(page, 0)                                           # every layer linear for the generation
        _set_number(page, "linearize-new-tokens", NEW_TOKENS)
        page.evaluate(RECORD_MEMORY_JS)
        page.click("#linearize-generate")
        page.wait_for_function("""(n) => (window.__memory || []).some(([kv, state]) => state.length === n)""",
                               arg=NEW_TOKENS, timeout=TIMEOUT_MS)
        wait_quiet(page)
        draws = page.evaluate("window.__memory")
        kv, state = draws[-1]
        assert len(kv) == len(state) == NEW_TOKENS
        assert all(a < b for a, b in zip(kv, kv[1:]))           # the KV cache grows with every token
        assert len(set(state)) == 1                              # the state is one size throughout
        # streamed: the plot was drawn before the last token (how many draws a frame catches
        # depends on the machine; one before the end is what streaming guarantees)
        assert len(draws) > 1 and any(len(s) < NEW_TOKENS for _, s in draws[:-1])
        assert page.locator("#linearize-gen-original textarea").input_value().strip()
        assert page.locator("#linearize-gen-linearized textarea").input_value().strip()

        page.locator(SECTION).scroll_into_view_if_needed()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"linearize-{lang}.png"), full_page=False)
        if lang == "zh":
            found = {t: english_words(t) for t in page.evaluate(TEXTS_JS, SECTION) if english_words(t)}
            assert not found, list(found.items())[:12]
        app.check_clean()
    finally:
        context.close()


def test_a_link_carries_the_sections_settings_both_ways(chromium, app_url):
    context, app = _open_section(chromium, app_url,
                                 "?tab=learn&lang=zh&lset=hedgehog:64&lkeep=12&lnew=5&lprompt=The+river+rose")
    page = app.page
    try:
        assert page.locator("#linearize-keep input[type=number]").input_value() == "12"
        assert page.locator("#linearize-new-tokens input[type=number]").input_value() == "5"
        assert page.locator("#linearize-prompt textarea").input_value() == "The river rose"   # the visitor's, kept
        assert say("linearize.set_hedgehog_64", "zh") in page.locator("#linearize-set").inner_text() + \
            page.locator("#linearize-set input").input_value()
        _set_number(page, "linearize-keep", 18)
        page.click("#linearize-run")
        page.wait_for_function("() => new URLSearchParams(location.search).get('lkeep') === '18'")
        params = page.evaluate("() => Object.fromEntries(new URLSearchParams(location.search))")
        assert {k: params.get(k) for k in ("tab", "lset", "lnew", "lprompt", "lang")} == {
            "tab": "learn", "lset": "hedgehog:64", "lnew": "5", "lprompt": "The river rose", "lang": "zh"}
        wait_quiet(page)
        app.check_clean()
    finally:
        context.close()


def test_a_set_trained_on_the_page_is_chosen_and_judged(chromium, app_url):
    """Train another set (one step a layer, so the test is short): the progress is shown while it
    runs, then the new set is chosen and its row names it, in Chinese throughout."""
    context, app = _open_section(chromium, app_url, "?tab=learn&lang=zh")
    page = app.page
    try:
        _set_number(page, "linearize-keep", 24)
        page.locator("#linearize-train .label-wrap").click()
        page.wait_for_selector("#linearize-train-run")
        _set_number(page, "linearize-train-steps", 1)
        _set_number(page, "linearize-train-window", 8)
        wait_quiet(page)            # the server runs one heavy request at a time: the judging k may start
        page.evaluate("""() => { window.__progress = false;
            new MutationObserver(() => { if (document.querySelector('#linearize-train-status .progress-text, '
                + '#linearize-train-status .eta-bar, #linearize-train-status .progress-level')) window.__progress = true; })
              .observe(document.body, {subtree: true, childList: true}); }""")
        page.click("#linearize-train-run")
        row = say("linearize.kind_live", "zh", kind="Hedgehog", steps=1)
        page.wait_for_function(f"""(row) => {{ const rows = ({ROWS_JS})();
            return rows.length === 2 && rows[1][0].startsWith(row) && rows[1][1] === '24'; }}""", arg=row,
                               timeout=TIMEOUT_MS)
        wait_quiet(page)
        status = page.locator("#linearize-train-status").inner_text()
        assert status.startswith("已训练 Hedgehog，窗口 8 + 注意力汇聚点：") and "每层 1 步" in status
        assert page.evaluate("window.__progress")                      # the bar showed while it trained
        assert say("linearize.set_live", "zh") in page.locator("#linearize-set input").input_value()
        page.locator("#linearize-train").scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "linearize-train-zh.png"), full_page=False)
        found = {t: english_words(t) for t in page.evaluate(TEXTS_JS, SECTION) if english_words(t)}
        assert not found, list(found.items())[:12]
        app.check_clean()
    finally:
        context.close()
