"""A linearized set trained while the visitor waits: priced before any work (a shipped-size set
is refused, the page's defaults are not), trained for every layer, reproducible, stoppable, and
judged and generated with like a shipped set (needs the packaged model)."""

from __future__ import annotations

import pytest
import torch

from explorer import catalog, stopping
from explorer.linearize import LayerMaps, build, evaluate, live
from explorer.measure import cost
from explorer.text import say, say_error
from explorer.views import linearize as views

pytestmark = pytest.mark.skipif(not catalog.causal_model_installed(), reason="the causal model is not installed")


def _no_work(*_, **__):
    raise AssertionError("the model read a token before the request was priced")


@pytest.mark.parametrize("kind, window, sinks, steps", [
    ("hedgehog", 0, 0, live.DEFAULT_STEPS), ("hedgehog", 32, 1, live.DEFAULT_STEPS), ("luna", 0, 0, live.DEFAULT_STEPS)])
def test_the_pages_defaults_fit_the_servers_two_minutes(kind, window, sinks, steps):
    assert cost.fits(live.price(kind, window, sinks, steps))


def test_a_shipped_size_set_is_over_the_limit_and_more_steps_cost_more():
    # What the shipped sets took: 48 passages, 100 steps a layer (about 190 s + 25 s measured).
    shipped = cost.estimate("linearize_train", n=256, layers=30, heads=9, kv_heads=3, d=64, m=64, steps=100,
                            batch=4, sequences=48, token_flops=live.TOKEN_FLOPS[live.MODEL])
    assert shipped.seconds > cost.LIMIT_SECONDS and not cost.fits(shipped)
    prices = [live.price("hedgehog", 0, 0, steps).seconds for steps in (10, 50, 100, 200)]
    assert prices == sorted(prices) and prices[-1] > cost.LIMIT_SECONDS
    assert live.price("hedgehog", 32, 0).seconds > live.price("hedgehog", 0, 0).seconds   # the window's own logits
    assert live.price("luna").seconds > live.price("hedgehog").seconds


def test_training_is_refused_before_the_model_reads_a_token(monkeypatch):
    monkeypatch.setattr(build, "training_data", _no_work)
    with pytest.raises(cost.Refusal, match="training maps for 30 layers of SmolLM2 on 8 passages of 256 tokens"):
        live.train("luna", 64, 1, 200)
    monkeypatch.setattr(cost, "LIMIT_SECONDS", 0.001)
    with pytest.raises(cost.Refusal) as refused:
        list(views.training_steps("hedgehog", 0, 0, 1))
    assert "在 8 段各 256 个 token 的文本上为 SmolLM2 的 30 层训练特征映射" in cost.said(refused.value, "zh")


@pytest.mark.parametrize("args, words", [
    (("favor_plus", 0, 0, 10), "Kind: choose one of hedgehog, luna"),
    (("hedgehog", 129, 0, 10), "window must be a whole number from 0 to 128"),
    (("hedgehog", 0, 5, 10), "sinks must be a whole number from 0 to 4"),
    (("hedgehog", 0, 0, 0), "Steps must be a whole number from 1 to 200"),
    (("hedgehog", 0, 0, 2.5), "Steps must be a whole number"),
    (("hedgehog", True, 0, 10), "window must be a whole number"),
])
def test_bad_training_input_is_refused_in_words(monkeypatch, args, words):
    monkeypatch.setattr(build, "training_data", _no_work)
    with pytest.raises(ValueError, match=words):
        list(views.training_steps(*args))


@pytest.fixture(scope="module")
def one_step_set():
    """A one-step LUNA set with a window and a sink, trained twice (it must give the same bytes):
    over 10 s on the 2-core machine, so the tests that use it are slow."""
    seen = []
    first = live.train("luna", 8, 1, 1, progress=lambda fraction, layer, loss: seen.append((fraction, layer, loss)))
    return first, live.train("luna", 8, 1, 1), seen


@pytest.mark.slow
def test_a_live_set_covers_every_layer_and_is_reproducible(one_step_set):
    first, again, seen = one_step_set
    assert isinstance(first, LayerMaps) and first.layers == 30
    assert (first.kind, first.window, first.sinks, first.info["steps"], first.info["passages"]) == ("luna", 8, 1, 1, 8)
    for a, b in zip(first.maps, again.maps):
        for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
            assert torch.equal(x, y), name
    assert torch.equal(first.log_weight, again.log_weight)
    fractions = [fraction for fraction, _, _ in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0 and fractions[-1] == pytest.approx(1.0)
    assert [layer for _, layer, _ in seen if layer is not None] == list(range(30))


@pytest.mark.slow
def test_the_page_judges_and_generates_with_its_own_set(one_step_set):
    trained = one_step_set[0]
    view = views.judge(views.LIVE_SET, 29, trained=trained)
    direct = evaluate(views.sample(), views.linear_layers(29), kind=trained, model=views.MODEL,
                      max_tokens=views.SAMPLE_TOKENS)
    assert view.rows[1]["perplexity"] == pytest.approx(direct["perplexity"], rel=1e-9)
    assert views.table(view)[1][0] == "LUNA trained on this page (1 steps a layer), window 8 + attention sink, k = 29"
    assert say(views.table(view)[1][0], "zh").startswith("本页训练的 LUNA（每层 1 步）")
    steps = list(views.generation_steps("Once upon a time", 2, views.LIVE_SET, 29, trained=trained))
    assert steps[-1].which == "linearized" and steps[-1].tokens == 2
    with pytest.raises(ValueError, match="No set has been trained on this page yet"):
        views.judge(views.LIVE_SET, 6)
    with pytest.raises(ValueError) as refused:
        list(views.generation_steps("Once", 2, views.LIVE_SET, 6))
    assert "本页还没有训练过映射" in say_error(refused.value, "zh")


def test_training_stops_when_asked_and_the_summary_says_each_stage():
    with pytest.raises(stopping.Stopped):
        list(views.training_steps("hedgehog", 0, 0, 1, stop=lambda: True))
    capture = views.TrainingStep(0.0, [], 3.0)
    running = views.TrainingStep(0.5, [0.25, 0.125], 12.0)
    assert views.training_summary(capture) == "Reading the training passages through SmolLM2 · 3 s"
    assert say(views.training_summary(running), "zh") == "已训练 2 / 30 层 · 最近的损失 0.125 · 12 秒"
