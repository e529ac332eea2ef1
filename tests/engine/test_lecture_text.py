"""The lecture's words live in one file per language (explorer/text/<lang>/lecture.toml): both
files hold the same keys with the same placeholders, and the numbers' labels are looked up by
explicit family keys, not by patterns."""

from __future__ import annotations

import ast
import string
import tomllib
from pathlib import Path

import pytest

from explorer.lecture import text as lecture_text

FILES = Path(lecture_text.__file__).resolve().parents[1] / "text"


def flat(table: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in table.items():
        out.update(flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value})
    return out


def words(lang: str) -> dict:
    with open(FILES / lang / "lecture.toml", "rb") as f:
        return flat(tomllib.load(f))


def placeholders(template: str) -> set:
    return {field.split(".")[0].split("[")[0] for _, field, _, _ in string.Formatter().parse(template)
            if field is not None}


def test_both_languages_have_the_same_keys():
    en, zh = words("en"), words("zh")
    assert set(en) == set(zh), sorted(set(en) ^ set(zh))
    assert all(isinstance(v, str) for v in [*en.values(), *zh.values()])


def test_both_languages_have_the_same_placeholders():
    en, zh = words("en"), words("zh")
    differ = {key: (placeholders(en[key]), placeholders(zh[key])) for key in en
              if placeholders(en[key]) != placeholders(zh[key])}
    assert not differ, differ


def test_the_lookup_reads_the_files():
    for lang in lecture_text.LANGS:
        data = words(lang)
        for key in lecture_text.TEXT:
            assert lecture_text.TEXT[key][lang] == data[key]
        assert lecture_text.default_text(lang) == data["sentence"]
    assert lecture_text.t("ch0.title", "zh") == words("zh")["ch0.title"]


def test_every_number_family_has_its_label_in_both_languages():
    for lang in lecture_text.LANGS:
        labelled = {key[len("number.family."):] for key in words(lang) if key.startswith("number.family.")}
        assert labelled == {family.rstrip("_") for family in lecture_text.NUMBER_FAMILIES}


@pytest.mark.parametrize("key, count, name", [
    ("median_kl[favor_plus_orthogonal]", None, ("map", "favor_plus_orthogonal")),
    ("recall_early_at_64[gla]", "64", ("kind", "gla")),
    ("roadmap_kl[2024_gla]", None, ("point", "2024_gla")),
    ("hgrn2_memory_layer3", "3", None),
    ("hybrid_cosine_k2", "2", None),
])
def test_a_family_key_reads_its_count_and_name(key, count, name):
    spoken = {"map": lecture_text.map_words, "kind": lecture_text.state_label,
              "point": lecture_text.road_label}
    for lang in lecture_text.LANGS:
        label = lecture_text.number_label(key, lang)
        assert count is None or count in label
        assert name is None or spoken[name[0]](name[1], lang) in label
    assert lecture_text.number_label(key, "en") != lecture_text.number_label(key, "zh")


@pytest.mark.parametrize("key", ["median_kl", "median_kl[]", "recall_early_at_[gla]", "recall_lag_x",
                                 "hgrn2_memory_layer3[x]", "no_such_number"])
def test_a_key_of_no_family_has_no_label(key):
    with pytest.raises(KeyError):
        lecture_text.number_label(key, "en")


def test_the_lecture_text_matches_no_patterns():
    tree = ast.parse(Path(lecture_text.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names} | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "re" not in imported


def test_every_chapter_record_names_text_that_exists_in_both_languages():
    from explorer.lecture import chapters

    for ch in chapters.CHAPTERS:
        record = chapters.chapter(ch)
        assert record.number == ch and len(record.builds) >= 2
        for key in record.text_keys:
            for lang in lecture_text.LANGS:
                assert lecture_text.TEXT[key][lang].strip(), (key, lang)
        for spec in record.controls:
            assert spec.label_key in lecture_text.TEXT, (ch, spec.name)
