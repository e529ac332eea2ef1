"""The learn tab over several seeds and on the visitor's own texts: its text boxes are
checked before the engine runs, its summary claims an order only outside seed noise, and
``/learn`` takes the texts through the API."""

from __future__ import annotations

import json
import socket

import gradio as gr
import pytest

from explorer import catalog
from explorer.experiments import learning
from explorer.ui import learn_tab, validate
from explorer.views import learn as lv

OWN_TRAIN = "The river rose after three days of rain.\nShe counted the coins twice before paying.\n\n"
OWN_HELDOUT = "The old clock in the hall stopped at four."


def test_the_tab_s_bounds_are_the_engine_s():
    assert (learn_tab.DEFAULT_SEEDS, learn_tab.MAX_SEEDS) == (learning.DEFAULT_SEEDS, learning.MAX_SEEDS)
    assert learn_tab.COMPARISON_KEYS == lv.COMPARISON_KEYS


def test_the_text_boxes_are_read_one_text_a_line_and_bounded():
    assert validate.learn_texts("  \n ", "train_texts") is None            # blank: the built-in texts
    assert validate.learn_texts(OWN_TRAIN, "train_texts") == [
        "The river rose after three days of rain.", "She counted the coins twice before paying."]
    too_many = "\n".join(f"text {i}" for i in range(catalog.LEARN_MAX_TEXTS + 1))
    too_long = "x" * (catalog.LEARN_MAX_TEXT_CHARS + 1)
    huge = "y" * (catalog.LEARN_MAX_TEXTS * (catalog.LEARN_MAX_TEXT_CHARS + 1) + 1)
    for raw, key in ((too_many, "learn.err_texts_count"), (too_long, "learn.err_text_long"),
                     (huge, "learn.err_texts_size"), ({"a": 1}, "learn.err_texts_type")):
        with pytest.raises(ValueError) as refused:
            validate.learn_texts(raw, "train_texts")
        assert refused.value.args[0].key == key


def test_the_handler_refuses_bad_texts_in_the_page_s_language():
    with pytest.raises(gr.Error, match="第 1 篇文本"):
        list(learn_tab.run_learn(2, "3", 8, 8, 0, 2, 2, "hedgehog", False, None, "zh", "", 1,
                                 "x" * (catalog.LEARN_MAX_TEXT_CHARS + 1), ""))
    with pytest.raises(gr.Error, match="留出文本不能拿来训练"):
        list(learn_tab.run_learn(2, "3", 8, 8, 0, 2, 2, "hedgehog", False, None, "zh", "", 1,
                                 OWN_HELDOUT, OWN_HELDOUT))


def _row(name, values):
    mean, sd = learning.spread(values)
    return {"name": name, "map": name, "features_m": 8, "kl": mean, "kl_sd": sd, "kl_seeds": values,
            "kl_median": mean, "kl_median_sd": sd, "entropy": 1.0, "monotonicity": 0.5}


@pytest.mark.parametrize("values, key", [
    (([0.068, 0.068, 0.068], [0.088, 0.059, 0.075]), "learn.order_noise"),   # Hedgehog the same on every seed, LUNA spread around it
    (([0.05, 0.06, 0.055], [0.6, 1.1, 0.8]), "learn.order_apart"),
    (([0.05], [0.6]), "learn.order_one_seed"),
])
def test_the_summary_claims_an_order_only_outside_seed_noise(values, key):
    view = lv.LearnResult(2, 3, 8, 8, 0, [1.0], 0.1, 3, 2, {}, [_row("hedgehog", values[0]), _row("luna", values[1])],
                          1.8, None, None, kind="hedgehog", seeds=tuple(range(len(values[0]))))
    assert learn_tab.ordering(view).key == key


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_the_learn_endpoint_takes_seeds_and_texts():
    from gradio_client import Client
    with gr.Blocks() as demo:
        learn_tab.build(gr.Checkbox(False))
    demo.queue().launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True)
    try:
        client = Client(demo.local_url, verbose=False)
        loss, summary, table, *_ = client.predict(
            layer=2, head="3", num_features=8, steps=10, seed=0, seeds=2, kind="luna", train_texts=OWN_TRAIN,
            heldout_texts=OWN_HELDOUT, api_name="/learn")
        traces = json.loads(loss["plot"])["data"]
        assert [t["name"] for t in traces] == ["seed 0", "seed 1"]            # one loss curve per LUNA seed
        assert "your own" in summary and "0, 1" in summary
        assert "KL: sd over 2 seeds" in table["headers"]
        from gradio_client.exceptions import AppError
        with pytest.raises(AppError, match="at most 40 texts"):
            client.predict(layer=2, head="3", num_features=8, steps=10, seeds=1,
                           train_texts="\n".join(f"text number {i}" for i in range(41)), api_name="/learn")
    finally:
        demo.close()
