"""Chapter 4: linear attention is an RNN: the chapter's view, its math (``maths``) on the text read, as plain
data for its figures."""

from __future__ import annotations

import re

import numpy as np

from ...forms import attention, state
from .. import text
from ..record import PRONOUN
from ...views.lecture_common import ChapterView, cached_map, head_of, new_view
from . import maths as rnn


def compute(sample, c, progress) -> ChapterView:
    q, k, v, notes = head_of(sample, c)
    view = new_view(4, c, notes)
    d, n = q.shape[-1], q.shape[0]
    fmap = cached_map(c["map"], d, c["m"] if "FAVOR" in c["map"] else None, 0)
    if c["t"] == PRONOUN and getattr(sample, "text", None) in (text.DEFAULT_TEXT, text.DEFAULT_TEXT_ZH):
        c["t"] = _pronoun_step(sample.tokens, c["t"])     # another tokenizer puts "it" elsewhere
    t = n - 1 if c["t"] < 0 or c["t"] >= n else c["t"]
    c["t"] = t
    step = rnn.step_to(q, k, v, fmap, t)
    both = rnn.recurrent_vs_parallel(q, k, v, fmap)
    mem = rnn.memory(d, fmap.num_features, v.shape[-1])
    early = rnn.recall(fmap, d, "none", "early")
    recent = rnn.recall(fmap, d, "none", "recent")    # without decay the same curve: order is not kept
    view.data.update(step=step, token=sample.tokens[t], tokens=list(sample.tokens), memory=mem, recall=early,
                     recall_recent=recent,
                     recurrent=both["recurrent"][t], parallel=both["parallel"][t])
    view.notice_items.append(("notice.recall_synthetic", {"d": d}))
    if getattr(sample, "causal", False) and sample.model_attentions is not None:
        # The RNN's causal order is the model's own: causal softmax on its q, k is its attention.
        own = sample.model_attentions[c["layer"], c["head"]].double()
        diff = float((attention.softmax_map(q, k, causal=True).double() - own).abs().max())
        view.numbers["model_attention_max_abs_diff"] = diff
        view.notice_items.append(("notice.causal_model", {"model": sample.info.get("model", ""), "diff": f"{diff:.1e}"}))
    view.data["model"] = (getattr(sample, "info", None) or {}).get("model")
    lags = early["lags"]
    view.numbers.update({
        "t": float(t), "max_abs_diff": both["max_abs_diff"], "max_rel_diff": both["max_rel_diff"],
        "state_bytes": mem["state_bytes"], "kv_bytes_at_n": float(state.kv_cache_bytes(n, d, v.shape[-1])),
        "break_even_tokens": mem["break_even_tokens"], "m": float(fmap.num_features),
        "recall_lag_1": float(early["cosine"][np.flatnonzero(lags == 1)[0]]),
        f"recall_lag_{int(lags[-1])}": float(early["cosine"][-1]),
    })
    return view


PRONOUNS = ("it", "它")


def _pronoun_step(tokens, fallback: int) -> int:
    """The last token of the default sentence's pronoun ("it", or 它 split into byte pieces,
    "它(1/2)", "它(2/2)"): the step where the state has just read it."""
    words = [re.sub(r"\(\d+/\d+\)$", "", label.rsplit("·", 1)[0]).strip().lower() for label in tokens]
    hits = [i for i, word in enumerate(words) if word in PRONOUNS]
    if not hits:
        return fallback
    end = hits[0]
    while end + 1 in hits:
        end += 1
    return end
