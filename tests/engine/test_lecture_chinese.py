"""The lecture's Chinese as a native lecturer writes it, with the terms the article and the tool
tabs use: token (the article's word, not 词元), 先算 QKᵀ / 先算 KᵀV for the two orders, Delta 规则
and 召回 as the state tab says them, 一阶 in words. Each test names the wording it replaced."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from explorer.lecture import text as lecture_text

ROOT = Path(__file__).resolve().parents[2]
ZH = (ROOT / "explorer" / "text" / "zh" / "lecture.toml").read_text(encoding="utf-8")


def zh_words() -> dict:
    def flat(table, prefix=""):
        out = {}
        for key, value in table.items():
            out.update(flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value})
        return out
    return flat(tomllib.loads(ZH))


@pytest.mark.parametrize("replaced, by", [
    ("词元", "token"),                                  # the article says token
    ("softmax 顺序", "先算 QKᵀ"),                       # the two orders by what is computed first
    ("线性顺序", "先算 KᵀV"),
    ("增量规则", "Delta 规则"),                         # the state tab's name of the delta rule
    ("取回", "召回"),                                   # one word for recall, the state tab's
    ("先讲数数", "先数一数"),
    ("不写下这张表", "不把这张表算出来"),
    ("贴近 softmax 的每一行", "拟合 softmax 的注意力分布"),
])
def test_a_replaced_wording_is_gone_and_its_replacement_is_used(replaced, by):
    assert replaced not in ZH
    assert by in ZH


@pytest.mark.parametrize("wording", ["该处按运算量模型", "与它并行的", "门控在此拟合", "模仿 softmax 的每一行"])
def test_wordings_a_lecturer_would_not_say_are_gone(wording):
    assert wording not in ZH


def test_parallel_is_said_only_of_the_parallel_form():
    for key, value in zh_words().items():
        for hit in re.finditer("并行", value):
            assert value[hit.end():hit.end() + 2] == "形式", (key, value)


def test_taylor_truncations_are_named_as_the_maps_are_in_chinese():
    # One term: the curve of order 1 is the map the other chapters call Taylor-1 (issue 37).
    assert lecture_text.t("legend.order", "zh", k=1) == "Taylor-1"
    assert lecture_text.t("legend.order", "zh", k=2) == "Taylor-2"
    assert lecture_text.t("legend.order", "en", k=2) == "Taylor order 2"
    assert "一阶泰勒" not in ZH
    assert not re.search(r"\d\s*阶", ZH)


def test_token_sits_between_spaces_in_chinese_text():
    for key, value in zh_words().items():
        assert not re.search(r"[\u4e00-\u9fff]token|token[\u4e00-\u9fff]", value), (key, value)


def test_the_terms_are_the_state_tabs():
    state = (ROOT / "explorer" / "text" / "zh" / "state.toml").read_text(encoding="utf-8")
    for term in ("Delta 规则", "召回"):
        assert term in state and term in ZH
    assert "增量规则" not in state and "取回" not in state



def test_the_tabs_say_token_as_the_lecture_does():
    """Go deeper lands on a tab: its axes and notices say token too (the state tab's axis read
    词元位置 t beside a lecture that says token)."""
    for path in sorted((ROOT / "explorer" / "text" / "zh").glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        assert "词元" not in text, path.name
        assert not re.search(r"[\u4e00-\u9fff]token|token[\u4e00-\u9fff]", text), path.name
