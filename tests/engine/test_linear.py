"""O(N) forms held to the N x N reference, on several shapes, lengths and decays."""

import math

import pytest
import torch

from explorer.diagnostics import attention as at
from explorer import maps as fm
from explorer.mechanisms.gla.gates import gla_log_gates
from explorer.mechanisms.linear import forms as li
from explorer.mechanisms.retnet.gates import retnet_log_decay

H, D, DV = 2, 8, 5


def rel_err(a, b):
    return ((a.double() - b.double()).norm() / b.double().norm()).item()


def reference(q, k, v, phi, causal, log_decay=None):
    """kernel_map(...) @ v, and the rows that are well defined (relu-type maps give some
    all-zero rows on random data: those are 0/0 in every form and are compared apart)."""
    a, bad = at.kernel_map_with_flags(q, k, phi, causal=causal, log_decay=log_decay)
    return a @ v, ~bad


def assert_matches(out, ref, ok, what):
    assert rel_err(out[ok], ref[ok]) <= 1e-5, what
    assert not torch.isfinite(out[~ok]).all(dim=-1).any(), f"{what}: a 0/0 row came out finite"


def inputs(n, seed=0, batch=(H,)):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*batch, n, D, generator=g), torch.randn(*batch, n, D, generator=g),
            torch.randn(*batch, n, DV, generator=g))


def decay_for(kind, n, m, seed=0):
    if kind == "none":
        return None
    if kind == "retnet":
        return retnet_log_decay(H)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(H, n, D, generator=g)
    return gla_log_gates(x, torch.randn(D, m, generator=g), tau=16.0)


@pytest.mark.parametrize("map_name", ["elu1", "favor_plus", "cosformer"])
@pytest.mark.parametrize("decay_kind", ["none", "retnet", "gla"])
@pytest.mark.parametrize("n", [1, 63, 64, 65, 500])
def test_all_forms_equal_the_reference(map_name, decay_kind, n):
    q, k, v = inputs(n)
    phi = fm.create(map_name, D, num_features=16 if map_name == "favor_plus" else None, seed=2)
    log_decay = decay_for(decay_kind, n, phi.num_features)
    for causal in ([True] if log_decay is not None else [False, True]):
        ref, ok = reference(q, k, v, phi, causal, log_decay)
        for method in li.METHODS:
            for chunk in (16, 64):
                out = li.linear_attention(q, k, v, phi, causal=causal, method=method, chunk_size=chunk, log_decay=log_decay)
                assert out.shape == v.shape
                assert_matches(out, ref, ok, (method, chunk, causal))


def test_taylor2_and_scalar_decay():
    q, k, v = inputs(130, seed=3)
    phi = fm.create("taylor2", D)
    for log_decay in (None, math.log(0.9)):
        ref = at.kernel_map(q, k, phi, causal=True, log_decay=log_decay) @ v
        for method in li.METHODS:
            out = li.linear_attention(q, k, v, phi, causal=True, method=method, chunk_size=16, log_decay=log_decay)
            assert rel_err(out, ref) <= 1e-5, method


def test_strong_gates_stay_finite():
    """Cumulative log gates far below -200: no exponent may be positive anywhere."""
    n = 500
    q, k, v = inputs(n, seed=4)
    phi = fm.create("elu1", D)
    g = torch.Generator().manual_seed(9)
    log_decay = -3.0 * torch.rand(H, n, D, generator=g)          # mean -1.5 per step
    assert log_decay.sum(1).max() < -200
    ref = at.kernel_map(q, k, phi, causal=True, log_decay=log_decay) @ v
    for method in li.METHODS:
        for chunk in (16, 64):
            out = li.linear_attention(q, k, v, phi, causal=True, method=method, chunk_size=chunk, log_decay=log_decay)
            assert torch.isfinite(out).all(), method
            assert rel_err(out, ref) <= 1e-5, (method, chunk)


def test_batch_and_head_dims_and_multiple_blocks(monkeypatch):
    """Several leading dimensions, and a block size small enough that the walk takes many blocks."""
    monkeypatch.setattr(li, "BLOCK_ELEMENTS", 64 * 16)
    q, k, v = inputs(203, seed=5, batch=(3, H))
    for name in ("elu1", "cosformer"):
        phi = fm.create(name, D)
        for causal in (False, True):
            ref, ok = reference(q, k, v, phi, causal)
            out = li.linear_attention(q, k, v, phi, causal=causal, method="chunked", chunk_size=16)
            assert_matches(out, ref, ok, (name, causal))
        gates = decay_for("gla", 203, phi.num_features).unsqueeze(0).expand(3, -1, -1, -1)
        ref, ok = reference(q, k, v, phi, True, gates)
        out = li.linear_attention(q, k, v, phi, causal=True, method="chunked", chunk_size=16, log_decay=gates)
        assert_matches(out, ref, ok, name)


def test_cumsum_reference_agrees():
    q, k, v = inputs(77, seed=6)
    phi = fm.create("elu1", D)
    ref = at.kernel_map(q, k, phi, causal=True) @ v
    assert rel_err(li.causal_cumsum(phi(q, is_query=True), phi(k), v), ref) <= 1e-5


@pytest.mark.parametrize("method", li.METHODS)
@pytest.mark.parametrize("decay_kind", ["none", "gla"])
def test_causal_outputs_are_prefix_invariant(method, decay_kind):
    n, cut = 150, 70
    q, k, v = inputs(n, seed=7)
    phi = fm.create("favor_plus", D, num_features=16, seed=1)
    log_decay = decay_for(decay_kind, n, phi.num_features)
    before = li.linear_attention(q, k, v, phi, causal=True, method=method, chunk_size=64, log_decay=log_decay)
    q2, k2, v2 = q.clone(), k.clone(), v.clone()
    q2[..., cut:, :] = torch.randn_like(q2[..., cut:, :]) * 5
    k2[..., cut:, :] = torch.randn_like(k2[..., cut:, :]) * 5
    v2[..., cut:, :] = torch.randn_like(v2[..., cut:, :]) * 5
    after = li.linear_attention(q2, k2, v2, phi, causal=True, method=method, chunk_size=64, log_decay=log_decay)
    assert (after[..., :cut, :] - before[..., :cut, :]).abs().max() <= 1e-6
    assert not torch.allclose(after[..., cut:, :], before[..., cut:, :])


def test_recurrent_state_is_the_rnn_of_the_article():
    """S_t = S_{t-1} + phi(k_t) v_t^T and o_t = phi(q_t) S_t / phi(q_t) z_t, one step at a time."""
    q, k, v = inputs(20, seed=8, batch=())
    phi = fm.create("elu1", D)
    state = li.RecurrentState.empty(1, D, DV)
    fq, fk = phi(q, is_query=True), phi(k)
    outs = []
    for t in range(20):
        state.step(fk[t:t + 1], v[t:t + 1])
        outs.append(state.read(fq[t:t + 1]))
    torch.testing.assert_close(state.s[0], fk.T @ v, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(torch.cat(outs), li.linear_attention(q, k, v, phi, causal=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs,arg", [
    (dict(v=torch.randn(H, 9, DV)), "v"),
    (dict(method="magic"), "method"),
    (dict(chunk_size=0), "chunk_size"),
    (dict(log_decay=-0.1, causal=False), "log_decay"),
    (dict(q=torch.randn(H, 10, D + 1)), "k"),
    (dict(v=torch.full((H, 10, DV), float("nan"))), "v"),
])
def test_bad_input_names_the_argument(kwargs, arg):
    q, k, v = inputs(10)
    args = dict(q=q, k=k, v=v, feature_map=fm.create("elu1", D))
    args.update(kwargs)
    with pytest.raises(ValueError, match=arg):
        li.linear_attention(**args)


def test_missing_values_are_an_error():
    q, k, _ = inputs(4)
    with pytest.raises(ValueError, match="v"):
        li.linear_attention(q, k, None, fm.create("elu1", D))


# ----------------------------------------------------------------------------- gated segments


def _gates(kind, shape, seed):
    """Log gates of several characters: mild (GLA-like), strong (cumulative far below -200),
    and resets (isolated tokens that wipe the state)."""
    g = torch.Generator().manual_seed(seed)
    if kind == "mild":
        return torch.nn.functional.logsigmoid(torch.randn(*shape, generator=g) + 4.0)
    if kind == "strong":
        return -3.0 * torch.rand(*shape, generator=g)
    a = -0.05 * torch.rand(*shape, generator=g)
    resets = torch.rand(*shape[:-1], 1, generator=g) < 0.05
    return torch.where(resets, torch.full_like(a, -1000.0), a)


@pytest.mark.parametrize("per_feature", [False, True])
@pytest.mark.parametrize("kind", ["mild", "strong", "reset"])
@pytest.mark.parametrize("n,chunk", [(1, 16), (17, 16), (64, 64), (203, 16), (300, 64)])
def test_gated_chunked_equals_the_reference(per_feature, kind, n, chunk):
    """Per-token scalar gates (..., N, 1) and per-feature gates (..., N, m), on several batch
    shapes, lengths that are not a multiple of the chunk, and N = 1."""
    for batch in ((H,), (2, 3)):
        q, k, v = inputs(n, seed=n + chunk, batch=batch)
        phi = fm.create("elu1", D)
        a = _gates(kind, (*batch, n, phi.num_features if per_feature else 1), seed=n)
        ref = at.kernel_map(q, k, phi, causal=True, log_decay=a) @ v
        out = li.linear_attention(q, k, v, phi, causal=True, method="chunked", chunk_size=chunk, log_decay=a)
        assert torch.isfinite(out).all()
        assert rel_err(out, ref) <= 1e-5, (batch, kind)


def test_strong_scalar_gates_below_minus_200_stay_exact():
    n = 400
    q, k, v = inputs(n, seed=11)
    phi = fm.create("favor_plus", D, num_features=16, seed=3)
    a = _gates("strong", (H, n, 1), seed=12)
    assert a.sum(-2).max() < -200
    ref = at.kernel_map(q, k, phi, causal=True, log_decay=a) @ v
    for chunk in (16, 64):
        out = li.linear_attention(q, k, v, phi, causal=True, method="chunked", chunk_size=chunk, log_decay=a)
        assert torch.isfinite(out).all() and rel_err(out, ref) <= 1e-5, chunk


@pytest.mark.parametrize("span", [0.5, 5.0, 60.0])
def test_segments_cover_the_sequence_and_bound_the_gate_span(span, monkeypatch):
    """Every token in exactly one segment, none longer than a block, and inside each the
    log gate after the first token sums to >= -GATE_SPAN for every row and feature; the
    output is the same whatever the span (a small span means many segments)."""
    monkeypatch.setattr(li, "GATE_SPAN", span)
    n, block, chunk = 500, 128, 16
    a = _gates("mild", (3, n, D), seed=13) * torch.linspace(0.1, 5.0, D)      # features decay unevenly
    segments = [(s + b, e + b) for b in range(0, n, block)
                for s, e in li._segments(a[:, b:b + block], a[:, b:b + block].double().cumsum(1), chunk, block)]
    assert segments[0][0] == 0 and segments[-1][1] == n
    assert all(s1 == s0 for (_, s0), (s1, _) in zip(segments, segments[1:]))
    for start, stop in segments:
        assert 0 < stop - start <= block
        assert (a[:, start + 1:stop].sum(1) >= -span - 1e-9).all()
        if stop < n and stop - start > chunk:
            assert (stop - start) % chunk == 0
    q, k, v = inputs(n, seed=14, batch=(3,))
    phi = fm.create("elu1", D)
    ref = at.kernel_map(q, k, phi, causal=True, log_decay=a) @ v
    out = li.linear_attention(q, k, v, phi, causal=True, method="chunked", chunk_size=chunk, log_decay=a)
    assert rel_err(out, ref) <= 1e-5


def test_zero_decay_is_the_ungated_form():
    q, k, v = inputs(130, seed=15)
    phi = fm.create("elu1", D)
    plain = li.linear_attention(q, k, v, phi, causal=True)
    for zero in (0.0, torch.zeros(H, 130, 1), torch.zeros(H, 130, D)):
        torch.testing.assert_close(li.linear_attention(q, k, v, phi, causal=True, log_decay=zero), plain,
                                   rtol=1e-6, atol=1e-6)


def test_noncausal_forms_over_many_blocks_and_batch_dims(monkeypatch):
    monkeypatch.setattr(li, "BLOCK_ELEMENTS", 64 * 16)
    q, k, v = inputs(203, seed=16, batch=(3, H))
    for name in ("elu1", "relu", "taylor2", "favor_plus", "cosformer"):   # positive kernels: well conditioned
        phi = fm.create(name, D)
        ref, ok = reference(q, k, v, phi, False)
        for method in ("parallel", "chunked"):
            assert_matches(li.linear_attention(q, k, v, phi, causal=False, method=method), ref, ok, (name, method))


@pytest.mark.parametrize("causal,method,gated", [(False, "parallel", False), (True, "chunked", False),
                                                 (True, "chunked", True)])
def test_gradients_flow_and_match_the_reference(causal, method, gated):
    """Autograd through the fast forms gives the reference's gradients (buffers and
    in-place work switch off while autograd records)."""
    n = 70
    q, k, v = (t.double().requires_grad_() for t in inputs(n, seed=17))
    phi = fm.create("elu1", D)
    a = _gates("mild", (H, n, D), seed=18).double().requires_grad_() if gated else None
    out = li.linear_attention(q, k, v, phi, causal=causal, method=method, chunk_size=16, log_decay=a)
    wanted = [q, k, v] + ([a] if gated else [])
    grads = torch.autograd.grad(out.square().sum(), wanted)
    ref = at.kernel_map(q, k, phi, causal=causal, log_decay=a) @ v
    ref_grads = torch.autograd.grad(ref.square().sum(), wanted)
    for got, want in zip(grads, ref_grads):
        torch.testing.assert_close(got, want, rtol=1e-7, atol=1e-9)


LINEAR_MAPS = [name for name in fm.names() if not hasattr(fm.create(name, D), "pair_weights")]


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("n", [1, 7, 64, 203, 256])
def test_noncausal_single_sequence_cut_between_threads(monkeypatch, threads, n):
    """A single sequence has its two big matmuls cut into one slice of rows per thread; a
    block whose length the thread count does not divide takes the plain product."""
    monkeypatch.setattr(li, "BLOCK_ELEMENTS", 64 * 16)             # blocks of 128 rows here
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        q, k, v = inputs(n, seed=n, batch=(1,))
        for name in ("elu1", "favor_plus", "taylor2"):
            phi = fm.create(name, D)
            ref, ok = reference(q, k, v, phi, False)
            assert_matches(li.linear_attention(q, k, v, phi, causal=False), ref, ok, (name, threads, n))
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("name", LINEAR_MAPS)
@pytest.mark.parametrize("where", ["q", "k", "v"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_noncausal_refuses_a_nonfinite_input_in_any_block(monkeypatch, name, where, value):
    """The non-causal form checks finiteness on numbers it computes anyway (and, for maps
    that do not carry a non-finite input into their features, on block sums): one bad
    element anywhere, in the first, a middle or the last partial block, must still raise."""
    monkeypatch.setattr(li, "BLOCK_ELEMENTS", 64 * 16)
    phi = fm.create(name, D)
    for batch in ((1,), (2,)):
        for row in (0, 130, 202):
            q, k, v = inputs(203, seed=row, batch=batch)
            t = dict(q=q, k=k, v=v)[where]
            t[-1, row, row % t.shape[-1]] = value
            with pytest.raises(ValueError, match=f"{where}: contains 1 NaN"):
                li.linear_attention(q, k, v, phi, causal=False)


def test_noncausal_overflow_of_finite_inputs_is_a_result_not_an_error():
    """Finite inputs so large that the sums overflow are not refused: the inf/NaN they
    produce is the result's own, as in the plain form."""
    q, k, v = inputs(50, batch=(1,))
    v = v * 1e38
    phi = fm.create("elu1", D)
    out = li.linear_attention(q, k, v, phi, causal=False)
    plain = li.parallel(phi(q, is_query=True), phi(k), v, False)
    assert not torch.isfinite(plain).all()
    assert torch.equal(torch.isfinite(out), torch.isfinite(plain))


@pytest.mark.parametrize("name", [n for n in LINEAR_MAPS if fm.create(n, D).nonfinite_rows])
def test_maps_that_say_so_give_a_nonfinite_feature_for_a_nonfinite_input(name):
    phi = fm.create(name, D)
    x = torch.randn(2, 30, D)
    values = torch.tensor([float("nan"), float("inf"), -float("inf")]).repeat(10)
    x[1, torch.arange(30), torch.randint(D, (30,))] = values
    writer = getattr(phi, "features_into", None)
    for is_query in (False, True):
        outs = [phi(x, is_query=is_query)]
        if writer is not None:
            outs.append(writer(x, is_query, torch.empty(2, 30, phi.num_features), torch.empty(2, 30, D)))
        for f in outs:
            assert (~torch.isfinite(f[1])).any(dim=-1).all(), (name, is_query)
            assert torch.isfinite(f[0]).all()


def test_relu_does_not_say_so():
    """relu(-inf) = 0: a flag on relu would let a -inf key through unnoticed."""
    assert not fm.create("relu", D).nonfinite_rows
    assert torch.isfinite(fm.create("relu", D)(torch.full((1, D), -float("inf")))).all()
