"""The Chinese lecture reads as a Chinese lecturer would say it: each build's claim, notes and
figure title, built on the lecture's own sentence, hold none of the wordings a native reader
rewrote (counts said in 万 and 亿, "1/32" where a fraction is meant, the query named by its word
and position, one term for Taylor-1, spaces between Chinese and Latin words), and the numbers
the Chinese form says are the English form's."""

from __future__ import annotations

import re

import pytest

from explorer.lecture import chapters
from explorer.lecture import text as lecture_text
from explorer.lecture import view as lecture
from helpers.lecture import said_chapter_figures
from explorer.lecture.numbers import say_ratio

pytestmark = pytest.mark.slow      # chapters 4-6 read SmolLM2


@pytest.fixture(scope="module")
def zh_words():
    """build address ("0.b1", "ch3" for a chapter's own words) -> everything it writes in Chinese."""
    out = {}
    for ch in chapters.CHAPTERS:
        view = lecture.chapter_view(ch, lang="zh")
        record = chapters.chapter(ch)
        for build, fig in zip(record.builds, said_chapter_figures(view, "zh", True)):
            title = fig.layout.title
            out[f"{ch}.{build}"] = [view.claim_in(build, "zh"), *view.notes_in(build, "zh"), title.text or "",
                                    (title.subtitle.text or "") if title.subtitle is not None else ""]
            layout = fig.layout.to_plotly_json()
            axes = [(layout[name].get("title") or {}).get("text") or "" for name in layout
                    if name.startswith(("xaxis", "yaxis"))]
            out[f"{ch}.{build}.labels"] = [str(trace.name or "") for trace in fig.data] + axes + [
                str(a.get("text") or "") for a in layout.get("annotations", ())]
        out[f"ch{ch}"] = [lecture_text.t(record.claim_key, "zh"), lecture_text.t(record.notes_key, "zh")]
    return out


# (what a native reader rewrote, the pattern of the old wording)
OLD_WORDINGS = [
    ("a count in scientific notation where 亿 is said", re.compile(r"1 × 10¹⁰ ?对")),
    ("N times less as 倍", re.compile(r"(小了|少用|少|低了)\s*[\d,.]+\s*倍")),
    ("a query label with its piece and position", re.compile(r"\(\d+/\d+\)·\d+”")),
    ("而且要小", re.compile("而且要小")),
    ("相像", re.compile("相像")),
    ("vectors 很长", re.compile("很长")),
    ("KL 面板", re.compile("KL 面板")),
    ("印象 · KL", re.compile(r"(?<!派版本)印象 · KL|^印象 ·")),
    ("一阶泰勒展开 beside Taylor-1", re.compile("一阶泰勒展开")),
    ("训练过 beside 已训练", re.compile("训练过")),
    ("no space before a Latin word after 的", re.compile(r"的[A-Za-z]")),
    ("no space after a Latin word before 的", re.compile(r"[A-Za-zᵀ]的")),
    ("most ... 100 %", re.compile(r"大部分.{0,20}100 %")),
    ("the frontier said to hold every map worth using", re.compile("值得用的映射都在前沿上")),
]


@pytest.mark.parametrize("what, pattern", OLD_WORDINGS, ids=[w for w, _ in OLD_WORDINGS])
def test_no_build_says_an_old_wording(zh_words, what, pattern):
    found = [(address, line) for address, lines in zh_words.items() for line in lines if pattern.search(line)]
    assert not found, f"{what}: {found[:3]}"


def test_the_counts_of_the_opening_are_said_in_wan_and_yi(zh_words):
    claim = zh_words["0.b1"][0]
    assert "10 万个 token 有 100 亿对" in claim, claim
    assert zh_words["0.b2"][0].startswith("N = 10 万时"), zh_words["0.b2"][0]


def test_a_fraction_is_the_ratio_the_build_measured():
    """"仅为……的 1/32": the divisor is the measured ratio, as the English "×32 fewer" says it."""
    for ch, build, key, where in ((0, "b1", "article_growth", "notes"), (2, "b1", "flop_ratio", "claim"),
                                  (6, "b6", "future_saving", "notes"), (6, "b3", "recap_article_flop_ratio", "notes")):
        view = lecture.chapter_view(ch, lang="zh")
        ratio = view.numbers[key]
        words = view.claim_in(build, "zh") if where == "claim" else " ".join(view.notes_in(build, "zh"))
        written = f"{ratio:,.0f}" if key == "article_growth" else say_ratio(ratio)
        assert f"1/{written}" in words, (ch, build, words)
        english = view.claim_in(build, "en") if where == "claim" else " ".join(view.notes_in(build, "en"))
        assert written in english, (ch, build, english)


def test_the_query_is_named_by_its_word_and_position(zh_words):
    for address in ("1.b1", "1.b2"):
        title = zh_words[address][-2]
        assert re.search(r"查询词“[^”(·]+”（第 \d+ 个 token）", title), title
    assert "·" not in zh_words["4.b0"][-2].split("：")[0], zh_words["4.b0"][-2]
    # The lecture's Chinese sentence is cut into byte pieces: the labels are explained once.
    pieces = [address for address, lines in zh_words.items() for line in lines if "第几片" in line]
    assert pieces == ["1.b1"], pieces


def test_the_frontier_claim_says_how_many_maps_it_holds():
    view = lecture.chapter_view(6, lang="zh")
    front = view.data["frontier"]
    key = view.says["b0"]["claim"][0]
    assert key == ("ch6.b0.claim_one" if len(front) == 1 else "ch6.b0.claim"), (key, front)
    for lang in ("en", "zh"):
        claim = view.claim_in("b0", lang)
        assert ("只有一个" in claim or "One map alone" in claim) == (len(front) == 1), claim


def test_at_short_n_the_left_order_is_said_to_be_the_cheaper_one():
    """Below N ≈ m the N × N order costs less: neither language says "×0.25 fewer"."""
    short = lecture.chapter_view(2, lang="zh", n=16)
    assert short.numbers["flop_ratio"] < 1 and short.says["b1"]["claim"][0] == "ch2.b1.claim_more"
    written = say_ratio(short.numbers["flop_ratio"])
    for lang in ("en", "zh"):
        claim = short.claim_in("b1", lang)
        assert written in claim and "fewer" not in claim and "1/" not in claim, claim
    assert lecture.chapter_view(2, lang="zh").says["b1"]["claim"][0] == "ch2.b1.claim"
