"""Chapter 1: attention is kernel regression: the chapter's view, its math (``maths``) on the text read, as plain
data for its figures."""

from __future__ import annotations

import numpy as np

from ...diagnostics import attention
from ...sources.labels import label_parts
from .. import text
from ..record import PRONOUN
from ..view_common import ChapterView, head_of, new_view, pronoun_index
from . import maths as nadaraya_watson


def compute(sample, c, progress) -> ChapterView:
    q, k, v, notes = head_of(sample, c)
    view = new_view(1, c, notes)
    xs, ys = nadaraya_watson.toy_points(c["points"], c["seed"])
    grid = np.linspace(*nadaraya_watson.X_RANGE, 300)
    curve, _ = nadaraya_watson.nw_regression(grid, xs, ys, c["h"])
    fx, w = nadaraya_watson.nw_regression([c["x"]], xs, ys, c["h"])
    view.data["toy"] = {"xs": xs, "ys": ys, "grid": grid, "curve": curve, "truth": nadaraya_watson.truth(grid),
                        "x": c["x"], "fx": float(fx[0]), "weights": w[0], "h": c["h"]}
    n = q.shape[0]
    if c["query"] == PRONOUN and getattr(sample, "text", None) in (text.DEFAULT_TEXT, text.DEFAULT_TEXT_ZH):
        c["query"] = pronoun_index(sample.tokens, c["query"])     # "it", where this tokenizer puts it (chapter 4's step)
    if c["query"] >= n:
        c["query"] = n - 1
    i = c["query"]
    causal = bool(getattr(sample, "causal", False))
    nw = nadaraya_watson.head_query(q, k, v, i, causal=causal)
    context = nadaraya_watson.model_attention_output(sample)
    if context is not None:
        reference = context[c["layer"], c["head"], i].double().numpy()
        reference_kind = "model"
    else:
        reference = (attention.softmax_map(q, k, causal=causal).double() @ v.double())[i].numpy()
        reference_kind = "engine"
        view.notice_items.append(("notice.no_model_output", {}))
    diff = float(np.abs(nw["output"] - reference).max())
    view.data["head"] = {"tokens": list(sample.tokens), "weights": nw["weights"], "logits": nw["logits"],
                         "output": nw["output"], "reference": reference, "reference_kind": reference_kind,
                         "query": i, "token": sample.tokens[i], "word": label_parts(sample.tokens[i])[0]}
    # A key labelled by a piece of a character ("那(1/3)") is explained once, on the build
    # that first shows the labels.
    pieced = next((label for label in sample.tokens if label_parts(label)[1]), None)
    if pieced is not None:
        word, piece, _ = label_parts(pieced)
        view.says["b1"] = {"notes": [("ch1.b1.notes", {}),
                                     ("ch1.b1.pieces", {"example": f"{word}{piece}", "char": word})]}
    view.numbers.update({"fx": float(fx[0]), "max_abs_diff": diff, "query": float(i),
                         "top_weight": float(nw["weights"].max())})
    return view
