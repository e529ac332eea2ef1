"""Chapter 2: associativity: the chapter's view, its math (``maths``) on the text read, as plain
data for its figures."""

from __future__ import annotations

from ..numbers import said_count, say_ratio
from ..view_common import ChapterView, cached_map, new_view
from . import maths as associativity


def compute(sample, c, progress) -> ChapterView:
    view = new_view(2, c)
    n, d = c["n"], c["d"]
    label = c["map"]
    fmap = cached_map(label, d, c["m"] if label.startswith("favor_plus") else None, c["seed"])
    m = fmap.num_features
    c["m"] = m if label.startswith("favor_plus") else c["m"]
    shapes = associativity.orders(n, d, m)
    timed_n = min(n, associativity.MAX_TIMED_N)
    if timed_n < n:
        view.notice_items.append(("notice.timed_cap", {"n": f"{n:,}", "cap": f"{timed_n:,}", "cells": f"{n * n:,}"}))
    view.notice_items.append(("notice.random_data", {"tokens": sample.n_tokens if sample is not None else 0}))
    q, k, v = associativity.random_qkv(timed_n, d, c["seed"])
    measured = associativity.measure(q, k, v, fmap, repeats=3 if timed_n <= 1024 else 2 if timed_n <= 4096 else 1)
    timed = associativity.orders(timed_n, d, m)
    article = associativity.article_ratio()
    rate = associativity.matmul_rate()
    view.data["orders"] = shapes
    largest = max(n, m, d)
    view.data["left_sides"] = associativity.block_sides(shapes["left"], largest)
    view.data["right_sides"] = associativity.block_sides(shapes["right"], largest)
    view.data["sides_compressed"] = largest > associativity.LINEAR_DRAW_LIMIT
    view.numbers.update({
        "n": float(n), "d": float(d), "m": float(m), "timed_n": float(timed_n),
        "left_flops": float(shapes["left_flops"]), "right_flops": float(shapes["right_flops"]),
        "flop_ratio": float(shapes["flop_ratio"]),
        "left_intermediate_bytes": float(shapes["left_intermediate_bytes"]),
        "right_intermediate_bytes": float(shapes["right_intermediate_bytes"]),
        "left_seconds": measured["left_seconds"], "right_seconds": measured["right_seconds"],
        "time_ratio": measured["left_seconds"] / max(measured["right_seconds"], 1e-12),
        "timed_flop_ratio": float(timed["flop_ratio"]),
        "max_abs_diff": measured["max_abs_diff"], "max_rel_diff": measured["max_rel_diff"],
        "article_model_ratio": article["model_ratio"], "article_leading_ratio": article["leading_ratio"],
        "matmul_gflops": rate / 1e9,
        "tokens": float(sample.n_tokens if sample is not None else 0),   # the times' notice says it
    })
    cost = {"n": said_count(n), "flops": say_ratio(view.numbers["flop_ratio"]),
            "article": say_ratio(view.numbers["article_model_ratio"])}
    fewer = view.numbers["flop_ratio"] >= 1        # at short N the N x N order is the cheaper one
    view.says["b1"] = {"claim": ("ch2.b1.claim" if fewer else "ch2.b1.claim_more", cost), "notes": [("ch2.b1.notes", cost)]}
    view.notice_builds = {"notice.timed_cap": ("b1",), "notice.random_data": ("b1",)}
    return view
