"""The article's formulas typeset on the lecture's builds (explorer/lecture/ch*/formulas.py):
every chapter shows at least one, in both languages; each is well-formed MathML on a build
the chapter has; the five families of the article stand on the builds that argue them, in
the symbols their figures use; the words inside a formula are the reader's language's."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from explorer.lecture import mathml
from explorer.lecture.chapters import CHAPTERS, chapter
from helpers.words import lecture_english_words

LANGS = ("en", "zh")


def _formulas(ch: int, lang: str) -> dict:
    return chapter(ch).formulas(lang)


def _text(ch: int, build: str, lang: str = "en") -> str:
    """The characters of a build's formulas, in reading order, without spaces."""
    return re.sub(r"\s", "", " ".join(mathml.plain_text(f) for f in _formulas(ch, lang).get(build, ())))


@pytest.mark.parametrize("lang", LANGS)
def test_every_chapter_shows_a_formula_of_well_formed_mathml(lang):
    for ch in CHAPTERS:
        typeset = _formulas(ch, lang)
        assert sum(len(f) for f in typeset.values()) >= 1, f"chapter {ch} shows no formula"
        assert set(typeset) <= set(chapter(ch).builds), (ch, set(typeset) - set(chapter(ch).builds))
        for build, formulas in typeset.items():
            for formula in formulas:
                root = ET.fromstring(formula)            # well-formed XML, or ParseError
                assert root.tag == "math" and root.get("display") == "block", (ch, build)
                tags = {el.tag for el in root.iter()}
                assert tags <= {"math", "mrow", "mi", "mo", "mn", "mtext", "msub", "msup", "msubsup", "mfrac",
                                "msqrt", "mover", "mspace"}, (ch, build, tags)
                assert "http" not in formula                 # nothing to fetch, not even a namespace URL


def test_the_five_families_stand_where_their_chapters_argue_them():
    # (a) attention as Nadaraya-Watson with the kernel exp(q·k/√d)
    assert "f^(x)=" in _text(1, "b0") and "K(x,xj)" in _text(1, "b0")
    assert _text(1, "b1").startswith("oi=∑jexp(qi·kj/√d)vj∑jexp(qi·kj/√d)")
    # (b) the kernel as φ(q)ᵀφ(k) and φ(q_i) taken out of the sum
    assert "K(q,k)=φ(q)Tφ(k)" in _text(2, "b0")
    assert "oi=φ(qi)T∑jφ(kj)vjTφ(qi)T∑jφ(kj)" in _text(2, "b0")
    # (c) the two orders and their costs (m = d in chapter 0, as the article counts)
    assert "(QKT)VcostsO(N2d)" in _text(0, "b3") and "Q(KTV)costsO(Nd2)" in _text(0, "b3")
    assert "(φ(Q)φ(K)T)V" in _text(2, "b1") and "φ(Q)(φ(K)TV)costsO(Nmd)" in _text(2, "b1")
    # (d) the feature maps: elu+1, FAVOR+'s positive features, Taylor's truncations
    assert "φ(x)=elu(x)+1" in _text(3, "b4")
    assert "φr(x)=exp(ωrTx−‖x‖2/2)√m" in _text(3, "b4")
    assert "≈1+s" in _text(3, "b1") and "K2=1+s+s22" in _text(3, "b3") and "s=q·k/√d" in _text(3, "b3")
    # (e) the recurrence in chapter 4's symbols (step t) and the gated state of chapter 5
    assert _text(4, "b0") == "St=St−1+φ(kt)vtTzt=zt−1+φ(kt)ot=φ(qt)TStφ(qt)Tzt"
    assert _text(5, "b0").startswith("St=γt⊙St−1+φ(kt)vtT")


def test_a_formula_speaks_the_readers_language():
    for ch in CHAPTERS:
        for build, formulas in _formulas(ch, "zh").items():
            for formula in formulas:
                words = " ".join(re.findall(r"<mtext>([^<]*)</mtext>", formula))
                assert not lecture_english_words(words.replace("+", " ")), (ch, build, words)
    assert "代价" in _text(0, "b3", "zh") and "costs" not in _text(0, "b3", "zh")
    assert _formulas(0, "en") != _formulas(0, "zh")


def test_the_builders_nest_as_mathml_does():
    # A script's base is one element: a run of tokens is wrapped in a row.
    assert mathml.sub("x", "j") == "<msub><mi>x</mi><mi>j</mi></msub>"
    assert mathml.sub("x", "t − 1").startswith("<msub><mi>x</mi><mrow>")
    # vⱼᵀ: the T stands over the subscript.
    assert mathml.t(mathml.sub("v", "j")) == ('<msubsup><mi>v</mi><mi>j</mi><mi mathvariant="normal">T</mi>'
                                              "</msubsup>")
    # Brackets grow only around a fraction.
    assert 'stretchy="false"' in mathml.paren("x") and 'stretchy' not in mathml.paren(mathml.frac("a", "b"))
    # The words of a template become text, the placeholders formulas.
    said = mathml.words("{a} costs {b}", a="x", b="y")
    assert said == "<mrow><mi>x</mi><mtext>\u00a0costs\u00a0</mtext><mi>y</mi></mrow>"
    ET.fromstring(mathml.formula(mathml.row("a < b & c")))     # escaped: still XML
