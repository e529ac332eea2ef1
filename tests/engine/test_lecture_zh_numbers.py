"""Counts as a Chinese reader says them (10 万, 100 亿) with the digits the English form says,
their measure word attached, and a note's closing punctuation kept on the figure (issue 37)."""

from __future__ import annotations

import pytest

from explorer.figures.style import wrap
from explorer.lecture import text as lecture_text
from explorer.lecture.numbers import said_count, say_count
from explorer.sources.labels import label_parts


@pytest.mark.parametrize("x, zh", [(100_000, "10 万"), (1e10, "100 亿"), (4_000_000, "400 万"),
                                   (262_144, "262,144"), (6_604_800_000, "6.6 × 10⁹"), (2.3e23, "2.3 × 10²³")])
def test_a_chinese_count_says_the_english_number(x, zh):
    assert say_count(x, "zh") == zh
    said = said_count(x)
    assert str(said) == say_count(x) and said.say("zh") == zh and said.say("en") == say_count(x)
    value = float(zh.replace(",", "").replace(" 万", "e4").replace(" 亿", "e8").split(" ×")[0])
    if "×" not in zh:
        assert value == x


def test_a_count_in_wan_takes_its_measure_word_without_a_space():
    words = lecture_text.t("ch0.b1.claim", "zh", a=said_count(512), pa=said_count(262_144), b=said_count(100_000),
                           pb=said_count(1e10), g="38,147")
    assert "10 万个 token" in words and "100 亿对" in words and "262,144 对" in words, words


def test_closing_punctuation_at_the_edge_takes_the_word_before_it_along():
    note = "1,000 × 1,000 = 1,000,000 次比较，每个学生都和全班每个人比一遍，自己也算在内 · 人数翻倍到 2,000：4,000,000 次，×4"
    for width in range(40, 100):
        lines = wrap(note, width)
        assert "".join(lines).replace(" ", "") == note.replace(" ", ""), width
        for line in lines:
            units = sum(1 / 0.6 if "\u3000" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef" else 1 for c in line)
            assert units <= width + 1e-9, (width, line)       # nothing hangs past the edge
            assert line[0] not in "，。；：、）", (width, line)


def test_a_label_is_read_back_as_its_word_piece_and_position():
    assert label_parts("它(2/2)·26") == ("它", "(2/2)", 26)
    assert label_parts("it·8") == ("it", None, 8)
    assert label_parts("t3") == ("t3", None, None)
