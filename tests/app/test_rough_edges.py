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
