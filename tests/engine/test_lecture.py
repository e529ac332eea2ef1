"""The lecture's chapter math, held to plain formulas and to the model itself."""

import math

import numpy as np
import pytest
import torch

from explorer.diagnostics import attention
from explorer import maps as feature_maps
from explorer.lecture.ch2_associativity import maths as associativity
from explorer.lecture.ch0_bottleneck import maths as bottleneck
from explorer.lecture.ch5_closing_the_gap import maths as closing
from explorer.lecture.ch3_kernels import maths as kernels
from explorer.lecture.ch1_kernel_regression import maths as nadaraya_watson
from explorer.lecture.ch4_rnn import maths as rnn
from explorer.lecture.ch6_tradeoff import maths as tradeoff
from explorer.views.common import load_sample

TEXT = "The trophy did not fit into the brown suitcase because it was too big."


@pytest.fixture(scope="module")
def sample():
    return load_sample("text", text=TEXT)


# -- 0: the bottleneck -------------------------------------------------------------------

def test_bottleneck_counts_pairs_bytes_and_the_article_step():
    b = bottleneck.bottleneck(1000, 64)
    assert b["pairs"] == 1_000_000 and b["bytes_f32"] == 4_000_000 and b["bytes_f16"] == 2_000_000
    assert b["quadratic_flops"] == 2 * 1000 ** 2 * (64 + 64)
    step = bottleneck.article_step()
    assert step["pairs_from"] == 512 ** 2 == 262_144          # the article's "26 万"
    assert step["pairs_to"] == 10 ** 10                       # "100 亿"
    assert [row["n"] for row in bottleneck.ladder(3000)] == [512, 2048, 3000, 8192, 32768, 100_000]
    with pytest.raises(ValueError, match="N"):
        bottleneck.bottleneck(0)


# -- 1: Nadaraya-Watson --------------------------------------------------------------------

def test_1d_regression_is_the_weighted_average_of_the_formula():
    xs, ys = nadaraya_watson.toy_points(25, seed=3)
    for x, h in ((0.0, 0.3), (4.2, 1.0), (9.9, 2.5), (50.0, 0.1)):   # far away: still defined
        fx, w = nadaraya_watson.nw_regression([x], xs, ys, h)
        k = [math.exp(-(x - xj) ** 2 / (2 * h * h)) for xj in xs]
        if sum(k) > 0:
            expected = sum(kj * yj for kj, yj in zip(k, ys)) / sum(k)
            assert fx[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert w.sum() == pytest.approx(1.0)
    assert np.all(np.diff(xs) >= 0)
    with pytest.raises(ValueError, match="bandwidth"):
        nadaraya_watson.nw_regression([1.0], xs, ys, 0.0)


def test_head_query_equals_the_model_attention_output(sample):
    context = nadaraya_watson.model_attention_output(sample)
    assert context is not None and context.shape == sample.v.shape
    worst = 0.0
    for layer in (0, 3, 5):
        for head in (0, 7, 11):
            q, k, v = sample.q[layer, head], sample.k[layer, head], sample.v[layer, head]
            for i in (0, 5, sample.n_tokens - 1):
                out = nadaraya_watson.head_query(q, k, v, i)
                assert out["weights"].sum() == pytest.approx(1.0)
                worst = max(worst, float(np.abs(out["output"] - context[layer, head, i].double().numpy()).max()))
    assert worst <= 1e-5


def test_head_query_is_the_literal_sum_on_random_data():
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(7, 4, generator=gen) for _ in range(3))
    out = nadaraya_watson.head_query(q, k, v, 2)
    w = [math.exp(float(q[2] @ k[j]) / 2.0) for j in range(7)]
    expected = sum(wj * v[j].double() for j, wj in enumerate(w)) / sum(w)
    assert np.allclose(out["output"], expected.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="query"):
        nadaraya_watson.head_query(q, k, v, 7)


def test_no_model_output_for_random_samples():
    assert nadaraya_watson.model_attention_output(load_sample("random", n=8, d=4)) is None


# -- 2: associativity ----------------------------------------------------------------------

@pytest.mark.parametrize("n,d,name,m", [(1, 4, "elu1", None), (33, 8, "elu1", None), (100, 16, "favor_plus", 24),
                                        (257, 32, "favor_plus", 64), (65, 8, "taylor2", None)])
def test_both_orders_give_the_same_output(n, d, name, m):
    q, k, v = associativity.random_qkv(n, d, seed=n)
    fmap = feature_maps.create(name, d, num_features=m)
    out = associativity.measure(q, k, v, fmap, repeats=1)
    assert out["max_rel_diff"] <= 1e-5
    reference = attention.kernel_map(q, k, fmap).double() @ v.double()
    assert np.abs(out["out_right"] - reference.numpy()).max() <= 1e-5 * np.abs(reference.numpy()).max()


def test_orders_sizes_and_the_article_ratio():
    o = associativity.orders(1000, 64, 32, 16)
    assert o["left_intermediate_elements"] == 1000 * 1000 and o["right_intermediate_elements"] == 32 * 16
    assert o["left_flops"] == 2 * 1000 ** 2 * (32 + 16)
    assert o["right_flops"] == 4 * 1000 * 32 * 16 + 4 * 1000 * 32
    middle = {b["name"]: (b["rows"], b["cols"]) for b in o["left"] + o["right"] if b["role"] == "intermediate"}
    assert middle == {"φ(Q)φ(K)ᵀ": (1000, 1000), "φ(K)ᵀV": (32, 16)}
    art = associativity.article_ratio()
    assert art["leading_ratio"] == pytest.approx(781.25)
    assert art["model_ratio"] == pytest.approx(100_000 / 129)        # the normaliser counted too
    assert 770 < art["model_ratio"] < 790
    with pytest.raises(ValueError, match="timed up to"):
        q = torch.zeros(associativity.MAX_TIMED_N + 1, 2)
        associativity.measure(q, q, q, feature_maps.create("elu1", 2))


def test_display_sides_keep_order_and_fit():
    assert associativity.display_side(300, 512) == 300.0
    sides = [associativity.display_side(s, 100_000) for s in (1, 64, 128, 100_000)]
    assert sides == sorted(sides) and sides[-1] == pytest.approx(associativity.LINEAR_DRAW_LIMIT)
    assert sides[1] < sides[2]


# -- 3: kernels ------------------------------------------------------------------------------

def test_taylor_truncations_equal_their_formula():
    s = np.linspace(-4, 4, 41)
    assert np.allclose(kernels.taylor(s, 1), 1 + s)
    assert np.allclose(kernels.taylor(s, 2), 1 + s + s ** 2 / 2)
    assert np.allclose(kernels.taylor(s, 3), 1 + s + s ** 2 / 2 + s ** 3 / 6)
    assert np.allclose(kernels.taylor(np.array([0.3]), 30), np.exp(0.3))
    curves = kernels.taylor_curves(np.array([-3.0, 1.0]))
    assert curves["s"][0] == pytest.approx(-3.5) and curves["s"][-1] == pytest.approx(1.5)
    # Logits all above -1: the grid still reaches where 1 + s < 0 (the claim's span).
    assert kernels.taylor_curves(np.array([0.0, 12.5]))["s"][0] == pytest.approx(kernels.TAYLOR_LEFT)
    assert kernels.TAYLOR_LEFT < -1
    assert np.allclose(curves["exp"], np.exp(curves["s"]))


def test_kernel_profiles_equal_their_formulas():
    gen = torch.Generator().manual_seed(2)
    d = 8
    q, k = torch.randn(10, d, generator=gen), torch.randn(10, d, generator=gen)
    s = (q.double() @ k.double().T / math.sqrt(d)).numpy().ravel()
    prof = {name: kernels.kernel_profile(q, k, feature_maps.create(name, d))["approx"]
            for name in ("taylor1", "taylor2", "elu1")}
    assert np.allclose(prof["taylor1"], 1 + s, atol=1e-5)
    assert np.allclose(prof["taylor2"], 1 + s + s ** 2 / 2, atol=1e-5)
    elu = lambda x: torch.nn.functional.elu(x.double()) + 1  # noqa: E731
    assert np.allclose(prof["elu1"], (elu(q) @ elu(k).T).numpy().ravel(), rtol=1e-5)
    favor = feature_maps.create("favor_plus", d, num_features=16, seed=4)
    w = favor.projection.double()
    phi = lambda x: torch.exp(x.double() / d ** 0.25 @ w.T - (x.double() / d ** 0.25).pow(2).sum(-1, keepdim=True) / 2) / 4  # noqa: E731
    got = kernels.kernel_profile(q, k, favor)
    assert np.allclose(got["approx"], (phi(q) @ phi(k).T).numpy().ravel(), rtol=1e-5)
    assert np.allclose(got["exact"], np.exp(s), rtol=1e-6)


def test_kernel_profile_counts_values_log_axes_cannot_show():
    q = torch.tensor([[3.0, 0.0], [-3.0, 0.0]])
    prof = kernels.kernel_profile(q, q, feature_maps.create("taylor1", 2))
    assert prof["nonpositive"] == 2 and prof["pairs"] == 4        # 1 + s < 0 off the diagonal


def test_random_features_converge_when_well_conditioned_only():
    wq, wk, _ = kernels.well_conditioned(32, 16, seed=0)
    assert np.mean(kernels.scaled_norms(wq) ** 2) == pytest.approx(kernels.WELL_CONDITIONED_NORM2, rel=0.3)
    rf = kernels.rf_convergence(wq, wk, ms=(4, 256), seeds=3)
    assert rf["orthogonal"][1] < 0.4 * rf["orthogonal"][0]
    assert rf["iid"][1] < 0.4 * rf["iid"][0]
    # Long vectors (|x'|^2 ~ 10): 64 times more features barely help.
    gen = torch.Generator().manual_seed(0)
    lq, lk = torch.randn(32, 16, generator=gen) * 2.0, torch.randn(32, 16, generator=gen) * 2.0
    bad = kernels.rf_convergence(lq, lk, ms=(4, 256), seeds=3)
    assert bad["orthogonal"][1] > 0.3


@pytest.mark.parametrize("n,d,scale", [(1, 4, 1.0), (7, 8, 0.3), (33, 16, 2.0), (20, 32, 1.0)])
def test_stacked_random_feature_errors_equal_the_plain_loop(n, d, scale):
    gen = torch.Generator().manual_seed(n)
    q, k = torch.randn(n, d, generator=gen) * scale, torch.randn(n, d, generator=gen) * scale
    ms = (4, 12, 64)
    fast = kernels._rf_convergence(q, k, ms, 3)
    plain = kernels.rf_convergence_reference(q, k, ms, seeds=3)
    assert set(fast) == set(plain)
    for key in plain:
        assert np.allclose(fast[key], plain[key], rtol=1e-5, atol=1e-7), key


# -- 4: the RNN ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n,name", [(1, "elu1"), (5, "elu1"), (37, "favor_plus"), (20, "taylor2")])
def test_recurrent_equals_parallel_and_the_plain_formula(n, name):
    gen = torch.Generator().manual_seed(n)
    d = 6
    q, k, v = (torch.randn(n, d, generator=gen) for _ in range(3))
    fmap = feature_maps.create(name, d, num_features=12 if name == "favor_plus" else None)
    both = rnn.recurrent_vs_parallel(q, k, v, fmap)
    assert both["max_rel_diff"] <= 1e-5
    fq, fk = fmap(q, is_query=True).double(), fmap(k).double()
    for t in {0, n // 2, n - 1}:
        step = rnn.step_to(q, k, v, fmap, t)
        s_t = sum(fk[j].unsqueeze(-1) * v[j].double().unsqueeze(0) for j in range(t + 1))
        z_t = fk[: t + 1].sum(0)
        assert np.allclose(step["state"], s_t.numpy(), rtol=1e-5, atol=1e-6)
        assert np.allclose(step["normaliser"], z_t.numpy(), rtol=1e-5)
        assert np.allclose(step["output"], (fq[t] @ s_t / (fq[t] @ z_t)).numpy(), rtol=1e-4, atol=1e-6)
        assert np.allclose(step["output"], both["parallel"][t], rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="t:"):
        rnn.step_to(q, k, v, fmap, n)


def test_memory_and_recall():
    mem = rnn.memory(32, 64, 32, tokens=(1, 10, 1000))
    assert mem["state_bytes"] == 4 * (64 * 32 + 64)
    assert list(mem["kv_bytes"]) == [4 * t * 64 for t in (1, 10, 1000)]
    assert mem["break_even_tokens"] == pytest.approx((64 * 32 + 64) / 64)
    fmap = feature_maps.create("elu1", 16)
    rc = rnn.recall(fmap, 16, lags=(1, 512), trials=8)
    assert rc["cosine"][0] > rc["cosine"][1] + 0.3          # the fall is visible
    assert rnn.recall(fmap, 16, lags=(1, 512), trials=8) is rc   # cached


# -- 5: closing the gap -----------------------------------------------------------------------------

def test_decay_keeps_recent_keys_and_no_decay_does_not_know_order():
    fmap = feature_maps.create("elu1", 16)
    curves = closing.decay_recall(fmap, 16, lags=(1, 64, 256), gamma=0.9)
    gap = closing.recall_gap(curves, 256)
    assert gap["linear"] == pytest.approx(0.0, abs=1e-6)
    assert gap["retnet"] > 0.1 and gap["gla"] > 0.1


def test_row_kl_by_map_matches_the_metric():
    gen = torch.Generator().manual_seed(5)
    q, k = torch.randn(10, 8, generator=gen), torch.randn(10, 8, generator=gen)
    out = closing.row_kl_by_map(q, k, {"elu": feature_maps.create("elu1", 8),
                                       "t1": feature_maps.create("taylor1", 8)})
    a = attention.softmax_map(q, k).double()
    b = attention.kernel_map(q, k, feature_maps.create("elu1", 8)).double()
    expected = (a * (a.log() - b.log())).sum(-1).numpy()
    assert np.allclose(out["elu"]["kl"], expected, rtol=1e-8)
    assert out["elu"]["undefined"] == 0
    assert out["elu"]["median"] == pytest.approx(float(np.median(expected)))
    assert out["t1"]["undefined"] == int(np.isnan(out["t1"]["kl"]).sum())


# -- 6: the trade-off -------------------------------------------------------------------------------

def test_pareto_frontier_on_a_hand_made_set():
    costs = [1, 2, 2, 3, 4, 5, 1, 6]
    losses = [5, 3, 4, 3, 1, 1, math.nan, 0.5]
    # 0 (cheapest), 1 (beats 2 and ties 3 on loss at lower cost), 4, 7; 5 is dominated by 4,
    # 3 by 1, 6 has no loss.
    assert tradeoff.pareto_frontier(costs, losses) == [0, 1, 4, 7]
    assert tradeoff.pareto_frontier([1, 1], [2, 2]) == [0, 1]          # equal points: neither dominates
    assert tradeoff.pareto_frontier([], []) == []
    with pytest.raises(ValueError):
        tradeoff.pareto_frontier([1, 2], [1])


def test_layer_quality_is_the_median_row_kl_over_heads():
    gen = torch.Generator().manual_seed(6)
    q, k = torch.randn(3, 12, 8, generator=gen), torch.randn(3, 12, 8, generator=gen)
    fmap = feature_maps.create("elu1", 8)
    got = tradeoff.layer_quality(q, k, fmap)
    a, b = attention.softmax_map(q, k).double(), attention.kernel_map(q, k, fmap).double()
    kl = (a * (a.log() - b.log())).sum(-1)
    assert got["median_kl"] == pytest.approx(float(kl.median()) if kl.numel() % 2 else float(np.median(kl.numpy())))
    assert got["rows"] == 36 and got["undefined_rows"] == 0
    causal = tradeoff.layer_quality(q, k, fmap, causal=True)
    # Causal: each head's row 0 sees one key (KL 0 for any map) and is left out, as in every causal mean.
    assert causal["rows"] == 33 and math.isfinite(causal["median_kl"])
    assert tradeoff.flops_per_token(64, 32) == 4 * 64 * 32 + 4 * 64


def test_measure_runs_each_order_only_as_often_as_it_times_it(monkeypatch):
    calls = {"left": 0, "right": 0}
    left, right = associativity.left_order, associativity.right_order

    def counted(name, fn):
        def run(*args):
            calls[name] += 1
            return fn(*args)
        return run

    monkeypatch.setattr(associativity, "left_order", counted("left", left))
    monkeypatch.setattr(associativity, "right_order", counted("right", right))
    q, k, v = associativity.random_qkv(50, 8, seed=3)
    fmap = feature_maps.create("elu1", 8)
    for repeats in (1, 3):
        calls.update(left=0, right=0)
        out = associativity.measure(q, k, v, fmap, repeats=repeats)
        assert calls == {"left": repeats, "right": repeats}
        assert out["left_seconds"] > 0 and out["right_seconds"] > 0
        fq, fk = fmap(q, is_query=True).double(), fmap(k).double()
        w = fq @ fk.T
        expected = ((w @ v.double()) / w.sum(-1, keepdim=True)).numpy()
        assert np.abs(out["out_left"] - expected).max() <= 1e-5 * np.abs(expected).max()
        assert np.abs(out["out_right"] - expected).max() <= 1e-5 * np.abs(expected).max()


def test_lru_keeps_the_most_recently_used_results():
    from explorer.lecture.memo import LRU

    lru, calls = LRU(2), []
    compute = lambda name: (lambda: calls.append(name) or name.upper())  # noqa: E731
    assert lru.get(("a",), compute("a")) == "A" and lru.get(("b",), compute("b")) == "B"
    assert lru.get(("a",), compute("a")) == "A"           # a hit: a becomes the most recent
    lru.get(("c",), compute("c"))                          # drops b, the least recently used
    assert len(lru) == 2 and calls == ["a", "b", "c"]
    lru.get(("a",), compute("a"))
    lru.get(("b",), compute("b"))
    assert calls == ["a", "b", "c", "b"]


def test_lru_computes_a_key_once_while_threads_ask_for_it_together():
    import threading
    import time

    from explorer.lecture.memo import LRU

    lru, calls, results = LRU(4), [], []

    def slow():
        calls.append(1)
        time.sleep(0.2)
        return "chapter"

    workers = [threading.Thread(target=lambda: results.append(lru.get(("ch", 3), slow))) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert results == ["chapter"] * 4 and len(calls) == 1

    # A computation that fails is not remembered: the next caller tries again.
    def broken():
        raise RuntimeError("no model")
    try:
        lru.get(("ch", 4), broken)
    except RuntimeError:
        pass
    assert lru.get(("ch", 4), lambda: "drawn") == "drawn"
