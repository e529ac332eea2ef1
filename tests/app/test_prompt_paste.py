"""A prompt longer than the generator takes is refused in words, in the page's language, not cut
by the browser without a word (the box had max_length, which truncates a paste)."""

from __future__ import annotations

import gradio as gr
import pytest

from explorer.text import say
from explorer.ui import linearize_tab


def test_the_prompt_box_cuts_nothing():
    with gr.Blocks():
        presentation = gr.Checkbox(False)
        controls = linearize_tab.build(presentation)
    assert isinstance(controls.prompt, gr.Textbox) and controls.prompt.max_length is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_prompt_is_refused_saying_its_length(lang):
    pasted = "猫" * 250
    with pytest.raises(gr.Error) as refused:
        list(linearize_tab.run_generate(prompt=pasted, lang=lang))
    assert refused.value.message == say("linearize.err_prompt_long", lang, count="250", cap=200)
