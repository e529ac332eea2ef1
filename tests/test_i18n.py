"""The UI's two languages: same keys, real Chinese, and the engine's lecture text merged in."""

from __future__ import annotations

import re

import pytest

from explorer.ui import i18n

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_both_languages_have_the_same_keys():
    assert set(i18n.EN) == set(i18n.ZH)


def test_every_string_is_written_in_its_language():
    for key in i18n.EN:
        assert i18n.EN[key].strip() and not CJK.search(i18n.EN[key]), key
        assert CJK.search(i18n.ZH[key]), f"{key} is not translated: {i18n.ZH[key]!r}"


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
