"""One validation path: every bad value is refused in one sentence that names the parameter
and its range, quotes at most ~80 characters of the input, and nothing is rounded,
defaulted or parsed past a size limit; links are clamped with a notice instead."""

import json

import gradio as gr
import pytest

from explorer.catalog import MAX_HEAD_DIM, MAX_MAP_N, MAX_SAMPLE_ELEMENTS, MAX_TOKENS
from explorer.lecture import chapters as plan
from explorer.ui import gradio_checks, lecture_checks, validate
from explorer.ui.validate import Bound

CHAPTER = Bound("chapter", "int", 0, 6)
ECHO_LIMIT = validate.MAX_ECHO

GARBAGE = ["abc", {"a": 1}, [1, 2], float("nan"), 100.7, True, 2.5, 1e400 if False else float("inf"),
           "Infinity", "1" * 1_000_000, None, "", "  ", "0x10", "١٢"]


@pytest.mark.parametrize("raw", GARBAGE, ids=lambda r: repr(r)[:20])
def test_garbage_is_refused_in_one_sentence(raw):
    bound = Bound("n", "int", 64, 100_000)
    with pytest.raises(ValueError) as info:
        validate.check(bound, raw)
    message = str(info.value)
    assert message.startswith("n must be a whole number from 64 to 100,000; got ")
    assert message.count(".") <= 3 and "\n" not in message
    quoted = message.split("; got ", 1)[1]
    assert len(quoted) <= ECHO_LIMIT + 30            # the quote plus "… (1,000,000 characters)."


def test_what_is_accepted_is_typed_not_rounded():
    assert validate.check(CHAPTER, 3) == 3
    assert validate.check(CHAPTER, 3.0) == 3
    assert validate.check(CHAPTER, "3") == 3
    assert validate.check(Bound("x", "float", 0, 10), "2.5") == 2.5
    assert validate.check(Bound("b", "bool"), "true") is True
    assert validate.check(Bound("b", "bool"), 0) is False
    with pytest.raises(ValueError, match="x must be a number from 0 to 10; got 11"):
        validate.check(Bound("x", "float", 0, 10), 11)
    with pytest.raises(ValueError, match="b must be true or false"):
        validate.check(Bound("b", "bool"), 2)


def test_choices_accept_the_schema_strings_and_the_numbers():
    layers = Bound("layers", "choices", choices=(0, 1, 2, 3, 4, 5))
    assert validate.check(layers, ["2", "3"]) == [2, 3]
    assert validate.check(layers, [2, 3.0]) == [2, 3]
    with pytest.raises(ValueError, match=r"layers must be a list of values from 0, 1, 2, 3, 4, 5; got \['9'\]"):
        validate.check(layers, ["9"])
    with pytest.raises(ValueError, match="layers must be"):
        validate.check(layers, "2")
    with pytest.raises(ValueError, match="layers must be"):
        validate.check(layers, [True])
    heads = Bound("head", "choice", choices=("0", "1", "all 72 heads"))
    assert validate.check(heads, 1) == "1"


def test_shown_is_short_on_anything():
    deep = []
    for _ in range(100_000):
        deep = [deep]
    for raw in ("x" * 1_000_000, 10 ** 5000, deep, {"k" * 10_000: 1}, b"\x00" * 10_000):
        assert len(validate.shown(raw)) <= ECHO_LIMIT + 30
    assert "5,001-digit number" in validate.shown(10 ** 5000)


@pytest.mark.parametrize("controls, words", [
    ("[1, 2]", "JSON object"),
    ("{not json", "JSON object"),
    ("[" * 100_000 + "]" * 100_000, "at most 10,000 characters"),
    ("[" * 40 + "]" * 40, "nested at most"),
    ('{"n": ' + "[" * 5000 + "]" * 5000 + "}", "10,000 characters"),
    (json.dumps({"x" * 1_000_000: 1}), "at most 10,000 characters"),
    (json.dumps({"x" * 5000: 1}), "chapter 0 has no control"),
    ('{"n": 1e400}', "n must be a whole number from 64 to 1,000,000; got inf"),
    ('{"n": NaN}', "got nan"),
    ('{"n": Infinity}', "got inf"),
    ('{"n": 100.7}', "got 100.7"),
    ('{"n": true}', "got true"),
    ('{"n": "abc"}', "got 'abc'"),
    ('{"n": ' + "1" * 5000 + "}", "JSON object"),
    (json.dumps({"n": "9" * 1_000_000}), "at most 10,000 characters"),
    (12, "JSON object"),
])
def test_lecture_request_refuses_bad_controls(controls, words):
    with pytest.raises(ValueError) as info:
        lecture_checks.lecture_request(plan, 0, "", "en", controls, False)
    message = str(info.value)
    assert words in message and len(message) < 250


@pytest.mark.parametrize("chapter", ["abc", {"a": 1}, [1, 2], float("nan"), 2.5, True, float("inf"), "9" * 5000, 7, -1])
def test_lecture_request_refuses_bad_chapters(chapter):
    with pytest.raises(ValueError, match=r"^chapter must be a whole number from 0 to 6; got "):
        lecture_checks.lecture_request(plan, chapter, "", "en", "{}", False)


def test_lecture_request_fills_defaults_and_checks_the_rest():
    ch, lang, text, values, presentation = lecture_checks.lecture_request(plan, "3", None, "zh", '{"m": 16}', 0)
    assert (ch, lang, text, presentation) == (3, "zh", "", False)
    assert values["m"] == 16 and values["orthogonal"] is True
    with pytest.raises(ValueError, match="lang must be one of en, zh; got 'fr'"):
        lecture_checks.lecture_request(plan, 0, "", "fr", "{}", False)
    with pytest.raises(ValueError, match="text must be text of at most 100,000 characters"):
        lecture_checks.lecture_request(plan, 0, "x" * 100_001, "en", "{}", False)


# --------------------------------------------------------------------------------- links

@pytest.mark.parametrize("raw, expected, notice", [
    ("99", 6, "Link parameter ch = 99 is outside 0..6; using 6."),
    ("-1", 0, "Link parameter ch = -1 is outside 0..6; using 0."),
    ("abc", 0, "Link parameter ch='abc' is not a whole number from 0 to 6; using 0."),
    ("9" * 5000, 0, "(5,000 characters) is not a whole number from 0 to 6; using 0."),
    ("2.5", 0, "is not a whole number"),
    ("3", 3, None),
    (None, 0, None),
])
def test_lecture_links_clamp_with_a_notice(raw, expected, notice):
    notices = []
    assert lecture_checks.link_chapter(plan, raw, notices) == expected
    if notice is None:
        assert notices == []
    else:
        assert len(notices) == 1 and notice in notices[0] and len(notices[0]) < 200


def test_lecture_control_links_use_the_controls_bounds():
    spec = next(s for s in plan.chapter_controls(1) if s.name == "query")
    notices = []
    assert lecture_checks.link_control(spec, "99999", notices, "c_query") == 511
    assert notices == ["Link parameter c_query = 99,999 is outside 0..511; using 511."]
    ortho = next(s for s in plan.chapter_controls(3) if s.name == "orthogonal")
    assert lecture_checks.link_control(ortho, "maybe", notices, "c_orthogonal") is None
    assert "c_orthogonal='maybe' is not true or false" in notices[-1]


def test_sliders_follow_what_the_view_used():
    specs = {ch: plan.chapter_controls(ch) for ch in plan.CHAPTERS}

    class View:
        ch = 1
        controls = {spec.name: spec.default for spec in specs[1]} | {"query": 41}
    out = lecture_checks.controls_as_drawn(View, specs)
    flat = [(ch, spec.name) for ch in specs for spec in specs[ch]]
    assert out[flat.index((1, "query"))] == 41
    skipped = [value for (ch, _), value in zip(flat, out) if ch != 1]
    assert all(isinstance(value, dict) and value.get("__type__") == "update" for value in skipped) or \
        all(value == gr.skip() for value in skipped)


@pytest.mark.parametrize("tab", ["maps", "quality", "state", "lecture"])
def test_link_shape_gives_a_shape_that_runs(tab):
    notices = []
    n, d = validate.link_shape(tab, "999999", "5000", notices)
    assert n == {"maps": MAX_MAP_N, "quality": validate.quality_n_limit()}.get(tab, MAX_TOKENS)
    assert 1 <= d <= MAX_HEAD_DIM and n * d <= MAX_SAMPLE_ELEMENTS
    assert any("n = 999,999 is outside 1.." in x for x in notices)
    assert any("d = 5,000 is outside 1.." in x for x in notices)
    from explorer.sources import from_random
    from explorer.views.common import MAX_MAP_CELLS
    if tab in ("maps", "quality"):
        assert n * n <= MAX_MAP_CELLS
    from_random(n, d, preset="gaussian", seed=0)       # the sample the link asks for can be made


def test_map_n_matches_the_engines_cap():
    from explorer.sources.sample import MAX_ELEMENTS
    from explorer.views.common import MAX_MAP_CELLS
    assert MAX_MAP_N ** 2 == MAX_MAP_CELLS and MAX_SAMPLE_ELEMENTS == MAX_ELEMENTS


# -------------------------------------------------------------- components through gradio

def test_installed_checks_run_before_gradios_own(tmp_path):
    with gr.Blocks() as demo:
        n = gr.Number(128, precision=0, minimum=1, maximum=8192)
        layers = gr.CheckboxGroup(list(range(6)), value=[2, 3])
        out = gr.Textbox()

        def go(n_tokens, layers):
            return f"{n_tokens}:{layers}"
        gr.Button().click(go, [n, layers], out, api_name="go")
    assert gradio_checks.install(demo) == 3          # the number, the group and the text box (text only)
    assert n.preprocess(100) == 100 and layers.preprocess(["2", "3"]) == [2, 3]
    with pytest.raises(gr.Error, match=r"n_tokens must be a whole number from 1 to 8,192; got 100.7"):
        n.preprocess(100.7)
    with pytest.raises(gr.Error, match="n_tokens must be a whole number"):
        n.preprocess("1" * 1_000_000)
    with pytest.raises(gr.Error, match="layers must be a list of values from 0, 1, 2, 3, 4, 5"):
        layers.preprocess(["9"])


def test_a_refusal_speaks_the_language_of_the_page_it_came_from():
    """The checks run in gradio's preprocessing, before the handler's language argument: the
    page's address (lang=) travels with every request, and the refusal is said in it."""
    import asyncio

    from helpers.words import english_words

    with gr.Blocks() as demo:
        n = gr.Number(128, precision=0, minimum=1, maximum=8192)
        layers = gr.CheckboxGroup(list(range(6)), value=[2, 3])
        gr.Button().click(lambda n_tokens, layers: f"{n_tokens}", [n, layers], gr.Textbox(), api_name="go")

    async def processing(*args, **kwargs):        # stands in for gradio's own: preprocess the inputs
        refused = []
        for component, value in ((n, 100.7), (layers, ["9"])):
            with pytest.raises(gr.Error) as caught:
                component.preprocess(value)
            refused.append(caught.value)
        return refused
    demo.process_api = processing
    gradio_checks.install(demo)

    class Page:
        def __init__(self, lang):
            self.query_params = {"tab": "maps", "lang": lang}

    chinese = asyncio.run(demo.process_api(block_fn=0, inputs=[], request=Page("zh")))
    assert [e.title for e in chinese] == ["请检查输入"] * 2
    assert chinese[0].message == "n_tokens 必须是 1 到 8,192 之间的整数；收到的是 100.7。"   # named as the API names it
    # Past the parameter's name (a name, as the API spells it), no English word.
    assert all(not english_words(e.message.split(" ", 1)[1]) for e in chinese), [e.message for e in chinese]
    for request in (Page("en"), None, [Page("en")]):
        english = asyncio.run(demo.process_api(block_fn=0, inputs=[], request=request))
        assert english[0].title == "Please check the input" and "must be a whole number" in english[0].message
    with pytest.raises(gr.Error) as caught:                  # outside an event: English, as before
        n.preprocess(100.7)
    assert caught.value.title == "Please check the input"


@pytest.mark.parametrize("seeds", [None, "10", "30", "abc"])
def test_a_quality_link_opens_a_length_the_curves_can_be_measured_at(seeds):
    from explorer.measure import cost
    from explorer.views import quality
    n, d = validate.link_shape("quality", "999999", "5000", [], seeds=seeds)
    used = 10 if seeds in (None, "abc") else int(seeds)
    labels = quality.random_map_ids()
    smallest = [m for m in quality.QUALITY_MS if m <= quality.MIN_GRID_TOP]
    assert quality._work(len(labels), smallest, used, n, 1) <= quality.MAX_QUALITY_WORK       # the view's own bound
    assert quality._work(len(labels), smallest, used, n + 1, 1) > quality.MAX_QUALITY_WORK    # and the longest such N
    ms = list(quality.QUALITY_MS)
    while quality._work(len(labels), ms, used, n, 1) > quality.MAX_QUALITY_WORK:
        ms = ms[:-1]
    assert cost.fits(cost.estimate("quality", n=n, d=d, labels=labels, ms=ms, seeds=used))


# ------------------------------------------------------------- words the page shows

# Top-level message groups of gradio's own locale: a choice shown as one of these bare words
# is looked up as that group and logs a svelte-i18n warning at every render.
GRADIO_GROUPS = {"annotated_image", "audio", "blocks", "chat_interface", "chatbot", "checkbox", "code",
                 "color_picker", "common", "dataframe", "dropdown", "errors", "file", "highlighted_text", "image",
                 "image_editor", "label", "login", "number", "plot", "radio", "slider", "status", "upload_text",
                 "video"}


def test_no_choice_is_shown_as_one_of_gradios_message_groups():
    from explorer.ui import build_app
    demo = build_app()
    shown = set()
    for block in demo.blocks.values():
        for choice in getattr(block, "choices", None) or []:
            label = choice[0] if isinstance(choice, (tuple, list)) else choice
            if isinstance(label, str):
                shown.add(label)
    assert not shown & GRADIO_GROUPS, shown & GRADIO_GROUPS


def test_gradios_own_status_words_exist_in_both_languages():
    from explorer.ui import i18n
    table = i18n.translations().translations
    assert table["en"]["common.complete"] == "Complete"
    for lang in ("zh", "zh-CN"):
        assert table[lang]["common.complete"] == "完成"


def test_link_notices_are_said_in_the_pages_language():
    import re
    from explorer.ui import common
    cjk = re.compile(r"[\u3400-\u9fff]")
    notices = []
    validate.link(validate.Bound("ch", "int", lo=0, hi=6), 99, notices)
    validate.link(validate.Bound("layer", "int", lo=0, hi=5), "abc", notices)
    common.param({"m": "x"}, "m", int, notices=notices)
    assert notices[:3] == ["Link parameter ch = 99 is outside 0..6; using 6.",
                           "Link parameter layer='abc' is not a whole number from 0 to 5; using the default.",
                           "Link parameter m='x' is not a valid int; ignored."]
    for notice in [*notices, validate.NO_FILE_IN_LINK]:
        assert validate.in_language(notice, "en") == notice
        zh = validate.in_language(notice, "zh-CN")
        assert cjk.search(zh) and not re.search(r"\b(Link|parameter|outside|using|default|upload)\b", zh), zh
    assert validate.in_language("链接参数 ch = 99 超出 0..6，改用 6。", "zh") == "链接参数 ch = 99 超出 0..6，改用 6。"
    assert "0..6" in validate.in_language(notices[0], "zh") and "6" in validate.in_language(notices[0], "zh")
