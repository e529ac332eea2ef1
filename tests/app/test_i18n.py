"""The UI's two languages: same keys, real Chinese, and the engine's lecture text merged in."""

from __future__ import annotations

import json
import re

import gradio as gr
import pytest
from gradio.i18n import I18nData

from explorer.ui import i18n

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_both_languages_have_the_same_keys():
    assert set(i18n.EN) == set(i18n.ZH)


def test_every_string_is_written_in_its_language():
    for key in i18n.EN:
        assert i18n.EN[key].strip() and not CJK.search(i18n.EN[key]), key
        if key.startswith(("map_", "hybrid_map_", "cx_method_")) and not CJK.search(i18n.ZH[key]):
            # a name (softmax, elu+1, FAVOR+ (IID)): the same in both languages, nothing English around it
            from helpers.words import english_words
            assert not english_words(i18n.ZH[key]), key
            continue
        assert CJK.search(i18n.ZH[key]), f"{key} is not translated: {i18n.ZH[key]!r}"


def test_map_names_translate_their_words_and_keep_their_names():
    from explorer import catalog
    for map_id in catalog.map_choices():
        assert i18n.EN[i18n.MAP_CHOICE + map_id] == str(catalog.map_label(map_id))
    assert i18n.map_choice("favor_plus_orthogonal")[1] == "favor_plus_orthogonal"
    assert i18n.ZH[i18n.MAP_CHOICE + "favor_plus_orthogonal"] == "FAVOR+（正交）"
    assert i18n.ZH[i18n.MAP_CHOICE + "favor_plus_iid"] == "FAVOR+（独立同分布）"
    assert i18n.EN[i18n.MAP_CHOICE + "elu1"] == i18n.ZH[i18n.MAP_CHOICE + "elu1"] == "elu+1"
    assert len({i18n.EN[i18n.MAP_CHOICE + map_id] for map_id in catalog.map_choices()}) == len(catalog.map_choices())


def test_the_overview_metric_menu_offers_readable_metrics_only():
    """The head overview's menu: every choice a real metric with a label in both languages,
    never a raw key, a count, a flag or a FLOP figure."""
    from explorer import catalog
    from explorer.ui import quality_tab  # noqa: F401  (the menu is built from these choices)
    assert "causal" not in catalog.OVERVIEW_METRICS and "total_rows" not in catalog.OVERVIEW_METRICS
    assert not [k for k in catalog.OVERVIEW_METRICS if k.endswith(("_rows_defined", "_rows_undefined", "_flops"))]
    for key in catalog.OVERVIEW_METRICS:
        choice = i18n.metric_choice(key)
        assert choice[1] == key and choice[0].key == "metric_" + key
        assert i18n.EN["metric_" + key] != key and "_" not in i18n.EN["metric_" + key]
        assert CJK.search(i18n.ZH["metric_" + key]), key


def test_the_tab_row_script_carries_both_languages():
    script = i18n.page_js()
    for lang in i18n.LANGS:
        for key in i18n.TAB_KEYS:
            assert i18n.STRINGS[lang][f"tab_{key}"] in script


def test_keys_have_no_dots():
    # gradio's frontend reads a dot in a key as a path into nested dictionaries
    assert not [key for key in i18n.EN if "." in key]


@pytest.mark.parametrize("given, expected", [
    ("zh", "zh"), ("zh-CN", "zh"), ("zh_Hans_CN", "zh"), ("ZH-tw", "zh"), ("en-GB", "en"),
    ("fr", "en"), ("", "en"), (None, "en"), ("../zh", "en"),
])
def test_normal_lang(given, expected):
    assert i18n.normal_lang(given) == expected


def test_label_refuses_unknown_keys():
    assert i18n.label("tab_lecture").key == "tab_lecture"
    with pytest.raises(KeyError):
        i18n.label("no_such_key")


def test_translations_carry_the_ui_and_the_lecture_text():
    from explorer.lecture.text import TEXT

    merged = i18n.translations().translations_dict
    assert set(merged) == {"en", "zh", "zh-CN"}
    assert merged["zh-CN"] == merged["zh"]
    for lang in i18n.LANGS:
        for key, value in i18n.STRINGS[lang].items():
            assert merged[lang][key] == value
        for key, by_lang in TEXT.items():
            assert merged[lang][i18n.engine_key(key)] == by_lang[lang], key


# ---------------------------------------------------------------------------------------
# Every label the page shows goes through the dictionaries
# ---------------------------------------------------------------------------------------

LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# Markdown the server rewrites in the chosen language as soon as the page loads.
WRITTEN_AT_LOAD = ("lecture-claim",)


def _is_key(value) -> bool:
    return isinstance(value, I18nData) or (isinstance(value, str) and value.startswith("__i18n__"))


def _key(value) -> str:
    if isinstance(value, I18nData):
        return value.key
    return json.loads(value[len("__i18n__"):])["key"]


@pytest.fixture(scope="module")
def page_config():
    from explorer.ui import build_app
    return build_app().get_config_file()


def _raw_labels(config):
    """(type, elem_id, prop, text) of every label, info, placeholder, button text and markdown
    heading written as a raw English string instead of a key. Numbers and map names without a
    word ("≤ 131,072") pass; markdown bodies written at run time (summaries, notices) are not labels."""
    out = []
    for comp in config["components"]:
        kind, props = comp["type"], comp.get("props", {})
        if kind in ("api", "state"):
            continue
        shown = ["label", "info", "placeholder"] + (["value"] if kind == "button" else [])
        for prop in shown:
            value = props.get(prop)
            if isinstance(value, str) and not _is_key(value) and LATIN_WORD.search(value):
                out.append((kind, props.get("elem_id"), prop, value))
        value = props.get("value")
        if (kind == "markdown" and isinstance(value, str) and not _is_key(value) and value.lstrip().startswith("#")
                and props.get("elem_id") not in WRITTEN_AT_LOAD):
            out.append((kind, props.get("elem_id"), "value", value[:60]))
    return out


def test_every_label_of_the_page_is_a_key(page_config):
    raw = _raw_labels(page_config)
    assert not raw, "labels not going through explorer.ui.i18n:\n" + "\n".join(map(str, raw))


def test_the_rest_of_the_app_is_translated(page_config):
    """The labels of the other tabs, the data panel and the export band are keys of both
    dictionaries (a sample that must be there, so the walk above cannot pass on an empty page)."""
    keys = set()
    for comp in page_config["components"]:
        props = comp.get("props", {})
        for prop in ("label", "info", "placeholder", "value"):
            if _is_key(props.get(prop)):
                keys.add(_key(props[prop]))
    for expected in ("maps_run", "maps_maps", "quality_run", "state_run", "cx_run", "learn_train", "hybrid_run",
                     "panel_text_placeholder", "view_link", "export_maps", "maps_metrics_help", "learn_part1",
                     "intro", "tab_maps"):
        assert expected in keys, expected
    ui_keys = {k for k in keys if not k.startswith("lecture__")}
    assert ui_keys <= set(i18n.EN) and ui_keys <= set(i18n.ZH)


def test_the_walk_finds_a_raw_label():
    """The check above can fail: a raw English label is reported, a key or a number is not."""
    with gr.Blocks() as demo:
        gr.Button("Draw the maps", elem_id="raw")
        gr.Number(1, label=i18n.label("cx_nmin"), info="≤ 131,072")
        gr.Markdown("### A heading")
    raw = _raw_labels(demo.get_config_file())
    assert [(kind, prop) for kind, _, prop, _ in raw] == [("button", "value"), ("markdown", "value")]


def test_the_browser_dictionary_comes_from_the_language_files():
    """Every key of explorer/text reaches gr.I18n in both languages, under one gradio key each
    (no dots, no two keys sharing one)."""
    from explorer import text
    merged = i18n.translations().translations_dict
    keys = [i18n.gradio_key(key) for key in text.TEXT]
    assert len(set(keys)) == len(keys) and not [k for k in keys if "." in k]
    for key, by_lang in text.TEXT.items():
        for lang in i18n.LANGS:
            assert merged[lang][i18n.gradio_key(key)] == by_lang[lang], key
    assert i18n.gradio_key("ui.tab_maps") == "tab_maps" and i18n.EN["tab_maps"] == text.say("ui.tab_maps", "en")


def test_every_element_id_of_the_page_is_its_own(page_config):
    # Two components with one id: scripts, styles and tests reach whichever comes first
    # (a chapter's "query" slider once shared its id with the hidden address box).
    ids = [c.get("props", {}).get("elem_id") for c in page_config["components"]]
    ids = [i for i in ids if i]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    assert not repeated, repeated
