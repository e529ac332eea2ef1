"""Chapter 4: linear attention is an RNN: the chapter's view, its math (``maths``) on the text read, as plain
data for its figures."""

from __future__ import annotations


import numpy as np

from ...diagnostics import attention, state
from ...sources.labels import label_parts
from .. import text
from ..record import PRONOUN
from ...catalog import CAUSAL_MODEL
from ..numbers import say_bytes, say_cosine
from ..view_common import ChapterView, cached_map, head_of, new_view, pronoun_index
from . import maths as rnn


def compute(sample, c, progress) -> ChapterView:
    q, k, v, notes = head_of(sample, c)
    view = new_view(4, c, notes)
    d, n = q.shape[-1], q.shape[0]
    fmap = cached_map(c["map"], d, c["m"] if c["map"].startswith("favor_plus") else None, 0)
    if c["t"] == PRONOUN and getattr(sample, "text", None) in (text.DEFAULT_TEXT, text.DEFAULT_TEXT_ZH):
        c["t"] = pronoun_index(sample.tokens, c["t"])     # another tokenizer puts "it" elsewhere
    t = n - 1 if c["t"] < 0 or c["t"] >= n else c["t"]
    c["t"] = t
    step = rnn.step_to(q, k, v, fmap, t)
    both = rnn.recurrent_vs_parallel(q, k, v, fmap)
    mem = rnn.memory(d, fmap.num_features, v.shape[-1])
    # The lecture's one recall experiment (d = RECALL_DIM whatever the head's d), as chapters 5 and 6 quote it.
    probe = cached_map(c["map"], rnn.RECALL_DIM, c["m"] if c["map"].startswith("favor_plus") else None, 0)
    early = rnn.recall(probe, rnn.RECALL_DIM, "linear", "early")
    recent = rnn.recall(probe, rnn.RECALL_DIM, "linear", "recent")    # without decay the same curve: order is not kept
    view.data.update(step=step, token=sample.tokens[t], word=label_parts(sample.tokens[t])[0], tokens=list(sample.tokens), memory=mem, recall=early,
                     recall_recent=recent,
                     recurrent=both["recurrent"][t], parallel=both["parallel"][t])
    view.notice_items.append(("notice.recall_synthetic", {"d": rnn.RECALL_DIM}))
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
        f"recall_lag_{rnn.RECALL_KEYS}": float(early["cosine"][np.flatnonzero(lags == rnn.RECALL_KEYS)[0]]),
    })
    n = view.numbers
    memory = {"t": f"{n['break_even_tokens']:.1f}"}
    view.says["b1"] = {"claim": ("ch4.b1.claim", {}), "notes": [("ch4.b1.notes", memory)]}
    recall = {"first": say_cosine(n["recall_lag_1"]), "last": say_cosine(n[f"recall_lag_{rnn.RECALL_KEYS}"]),
              "lag": rnn.RECALL_KEYS, "d": rnn.RECALL_DIM}
    view.says["b2"] = {"claim": ("ch4.b2.claim", recall), "notes": [("ch4.b2.notes", recall)]}
    view.notice_builds = {"notice.recall_synthetic": ("b2",), "notice.causal_model": ("b0",)}
    _generation(view, sample)
    return view


def _generation(view, sample) -> None:
    """The causal model itself generating as an RNN, where the chapter reads it: its states
    stay one size while the original's KV cache grows (``rnn.generation_memory``)."""
    from ..view import causal_model_ready
    view.data["generation"] = None
    view.data["model_missing"] = causal_model_ready() is None        # said on the empty build
    if not (getattr(sample, "causal", False) and view.data["model"] == CAUSAL_MODEL["name"]):
        view.says["b3"] = {"claim": ("ch4.b3.claim_none", {}), "notes": [("ch4.b3.notes_none", {})]}
        return
    corpus = "zh" if getattr(sample, "text", None) == text.DEFAULT_TEXT_ZH else "en"    # the sentence's, not the page's
    gen = rnn.generation_memory(corpus)
    view.data["generation"] = gen
    first, last = gen["kv_bytes"][0], gen["kv_bytes"][-1]
    per_token = last - gen["kv_bytes"][-2] if len(gen["kv_bytes"]) > 1 else 0
    view.numbers.update({"generated_state_bytes": float(gen["state_bytes"][-1]), "generated_kv_first": float(first),
                         "generated_kv_last": float(last), "generated_kv_per_token": float(per_token)})
    said = {"state": say_bytes(gen["state_bytes"][-1]), "kv0": say_bytes(first), "kv1": say_bytes(last),
            "prompt": gen["prompt_tokens"], "new": gen["new_tokens"], "per_token": say_bytes(per_token)}
    constant = len(set(gen["state_bytes"])) == 1
    view.says["b3"] = {"claim": ("ch4.b3.claim" if constant else "ch4.b3.claim_grows", said),
                       "notes": [("ch4.b3.notes", said)]}
