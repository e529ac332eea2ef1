"""The words as data (explorer/text/<lang>/*.toml): both languages alike, every key the code
uses written down, messages said at the edge."""
import ast
import copy
import pickle
import re
import string
import tomllib
from pathlib import Path

import pytest

from explorer import text
from explorer.lecture import text as lecture_text

CJK = re.compile(r"[\u3400-\u9fff]")
ROOT = Path(__file__).resolve().parents[2]
TEXT_DIR = ROOT / "explorer" / "text"


def _fields(words_: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(words_) if name}


def _keys(path: Path) -> set[str]:
    found, meta = {}, {}
    with path.open("rb") as handle:
        text._flatten(tomllib.load(handle), path.stem, found, meta)
    return set(found)


def test_every_file_has_its_twin_with_the_same_keys():
    en = sorted(p.name for p in (TEXT_DIR / "en").glob("*.toml"))
    zh = sorted(p.name for p in (TEXT_DIR / "zh").glob("*.toml"))
    assert en and en == zh
    for name in en:
        assert _keys(TEXT_DIR / "en" / name) == _keys(TEXT_DIR / "zh" / name), name


def test_every_key_has_both_languages_with_the_same_placeholders():
    assert text.TEXT
    for key, by_lang in text.TEXT.items():
        assert set(by_lang) == set(text.LANGS), key
        # Empty only where both are (a table's corner cell): never a missing translation.
        assert bool(by_lang["en"].strip()) == bool(by_lang["zh"].strip()), key
        assert _fields(by_lang["en"]) == _fields(by_lang["zh"]), key
        assert not CJK.search(by_lang["en"]), key


def test_the_chinese_file_lists_the_terms_kept_in_latin_letters():
    listed = text.kept_in_latin()
    assert {"softmax", "FAVOR+", "elu+1", "RetNet", "nats"} <= set(listed)
    assert "_kept_in_latin" in (TEXT_DIR / "zh" / "common.toml").read_text(encoding="utf-8")
    assert not [term for term in listed if CJK.search(term)]


def test_lookup_formats_and_falls_back_to_english():
    assert text.say("common.where_head", "zh-CN", layer=2, head=3) == "第 2 层第 3 头"
    assert text.say("common.where_head", "fr", layer=2, head=3) == "layer 2, head 3"
    with pytest.raises(KeyError):
        text.say("common.no_such_key", "en")
    assert text.say("a sentence nobody wrote as a message", "zh") == "a sentence nobody wrote as a message"


def test_a_message_is_its_english_and_says_itself_in_chinese():
    msg = text.Message("common.link_invalid", name="m", raw="'abc'", allowed=text.Message("common.link_whole_at_most",
                                                                                          hi="10"),
                       using=text.Message("common.link_default"))
    assert msg == "Link parameter m='abc' is not a whole number of at most 10; using the default."
    assert msg.say("zh") == text.say(msg, "zh") == "链接参数 m='abc' 不是不超过 10 的整数，改用默认值。"
    for copied in (pickle.loads(pickle.dumps(msg)), copy.deepcopy(msg), copy.copy(msg)):
        assert copied == msg and copied.say("zh") == msg.say("zh")
    with pytest.raises(KeyError):
        text.Message("common.no_such_key")
    error = ValueError(msg)
    assert str(error) == msg and text.say_error(error, "zh") == msg.say("zh")


def test_names_and_joined_values_are_said_in_the_same_language():
    from explorer import catalog
    name = catalog.map_label("favor_plus_orthogonal")
    assert name == "FAVOR+ (orthogonal)" and name.say("zh") == "FAVOR+（正交）"
    joined = text.Joined([text.Message("complexity.skip_causal"), "x"], "complexity.reason_sep")
    assert joined == "causal form only; run with causal=True; x"
    assert joined.say("zh") == "仅有因果形式；请勾选因果；x"
    assert pickle.loads(pickle.dumps(joined)).say("zh") == joined.say("zh")


def test_one_map_label_for_every_tab():
    from explorer import catalog
    assert lecture_text.LANGS is text.LANGS
    assert lecture_text.map_words("favor_plus_iid", "zh") == text.said(catalog.map_label("favor_plus_iid"), "zh") \
        == "FAVOR+（独立同分布）"
    assert text.said(catalog.map_label("hedgehog_trained"), "zh") == "Hedgehog（已训练）"
    assert text.said(catalog.map_label("elu1"), "zh") == "elu+1"
    # A map is known by its id everywhere; the words are the language files'.
    for map_id in catalog.map_choices():
        assert catalog.map_id(map_id) == map_id == catalog.map_id(str(catalog.map_label(map_id)))


# ---------------------------------------------------------------------------------------
# Every key the code names exists
# ---------------------------------------------------------------------------------------

# Functions whose first argument is a key of the language files.
KEY_TAKERS = {"w", "say", "Message", "Phrase", "template", "engine_label", "has"}


def _literal_keys(source: str):
    """(key, is_prefix) of every literal first argument of a KEY_TAKERS call: a string, or the
    constant start of an f-string (a family of keys, such as f"common.metric.{key}")."""
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name not in KEY_TAKERS:
            continue
        first = node.args[0]
        options = [first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]
        for arg in options:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                yield arg.value, False
            elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                yield arg.values[0].value, True


def _missing(source: str) -> list[str]:
    out = []
    for key, is_prefix in _literal_keys(source):
        if is_prefix and (key.count(".") < 1 or key.split(".", 1)[0] not in text.AREAS):
            continue                              # not a family of the files' keys
        if not is_prefix and not text._looks_like_key(key):
            continue                              # a sentence or a UI key, not a key of the files
        if (is_prefix and not any(k.startswith(key) for k in text.TEXT)) or (not is_prefix and key not in text.TEXT):
            out.append(key)
    return out


def test_every_key_the_code_names_exists():
    files = [p for p in (ROOT / "explorer").rglob("*.py") if "lecture" not in p.parts] + [ROOT / "app.py"]
    missing = {str(p.relative_to(ROOT)): _missing(p.read_text(encoding="utf-8")) for p in files}
    assert not {p: keys for p, keys in missing.items() if keys}


def test_the_key_scan_finds_a_missing_key():
    source = ('w("maps.title", lang)\nMessage("maps.no_such_thing", n=1)\nsay(f"common.metric.{key}")\n'
              'say(f"maps.nothing_like_{x}")\nMessage("a" if x else "common.nowhere")\n')
    assert _missing(source) == ["maps.no_such_thing", "maps.nothing_like_", "common.nowhere"]
