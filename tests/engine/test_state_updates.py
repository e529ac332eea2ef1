"""The state tab's updates beyond adding: HGRN2's tied gates and the delta rule, held to plain
float64 loops; the recall and capacity probes held to the same sums written out by hand."""

import math

import pytest
import torch

from explorer import maps as fm
from explorer.diagnostics import state, state_probes

F64 = torch.float64


def _draws(seed, shapes):
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=gen, dtype=F64) for shape in shapes]


def _delta_loop(k, v, beta, log_a=None):
    """S_t = a_t (I - beta k_t k_t^T) S_{t-1} + beta k_t v_t^T on unit keys, one token at a time."""
    k = k / k.norm(dim=-1, keepdim=True)
    s = torch.zeros(k.shape[-1], v.shape[-1], dtype=F64)
    states = []
    for t in range(k.shape[0]):
        a = 1.0 if log_a is None else math.exp(float(log_a[t]))
        eye = torch.eye(k.shape[-1], dtype=F64)
        s = a * (eye - beta * torch.outer(k[t], k[t])) @ s + beta * torch.outer(k[t], v[t])
        states.append(s)
    return torch.stack(states)


def _forget(x, w, lb):
    return lb + (1 - lb) * torch.sigmoid(x @ w)


def _hgrn2_loop(x, v, w, lb):
    """S_t = diag(f_t) S_{t-1} + (1 - f_t) v_t^T."""
    s = torch.zeros(w.shape[1], v.shape[-1], dtype=F64)
    states = []
    for t in range(x.shape[0]):
        f = _forget(x[t], w, lb)
        s = f[:, None] * s + torch.outer(1 - f, v[t])
        states.append(s)
    return torch.stack(states)


# --- traces ---------------------------------------------------------------------------

@pytest.mark.parametrize("n, d, dv", [(1, 4, 3), (23, 6, 5)])
@pytest.mark.parametrize("kind", ["deltanet", "gated_deltanet"])
def test_delta_rule_trace_equals_the_loop(kind, n, d, dv):
    k, v = _draws(3, [(n, d), (n, dv)])
    rule = state.make_rule(kind, None, d, n, strength=3.0, beta=0.7, seed=2)
    tr = state.rule_trace(k, v, rule, keep_states=True)
    log_a = None if rule.log_decay is None else rule.log_decay[:, 0].double()
    want = _delta_loop(k, v, 0.7, log_a)
    torch.testing.assert_close(tr.states, want, rtol=1e-10, atol=1e-12)
    unit = k / k.norm(dim=-1, keepdim=True)
    before = torch.cat([torch.zeros(1, d, dv, dtype=F64), want[:-1]])
    # The step's parts: erased = beta k (k^T S_{t-1}), written = beta k v^T.
    torch.testing.assert_close(tr.erased, 0.7 * unit[:, :, None] * (unit[:, None, :] @ before), rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(tr.updates, 0.7 * unit[:, :, None] * v[:, None, :])
    assert tr.normaliser_norm is None
    torch.testing.assert_close(tr.state_norm, torch.linalg.matrix_norm(want))


@pytest.mark.parametrize("lb", [0.0, 0.9])
def test_hgrn2_trace_equals_the_loop(lb):
    n, d, dv = 17, 5, 3
    x, v = _draws(4, [(n, d), (n, dv)])
    rule = state.make_rule("hgrn2", None, d, n, lower_bound=lb, seed=1)
    tr = state.rule_trace(x, v, rule, keep_states=True)
    torch.testing.assert_close(tr.states, _hgrn2_loop(x, v, rule.gate_weight, lb), rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(tr.updates, (1 - _forget(x, rule.gate_weight, lb))[:, :, None] * v[:, None, :])
    assert tr.erased is None and tr.normaliser_norm is None


def test_additive_rules_keep_the_normaliser_and_no_erased_part():
    k, v = _draws(5, [(9, 4), (9, 4)])
    tr = state.rule_trace(k, v, state.make_rule("gla", fm.create("elu1", 4), 4, 9), keep_states=True)
    assert tr.normaliser_norm is not None and tr.erased is None


# --- recall -----------------------------------------------------------------------------

def _plain_recall(kind, d, lags, position, seed, trials, **gates):
    """Cosines of the read-out with the target value, each lag's stream written out in full
    and stepped by the loops above (the same draws as recall_probe, in the same order)."""
    total = max(lags) + 1
    tk, tv, nk, nv = _draws(seed, [(trials, 1, d), (trials, d), (trials, total - 1, d), (trials, total - 1, d)])
    rule = state.make_rule(kind, None, d, total, seed=seed, **gates)
    means = []
    for lag in lags:
        cos = []
        for b in range(trials):
            if position == "early":
                ks, vs, log_a = torch.cat([tk[b], nk[b, :lag]]), torch.cat([tv[b, None], nv[b, :lag]]), None
            else:
                ks, vs = torch.cat([nk[b, :lag], tk[b]]), torch.cat([nv[b, :lag], tv[b, None]])
            if kind == "hgrn2":
                s = _hgrn2_loop(ks, vs, rule.gate_weight, rule.lower_bound)[-1]
                q = 1 - _forget(tk[b, 0], rule.gate_weight, rule.lower_bound)
            else:
                log_a = None if rule.log_decay is None else rule.log_decay[: lag + 1, 0].double()
                s = _delta_loop(ks, vs, rule.beta, log_a)[-1]
                q = tk[b, 0] / tk[b, 0].norm()
            cos.append(torch.nn.functional.cosine_similarity(q @ s, tv[b], dim=0))
        means.append(float(torch.stack(cos).mean()))
    return means


@pytest.mark.parametrize("position", ["early", "recent"])
@pytest.mark.parametrize("kind, gates", [("deltanet", dict(beta=0.6)), ("gated_deltanet", dict(strength=4.0)),
                                         ("hgrn2", dict(lower_bound=0.5))])
def test_recall_of_hgrn2_and_the_delta_rule_equals_plain_loops(kind, gates, position):
    lags = [0, 1, 5, 12]
    got = state_probes.recall_probe(None, 4, lags, kind, position=position, trials=3, seed=7, dtype=F64, **gates)
    want = _plain_recall(kind, 4, lags, position, 7, 3, **gates)
    assert got.cosine.tolist() == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert got.trials.tolist() == [3] * len(lags)


def test_the_delta_rule_recalls_a_recent_key_where_the_additive_state_is_overloaded():
    """The article's overload: with no decay, early and recent keys at lag 512 are both read
    back at a low cosine; the delta rule with beta = 1 reads the last pair back exactly."""
    d, lags = 32, [1, 64, 512]
    fmap = fm.create("elu1", d)
    none = state_probes.recall_probe(fmap, d, lags, "linear", position="recent")
    delta = state_probes.recall_probe(None, d, lags, "deltanet", position="recent", beta=1.0)
    assert none.cosine[-1] < 0.3
    assert delta.cosine.tolist() == pytest.approx([1.0] * 3, abs=1e-5)
    # Its early key is overwritten bit by bit: well recalled after one write, gone after 512.
    early = state_probes.recall_probe(None, d, lags, "deltanet", position="early", beta=1.0)
    assert early.cosine[0] > 0.9 and early.cosine[-1] < 0.2


# --- capacity ---------------------------------------------------------------------------

def _plain_capacity(kind, d, pairs, seed, trials, threshold=0.5, fmap=None, **gates):
    total = max(pairs)
    xs, vs = _draws(seed, [(trials, total, d), (trials, total, d)])
    rule = state.make_rule(kind, fmap, d, total, seed=seed, **gates)
    out = []
    for p in pairs:
        counts = []
        for b in range(trials):
            x, v = xs[b, :p], vs[b, :p]
            if kind == "linear":                          # phi(q) S / phi(q) z by direct sums
                f = fmap(x)
                read = (f @ (f.T @ v)) / (f @ f.sum(0))[:, None]
            elif kind == state.UNIT_ADDITIVE:           # S = sum k v^T on unit keys, read S^T q
                u = x / x.norm(dim=-1, keepdim=True)
                read = u @ (u.T @ v)
            else:
                s = _delta_loop(x, v, rule.beta)[-1]
                read = (x / x.norm(dim=-1, keepdim=True)) @ s
            cos = torch.nn.functional.cosine_similarity(read, v, dim=-1)
            counts.append(int((cos > threshold).sum()))
        out.append(sum(counts) / trials)
    return out


@pytest.mark.parametrize("kind", ["linear", state.UNIT_ADDITIVE, "deltanet"])
def test_capacity_counts_equal_a_plain_count(kind):
    d, pairs = 4, [1, 3, 4, 9, 16]
    fmap = fm.create("elu1", d) if kind == "linear" else None
    got = state_probes.capacity_probe(fmap, d, pairs, kind, beta=0.8, seed=3, trials=5, dtype=F64)
    want = _plain_capacity(kind, d, pairs, 3, 5, fmap=fmap, beta=0.8)
    assert got.recalled.tolist() == want
    assert got.pairs.tolist() == pairs and got.threshold == 0.5
    assert (got.recalled <= got.pairs).all() and (got.recalled_std >= 0).all()


def test_capacity_threshold_is_used():
    low = state_probes.capacity_probe(None, 8, [32], state.UNIT_ADDITIVE, threshold=-0.99, trials=2)
    high = state_probes.capacity_probe(None, 8, [32], state.UNIT_ADDITIVE, threshold=0.99, trials=2)
    assert low.recalled[0] == 32 and high.recalled[0] < 32


def test_the_delta_rule_keeps_recalling_past_d_while_adding_overloads():
    d = 32
    pairs = [d // 2, 16 * d]
    delta = state_probes.capacity_probe(None, d, pairs, "deltanet", beta=0.5)
    unit = state_probes.capacity_probe(None, d, pairs, state.UNIT_ADDITIVE)
    elu = state_probes.capacity_probe(fm.create("elu1", d), d, pairs, "linear")
    # Below d every pair is recalled (nearly), by either update on unit keys.
    assert delta.recalled[0] >= 0.9 * d / 2 and unit.recalled[0] >= 0.9 * d / 2
    # Far past d the delta rule still holds about d pairs; the additive state fewer, and with
    # elu+1's positive features almost none.
    assert delta.recalled[1] > d and delta.recalled[1] > unit.recalled[1] + 5
    assert elu.recalled[1] < 8


# --- validation -------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, name", [
    (dict(kind="mamba"), "kind"),
    (dict(lower_bound=1.0), "lower_bound"),
    (dict(lower_bound=-0.1), "lower_bound"),
    (dict(lower_bound=float("nan")), "lower_bound"),
    (dict(lower_bound="abc"), "lower_bound"),
    (dict(beta=0.0), "beta"),
    (dict(beta=1.5), "beta"),
    (dict(strength=-1.0), "strength"),
    (dict(kind="linear", feature_map=None), "feature_map"),
])
def test_make_rule_refuses_bad_values_naming_them(kwargs, name):
    args = dict(kind="deltanet", feature_map=fm.create("elu1", 4), head_dim=4, total=8)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        state.make_rule(args.pop("kind"), args.pop("feature_map"), args.pop("head_dim"), args.pop("total"), **args)


@pytest.mark.parametrize("kwargs, name", [(dict(pairs=[0, 4]), "pairs"), (dict(pairs=[]), "pairs"),
                                          (dict(threshold=1.0), "threshold"), (dict(trials=0), "trials")])
def test_capacity_probe_validation(kwargs, name):
    args = dict(pairs=[2, 4])
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        state_probes.capacity_probe(None, 4, args.pop("pairs"), "deltanet", **args)


def test_gated_deltanet_gate_is_one_per_token_from_the_gla_recipe():
    g = state.decay_preset("gated_deltanet", 20, 6, seed=1, strength=2.0)
    gla = state.decay_preset("gla", 20, 6, seed=1, strength=2.0)
    assert g.shape == (20, 1) and (g <= 0).all() and g.std() > 0
    torch.testing.assert_close(g[:, 0], gla[:, 0])          # the same draws, the first gate column
    assert state.decay_preset("hgrn2", 5, 4) is None and state.decay_preset("deltanet", 5, 4) is None
