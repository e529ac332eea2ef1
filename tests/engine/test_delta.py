"""The delta rule (plain and gated): both fast forms held to the float64 loop, recall by
overwriting, one step's parts, and the errors bad input gets."""

import pytest
import torch
import torch.nn.functional as F

from explorer.mechanisms.deltanet import forms as dl

B, H, DK, DV = 2, 3, 16, 24


def rel_err(out, ref):
    """Largest absolute difference over the largest reference value."""
    return float((out.double() - ref).abs().max() / ref.abs().max())


def inputs(n, gate="none", seed=0, dk=DK, dv=DV):
    """L2-normalised keys (as DeltaNet's callers make them), beta in (0, 1), and a log
    decay: none, mild (forget gates near 1) or strong (down to exp(-30) per token)."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, H, n, dk, generator=g)
    k = F.normalize(torch.randn(B, H, n, dk, generator=g), dim=-1)
    v = torch.randn(B, H, n, dv, generator=g)
    beta = torch.rand(B, H, n, generator=g)
    log_decay = {"none": None,
                 "mild": F.logsigmoid(torch.randn(B, H, n, generator=g) + 3.0),
                 "strong": -30.0 * torch.rand(B, H, n, generator=g)}[gate]
    return q, k, v, beta, log_decay


@pytest.mark.parametrize("gate", ["none", "mild", "strong"])
@pytest.mark.parametrize("n", [1, 37, 301])
def test_both_forms_equal_the_float64_loop(n, gate):
    q, k, v, beta, log_decay = inputs(n, gate)
    ref = dl.delta_rule_reference(q, k, v, beta, log_decay)
    assert ref.shape == (B, H, n, DV) and ref.dtype == torch.float64
    out = dl.delta_rule(q, k, v, beta, log_decay, method="recurrent")
    assert out.dtype == torch.float32 and rel_err(out, ref) <= 2e-5
    for chunk in (1, 16, 32, 64, 500):                  # none of 16, 32, 64 divides 37 or 301
        out = dl.delta_rule(q, k, v, beta, log_decay, method="chunked", chunk_size=chunk)
        assert out.shape == (B, H, n, DV)
        assert rel_err(out, ref) <= 2e-5, f"chunk {chunk}"


def test_chunked_carries_the_state_across_blocks(monkeypatch):
    """A long sequence is walked in several blocks of chunks (made small here); the state
    must survive the seams, including a last block that ends mid-chunk."""
    n, d = 1000, 32
    monkeypatch.setattr(dl, "BLOCK_ELEMENTS", 192 * 2 * (d + d))   # 192 tokens x 2 heads x (d_k + d_v)
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 2, n, d, generator=g) for _ in range(3))
    k = F.normalize(k, dim=-1)
    beta = torch.rand(1, 2, n, generator=g)
    log_decay = F.logsigmoid(torch.randn(1, 2, n, generator=g) + 5.0)
    for a in (None, log_decay):
        ref = dl.delta_rule_reference(q, k, v, beta, a)
        assert rel_err(dl.delta_rule(q, k, v, beta, a, chunk_size=64), ref) <= 2e-5


@pytest.mark.parametrize("c", [1, 5, 16, 37, 64, 100])
def test_unit_lower_inverse(c):
    g = torch.Generator().manual_seed(c)
    a = torch.randn(3, c, c, generator=g, dtype=torch.float64) * 0.3
    want = torch.linalg.inv(torch.eye(c, dtype=torch.float64) + a.tril(-1))
    assert torch.allclose(dl.unit_lower_inverse(a), want, rtol=1e-10, atol=1e-10)   # reads tril(a, -1) only


def test_float64_in_float64_out():
    q, k, v, beta, log_decay = (t.double() if t is not None else None for t in inputs(40, "mild"))
    out = dl.delta_rule(q, k, v, beta, log_decay, chunk_size=16)
    assert out.dtype == torch.float64
    assert rel_err(out, dl.delta_rule_reference(q, k, v, beta, log_decay)) <= 1e-12


def test_leading_dimensions_and_numbers_for_beta_and_decay():
    q, k, v, _, _ = inputs(20)
    ref = dl.delta_rule_reference(q, k, v, torch.full((B, H, 20), 0.5), torch.full((B, H, 20), -0.1))
    assert rel_err(dl.delta_rule(q, k, v, 0.5, -0.1), ref) <= 2e-5
    one = dl.delta_rule(q[0, 0], k[0, 0], v[0, 0], 0.5, -0.1, method="recurrent")   # (N, d)
    assert rel_err(one, ref[0, 0]) <= 2e-5


@pytest.mark.parametrize("method", dl.METHODS)
@pytest.mark.parametrize("gated", [False, True])
def test_overwriting_recalls_the_newest_value_exactly(method, gated):
    """beta = 1, orthonormal keys: every pair is stored, then half of them are rewritten with
    new values. Reading the state with each key returns exactly the newest value. An
    additive state would return the old and new values summed."""
    d = 8
    g = torch.Generator().manual_seed(1)
    keys = torch.linalg.qr(torch.randn(d, d, generator=g))[0].T             # rows orthonormal
    old, new = torch.randn(d, DV, generator=g), torch.randn(d // 2, DV, generator=g)
    write_k = torch.cat([keys, keys[: d // 2], torch.zeros(d, d)])          # then d reads
    write_v = torch.cat([old, new, torch.zeros(d, DV)])
    beta = torch.cat([torch.ones(d + d // 2), torch.zeros(d)])              # reads write nothing
    query = torch.cat([torch.zeros(d + d // 2, d), keys])
    log_decay = torch.zeros(len(beta)) if gated else None
    out = dl.delta_rule(query, write_k, write_v, beta, log_decay, method=method, chunk_size=5)
    recalled = out[-d:]
    expected = torch.cat([new, old[d // 2:]])
    assert (recalled - expected).abs().max() <= 1e-5


def test_delta_step_parts_add_up_to_the_recurrence():
    q, k, v, beta, log_decay = inputs(12, "mild")
    s = torch.zeros(B, H, DK, DV)
    outs = []
    for t in range(12):
        new, erased, written = dl.delta_step(s, k[..., t, :], v[..., t, :], beta[..., t], log_decay[..., t])
        assert torch.allclose(new, torch.exp(log_decay[..., t, None, None]) * (s - erased) + written, atol=1e-6)
        s = new
        outs.append((q[..., t, None, :] @ s)[..., 0, :])
    ref = dl.delta_rule_reference(q, k, v, beta, log_decay)
    assert rel_err(torch.stack(outs, dim=-2), ref) <= 2e-5


def test_delta_step_erases_what_the_key_reads():
    """With beta = 1 and a unit key, S - erased reads zero along k: the old value is gone,
    and what is written is exactly k v^T."""
    g = torch.Generator().manual_seed(4)
    s = torch.randn(DK, DV, generator=g)
    k = F.normalize(torch.randn(DK, generator=g), dim=0)
    v = torch.randn(DV, generator=g)
    new, erased, written = dl.delta_step(s, k, v, 1.0)
    assert (k @ (s - erased)).abs().max() <= 1e-5
    assert torch.allclose(written, torch.outer(k, v))
    assert torch.allclose(k @ new, v, atol=1e-5)
    assert erased.abs().max() > 0.1                   # it did remove something


@pytest.mark.parametrize("kwargs, needle", [
    (dict(method="parallel"), "method"),
    (dict(chunk_size=0), "chunk_size"),
    (dict(beta=torch.rand(B, H, 7)), "beta"),
    (dict(beta=torch.tensor([[[float("nan")] * 10] * H] * B)), "beta"),
    (dict(log_decay=torch.full((B, H, 10), 0.5)), "log_decay"),
    (dict(log_decay=torch.full((B, H, 10), -float("inf"))), "log_decay"),
    (dict(log_decay=torch.zeros(B, H, 11)), "log_decay"),
    (dict(v=torch.randn(B, H, 9, DV)), "v"),
    (dict(k=torch.randn(B, H, 10, DK + 1)), "k"),
    (dict(q=torch.full((B, H, 10, DK), float("inf"))), "q"),
])
def test_bad_input_is_refused_with_a_sentence_naming_it(kwargs, needle):
    q, k, v, beta, _ = inputs(10)
    args = dict(q=q, k=k, v=v, beta=beta, log_decay=None)
    args.update(kwargs)
    with pytest.raises(ValueError) as err:
        dl.delta_rule(**args)
    assert str(err.value).startswith(needle + ":")
    assert len(str(err.value)) < 200


def test_delta_step_refuses_bad_input():
    with pytest.raises(ValueError, match="^state, k, v"):
        dl.delta_step(torch.zeros(4, 3), torch.zeros(5), torch.zeros(3), 1.0)
    with pytest.raises(ValueError, match="^log_decay"):
        dl.delta_step(torch.zeros(4, 3), torch.zeros(4), torch.zeros(3), 1.0, 0.2)
    with pytest.raises(ValueError, match="^beta"):
        dl.delta_step(torch.zeros(4, 3), torch.zeros(4), torch.zeros(3), float("nan"))
