"""Tests for explorer.diagnostics.state: traces against direct sums, recall against the article's claims."""

import math

import pytest
import torch

from explorer import mechanisms
from explorer.diagnostics import state, state_probes
from explorer.mechanisms.linear import forms as linear
from explorer.mechanisms.retnet import gates as decay
from explorer import maps as fm


def _kv(n, d, dv=None, seed=0, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(n, d, generator=gen, dtype=dtype),
            torch.randn(n, dv or d, generator=gen, dtype=dtype))


# --- state_trace ----------------------------------------------------------------------

def test_last_state_equals_direct_sum_without_decay():
    k, v = _kv(20, 6, 5)
    fmap = fm.create("elu1", 6)
    tr = state.state_trace(k, v, fmap, keep_states=True)
    fk = fmap(k)
    direct = fk.T @ v
    torch.testing.assert_close(tr.states[-1], direct)
    assert tr.state_norm[-1].item() == pytest.approx(torch.linalg.norm(direct).item(), rel=1e-12)
    assert tr.normaliser_norm[-1].item() == pytest.approx(torch.linalg.norm(fk.sum(0)).item(), rel=1e-12)
    # Every intermediate state is the prefix sum of the recorded updates.
    torch.testing.assert_close(tr.updates.cumsum(0), tr.states)
    torch.testing.assert_close(tr.updates[3], torch.outer(fk[3], v[3]))


@pytest.mark.parametrize("kind", ["retnet", "gla"])
def test_last_state_equals_decayed_sum(kind):
    n, d = 25, 4
    k, v = _kv(n, d, 3, seed=1)
    fmap = fm.create("favor_plus", d, num_features=8, seed=2)
    a = state.decay_preset(kind, n, 8, gamma=0.8, strength=3.0, seed=4).double()
    tr = state.state_trace(k, v, fmap, log_decay=a, keep_states=True)
    # Token j's contribution to S_N is scaled by the product of the gates after it,
    # exp(sum_{t > j} a_t), row by row of the key features.
    a_full = a.expand(n, 8)
    after = a_full.flip(0).cumsum(0).flip(0) - a_full          # sum over t > j
    fk = fmap(k)
    direct = (fk * after.exp()).T @ v
    torch.testing.assert_close(tr.states[-1], direct)
    assert tr.states is not None and tr.updates is not None


def test_states_are_not_kept_by_default():
    k, v = _kv(5, 3)
    tr = state.state_trace(k, v, fm.create("relu", 3))
    assert tr.states is None and tr.updates is None
    assert tr.state_norm.shape == tr.normaliser_norm.shape == tr.effective_rank.shape == (5,)


def test_effective_rank_of_rank_one_and_identity_like_states():
    gen = torch.Generator().manual_seed(3)
    u, w = torch.randn(7, generator=gen), torch.randn(5, generator=gen)
    assert state.effective_rank(torch.outer(u, w)).item() == pytest.approx(1.0, abs=1e-5)
    assert state.effective_rank(3.0 * torch.eye(6)).item() == pytest.approx(6.0, rel=1e-9)
    # A non-square "identity": min(m, n) equal singular values.
    assert state.effective_rank(torch.eye(4, 9)).item() == pytest.approx(4.0, rel=1e-9)
    assert state.effective_rank(torch.zeros(3, 3)).item() == 0.0
    # Unequal singular values: between 1 and the rank, matching exp(H(p)) by hand.
    sig = torch.tensor([3.0, 1.0])
    p = sig / sig.sum()
    want = math.exp(-(p * p.log()).sum().item())
    assert state.effective_rank(torch.diag(sig)).item() == pytest.approx(want, rel=1e-6)


def test_trace_rank_of_a_single_write_is_one():
    k, v = _kv(6, 4, seed=5)
    k[1:] = k[0]                                    # the same key every time
    tr = state.state_trace(k, v, fm.create("elu1", 4))
    assert tr.effective_rank[0].item() == pytest.approx(1.0, abs=1e-6)
    # Same key, several values: phi(k) (sum v)^T is still rank one.
    assert tr.effective_rank[-1].item() == pytest.approx(1.0, abs=1e-6)


def test_norms_grow_without_decay_for_positive_maps():
    k, v = _kv(40, 8, seed=6)
    v = v.abs()                                     # positive updates cannot cancel
    for name in ("elu1", "favor_plus", "relu"):
        tr = state.state_trace(k, v, fm.create(name, 8))
        assert (tr.normaliser_norm.diff() >= 0).all(), name
        assert (tr.state_norm.diff() >= -1e-12).all(), name


def test_decay_keeps_the_state_bounded():
    n, d, gamma = 400, 8, 0.9
    k, v = _kv(n, d, seed=7)
    fmap = fm.create("elu1", d)
    free = state.state_trace(k, v.abs(), fmap)
    kept = state.state_trace(k, v.abs(), fmap, log_decay=state.decay_preset("retnet", n, d, gamma=gamma))
    # Geometric bound: ||S_t|| <= max_j ||phi(k_j)|| ||v_j|| / (1 - gamma).
    bound = (fmap(k).norm(dim=1) * v.norm(dim=1)).max() / (1 - gamma)
    assert (kept.state_norm <= bound + 1e-9).all()
    # Ratio test: without decay the norm keeps growing from the middle to the end; with
    # decay it has settled.
    grow_free = (free.state_norm[-1] / free.state_norm[n // 2]).item()
    grow_kept = (kept.state_norm[-1] / kept.state_norm[n // 2]).item()
    assert grow_free > 1.5
    assert grow_kept < 1.2


def test_state_trace_validation():
    fmap = fm.create("elu1", 4)
    k, v = _kv(5, 4)
    with pytest.raises(ValueError, match="k"):
        state.state_trace(k[None], v, fmap)
    with pytest.raises(ValueError, match="v"):
        state.state_trace(k, v[:3], fmap)
    with pytest.raises(ValueError, match="feature_map"):
        state.state_trace(k, v, fm.create("elu1", 5))
    with pytest.raises(ValueError, match="log_decay"):
        state.state_trace(k, v, fmap, log_decay=0.5)
    with pytest.raises(ValueError, match="k"):
        state.state_trace(k.masked_fill(k > 1, float("nan")), v, fmap)


# --- decay presets --------------------------------------------------------------------

def test_decay_presets():
    assert state.decay_preset("linear", 10, 4) is None
    r = state.decay_preset("retnet", 10, 4, head=2)
    assert r.shape == (10, 1)
    assert r[0].item() == pytest.approx(decay.retnet_log_decay(3)[2].item())
    assert torch.allclose(r, r[0])
    assert state.decay_preset("retnet", 3, 4, gamma=0.5)[0].item() == pytest.approx(math.log(0.5))
    g = state.decay_preset("gla", 30, 6, seed=1)
    assert g.shape == (30, 6) and (g <= 0).all() and (g < 0).any()
    assert g.std(dim=0).min() > 0                   # varies with t ...
    assert g.std(dim=1).min() > 0                   # ... and between features
    assert torch.equal(state.decay_preset("gla", 12, 6, seed=1), g[:12])
    assert not torch.equal(state.decay_preset("gla", 30, 6, seed=2), g)
    assert (state.decay_preset("gla", 30, 6, seed=1, strength=0.0) == 0).all()
    torch.testing.assert_close(state.decay_preset("gla", 30, 6, seed=1, strength=2.5), 2.5 * g)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(kind="alibi"), "kind"),
        (dict(gamma=1.5), "gamma"),
        (dict(gamma=0.0), "gamma"),
        (dict(strength=-1.0), "strength"),
        (dict(n=0), "n"),
        (dict(num_features=0), "num_features"),
        (dict(head=-1), "head"),
    ],
)
def test_decay_preset_validation(kwargs, name):
    args = dict(kind="retnet", n=5, num_features=4)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name) as err:
        state.decay_preset(args.pop("kind"), args.pop("n"), args.pop("num_features"), **args)
    if name == "kind":
        assert all(kind in str(err.value) for kind in mechanisms.state_kinds())


# --- associative recall ---------------------------------------------------------------

LAGS = [0, 2, 8, 32, 128]


def test_recall_is_perfect_at_lag_zero_and_falls_without_decay():
    fmap = fm.create("elu1", 16)
    curve = state_probes.recall_probe(fmap, 16, LAGS, "linear", trials=16)
    assert curve.lags.tolist() == LAGS
    assert curve.cosine[0].item() == pytest.approx(1.0, abs=1e-5)
    assert curve.cosine_std[0].item() == pytest.approx(0.0, abs=1e-5)
    assert (curve.cosine.diff() < 0).all()
    assert curve.cosine[-1] < 0.5 * curve.cosine[0]
    assert (curve.trials == 16).all()


def test_without_decay_the_position_of_the_target_does_not_matter():
    # A state without decay is a plain sum: it does not know the order of its writes.
    fmap = fm.create("favor_plus", 8, num_features=16)
    early = state_probes.recall_probe(fmap, 8, LAGS, position="early", trials=8)
    recent = state_probes.recall_probe(fmap, 8, LAGS, position="recent", trials=8)
    torch.testing.assert_close(early.cosine, recent.cosine, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("kind", ["retnet", "gla"])
def test_decay_forgets_early_keys_and_helps_recent_ones(kind):
    fmap = fm.create("elu1", 16)
    opts = dict(gamma=0.9, strength=4.0, trials=32)
    none_early = state_probes.recall_probe(fmap, 16, LAGS, "linear", position="early", **opts)
    none_recent = state_probes.recall_probe(fmap, 16, LAGS, "linear", position="recent", **opts)
    early = state_probes.recall_probe(fmap, 16, LAGS, kind, position="early", **opts)
    recent = state_probes.recall_probe(fmap, 16, LAGS, kind, position="recent", **opts)
    assert recent.cosine[-1] > none_recent.cosine[-1] + 0.1
    assert early.cosine[-1] < none_early.cosine[-1]
    assert recent.cosine[-1] > early.cosine[-1] + 0.1


def test_fixed_load_curve_is_flat_without_decay_and_falls_with_it():
    fmap = fm.create("relu", 8)
    lags = [0, 4, 16, 48]
    flat = state_probes.recall_probe(fmap, 8, lags, "linear", num_distractors=48, trials=8)
    torch.testing.assert_close(flat.cosine, flat.cosine[:1].expand(4), atol=1e-5, rtol=1e-5)
    falling = state_probes.recall_probe(fmap, 8, lags, "retnet", gamma=0.9, num_distractors=48, trials=8)
    assert (falling.cosine.diff() < 0).all()
    assert falling.cosine[0] > flat.cosine[0]


def _naive_readout(fmap, k, v, q, log_decay):
    """The causal linear-attention output at the last token, from the quadratic form."""
    a = None if log_decay is None else log_decay[: k.shape[1]]
    return linear.linear_attention(q.expand_as(k), k, v, fmap, causal=True, method="parallel",
                                   log_decay=a)[:, -1]


@pytest.mark.parametrize("name, kind", [("elu1", "gla"), ("favor_plus", "retnet"), ("relu", "linear"),
                                        ("cosformer", "retnet")])
@pytest.mark.parametrize("position", ["early", "recent", "fixed"])
def test_recall_readouts_match_the_quadratic_form(name, kind, position):
    b, d, dv, most = 3, 4, 3, 9
    fmap = fm.create(name, d)
    gen = torch.Generator().manual_seed(11)
    tk, tv = torch.randn(b, 1, d, generator=gen), torch.randn(b, dv, generator=gen)
    nk, nv = torch.randn(b, most, d, generator=gen), torch.randn(b, most, dv, generator=gen)
    a = state.decay_preset(kind, most + 1, fmap.num_features, gamma=0.7, strength=5.0)
    # Positional maps see the whole stream's length, so compare them on full streams only.
    lags = [most] if fmap.positional else [0, 1, 4, most]
    fixed = most if position == "fixed" else None
    got = state_probes._readouts(state.UpdateRule(kind, fmap, a), tk, tv, nk, nv, lags, "early" if fixed else position, fixed)
    for lag in lags:
        if position == "early":
            k, v = torch.cat([tk, nk[:, :lag]], 1), torch.cat([tv[:, None], nv[:, :lag]], 1)
        elif position == "recent":
            k, v = torch.cat([nk[:, :lag], tk], 1), torch.cat([nv[:, :lag], tv[:, None]], 1)
        else:
            cut = most - lag
            k = torch.cat([nk[:, :cut], tk, nk[:, cut:]], 1)
            v = torch.cat([nv[:, :cut], tv[:, None], nv[:, cut:]], 1)
        torch.testing.assert_close(got[lag], _naive_readout(fmap, k, v, tk, a), rtol=1e-4, atol=1e-5)


def test_recall_probe_value_dim_and_seed():
    fmap = fm.create("elu1", 4)
    a = state_probes.recall_probe(fmap, 4, [0, 5], value_dim=3, seed=1, trials=4)
    b = state_probes.recall_probe(fmap, 4, [0, 5], value_dim=3, seed=1, trials=4)
    c = state_probes.recall_probe(fmap, 4, [0, 5], value_dim=3, seed=2, trials=4)
    torch.testing.assert_close(a.cosine, b.cosine)
    assert a.cosine[1] != c.cosine[1]


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(head_dim=5), "feature_map"),
        (dict(lags=[]), "lags"),
        (dict(lags=[1, -2]), "lags"),
        (dict(lags=[0.5]), "lags"),
        (dict(log_decay_kind="alibi"), "log_decay_kind"),
        (dict(log_decay_kind="retnet", gamma=2.0), "gamma"),
        (dict(strength=-0.1), "strength"),
        (dict(position="middle"), "position"),
        (dict(num_distractors=4, lags=[8]), "lags"),
        (dict(num_distractors=4, position="recent"), "position"),
        (dict(value_dim=0), "value_dim"),
        (dict(trials=0), "trials"),
    ],
)
def test_recall_probe_validation(kwargs, name):
    args = dict(feature_map=fm.create("elu1", 4), head_dim=4, lags=[0, 1])
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        state_probes.recall_probe(args.pop("feature_map"), args.pop("head_dim"), args.pop("lags"), **args)


# --- memory ---------------------------------------------------------------------------

def test_memory_sizes():
    # K and V: t rows of d and d_v numbers each.
    assert state.kv_cache_bytes(10, 8) == 10 * (8 + 8) * 4
    assert state.kv_cache_bytes(10, 8, value_dim=4, layers=2, heads=3, bytes_per=2) == 10 * 12 * 2 * 3 * 2
    assert state.kv_cache_bytes(0, 8) == 0
    assert state.kv_cache_bytes(2000, 8) == 2 * state.kv_cache_bytes(1000, 8)
    # S (m x d_v) and z (m), whatever t is.
    assert state.state_bytes(16, 8) == (16 * 8 + 16) * 4
    assert state.state_bytes(16, 8, layers=6, heads=12, bytes_per=2) == (16 * 8 + 16) * 6 * 12 * 2
    for args, name in [((-1, 8), "t"), ((5, 0), "head_dim"), ((5, 8, 0), "value_dim")]:
        with pytest.raises(ValueError, match=name):
            state.kv_cache_bytes(*args)
    with pytest.raises(ValueError, match="feature_dim"):
        state.state_bytes(0, 8)
    with pytest.raises(ValueError, match="layers"):
        state.state_bytes(4, 8, layers=0)
