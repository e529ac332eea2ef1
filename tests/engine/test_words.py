"""The tool tabs' run-time words: every key in both languages, placeholders alike."""
import re
import string

from explorer import words

CJK = re.compile(r"[\u3400-\u9fff]")


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_key_has_both_languages_with_the_same_placeholders():
    assert words.TEXT
    for key, by_lang in words.TEXT.items():
        assert set(by_lang) == set(words.LANGS), key
        assert by_lang["en"].strip() and by_lang["zh"].strip(), key
        assert _fields(by_lang["en"]) == _fields(by_lang["zh"]), key
        assert not CJK.search(by_lang["en"]), key


def test_lookup_formats_and_falls_back_to_english():
    key = next(iter(words.TEXT))
    assert words.w(key, "zh-CN") == words.TEXT[key]["zh"]
    assert words.w(key, "fr") == words.TEXT[key]["en"]


def test_an_engine_sentence_is_said_through_the_first_pattern_that_matches():
    import re

    table = [(re.compile(r"^n must be at most (?P<hi>\d+)$"), "common.layer"),
             (re.compile(r"^(?P<name>\w+) must be (?P<allowed>.+); got (?P<got>.+)\.$"), "common.refusal_must")]
    said = words.from_patterns("n must be true or false; got 'x'.", table, "zh",
                               lambda parts: {**parts, "allowed": "是非"})
    assert said == "n 必须是是非；收到的是 'x'。"
    assert words.from_patterns("nothing known", table, "zh") is None
