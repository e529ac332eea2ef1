"""Our linear attention beside public implementations: one process, interleaved rounds.

The peers are performer-pytorch's non-causal ``linear_attention`` and the plain-PyTorch
forms of flash-linear-attention (fla-core): ``naive_chunk_linear_attn`` (causal),
``naive_chunk_simple_gla`` (one gate per token), ``naive_recurrent_gla`` (one gate per
key feature, its only CPU form) and ``delta_rule_chunkwise`` (the delta rule, chunked with
the same WY / UT transform as ours). Neither library is a dependency: when they cannot be
imported, ``load_peers`` says why and the comparison is not run.

Each round times every entry once (and a dense matmul), in an order shuffled per round (a
seeded shuffle: no entry always runs right after the matmul, whose operands push the others'
data out of cache), so background load hits all of them alike; medians are reported, with each of our entries' ratio to the best peer of its
mode (peer time / our time: above 1 means we are faster). On CUDA every timing is
synchronised (``torch.utils.benchmark``'s timer does it).

Shapes: batch 1, one head, N tokens, d = m, elu+1 features, float32. The delta rule runs
at min(N, 4096) tokens (FLA's chunked form does O(C^2) work per token in Python-level
loops), with L2-normalised keys, beta in (0, 1), and q scaled by d^-1/2 for ours as FLA
does inside; our recurrent form runs beside it, for the chunked form's speed-up. The peers
do less work in two modes (FLA's gated forms have no feature map and no normaliser), which
the report says.
"""

from __future__ import annotations

import json
import math
import random
import statistics
import warnings
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F
from torch.utils.benchmark import Timer

from .. import maps as feature_maps
from ..mechanisms.deltanet import forms as delta
from ..mechanisms.linear import forms as linear

MODES = ("non-causal", "causal", "gated", "gla", "delta")
MODE_NOTES = {
    "gated": "FLA's simple_gla has no feature map and no normaliser",
    "gla": "FLA's recurrent_gla has no feature map and no normaliser",
    "delta": f"at min(N, 4096) tokens, keys L2-normalised; FLA's chunkwise form with chunks of 32 "
             f"(as in side_by_side.py), ours with {delta.CHUNK_SIZE}",
}
DELTA_MAX_N = 4096


@dataclass
class Entry:
    mode: str
    name: str
    fn: Callable[[], torch.Tensor]
    ours: bool


def load_peers() -> tuple[dict | None, str]:
    """({name: function} of the public implementations, "") or (None, why not)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # fla warns that Triton is unavailable on CPU
            from fla.ops.delta_rule.naive import delta_rule_chunkwise
            from fla.ops.gla.naive import naive_recurrent_gla
            from fla.ops.linear_attn.naive import naive_chunk_linear_attn
            from fla.ops.simple_gla.naive import naive_chunk_simple_gla
            from performer_pytorch.performer_pytorch import linear_attention
    except Exception as exc:  # ImportError, or a broken install raising anything else
        return None, (f"performer-pytorch and fla-core are not importable here ({type(exc).__name__}: {exc}); "
                      "they are not dependencies of the explorer: build their venv with "
                      "bash scripts/install_peers.sh and run this command with its python "
                      "(~/.cache/peers-venv/bin/python -m explorer bench --peers)")
    return {"performer": linear_attention, "fla_chunk": naive_chunk_linear_attn,
            "fla_simple_gla": naive_chunk_simple_gla, "fla_recurrent_gla": naive_recurrent_gla,
            "fla_delta": delta_rule_chunkwise}, ""


def _elu1(x):
    return F.elu(x) + 1


def build_entries(peers: dict, n: int, head_dim: int = 64, device="cpu", seed: int = 0) -> list[Entry]:
    """The timed calls: ours and the peers on the same inputs, mode by mode."""
    d = head_dim
    gen = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 1, n, d, generator=gen).to(device) for _ in range(3))     # (B, H, N, D)
    qn, kn, vn = (t.transpose(1, 2).contiguous() for t in (q, k, v))                    # (B, N, H, D): fla
    gate = F.logsigmoid(torch.randn(1, n, 1, generator=gen) + 4.0).to(device)           # (B, N, H)
    gate_f = F.logsigmoid(torch.randn(1, n, 1, d, generator=gen) + 4.0).to(device)      # (B, N, H, D)
    gate_ours = gate.transpose(1, 2).unsqueeze(-1)                                      # (B, H, N, 1)
    gate_f_ours = gate_f.transpose(1, 2).contiguous()                                   # (B, H, N, D)
    phi = feature_maps.create("elu1", head_dim=d).to(device)
    # The delta rule: FLA scales q by d^-1/2 inside, so ours gets the same scaled q.
    nd = min(n, DELTA_MAX_N)
    qd, kd, vd = q[:, :, :nd], F.normalize(k[:, :, :nd], dim=-1), v[:, :, :nd]
    beta = torch.sigmoid(torch.randn(1, 1, nd, generator=gen)).to(device)
    qd_scaled = qd * d ** -0.5

    def ours(causal, method, log_decay=None):
        return lambda: linear.linear_attention(q, k, v, phi, causal=causal, method=method, log_decay=log_decay)

    def ours_delta(method):
        return lambda: delta.delta_rule(qd_scaled, kd, vd, beta, method=method)

    return [
        Entry("non-causal", "ours parallel, non-causal", ours(False, "parallel"), True),
        Entry("non-causal", "performer linear_attention", lambda: peers["performer"](_elu1(q), _elu1(k), v), False),
        Entry("causal", "ours chunked, causal", ours(True, "chunked"), True),
        Entry("causal", "fla naive_chunk_linear_attn",
              lambda: peers["fla_chunk"](_elu1(qn), _elu1(kn), vn, scale=1.0, normalize=True), False),
        Entry("gated", "ours chunked, scalar gate", ours(True, "chunked", gate_ours), True),
        Entry("gated", "fla naive_chunk_simple_gla", lambda: peers["fla_simple_gla"](qn, kn, vn, gate)[0], False),
        Entry("gla", "ours chunked, per-feature gates", ours(True, "chunked", gate_f_ours), True),
        Entry("gla", "fla naive_recurrent_gla", lambda: peers["fla_recurrent_gla"](qn, kn, vn, gate_f)[0], False),
        Entry("delta", "ours chunked, delta rule", ours_delta("chunked"), True),
        Entry("delta", "ours recurrent, delta rule", ours_delta("recurrent"), True),
        Entry("delta", "fla delta_rule_chunkwise",
              lambda: peers["fla_delta"](qd, kd, vd, beta, chunk_size=min(32, nd))[0], False),
    ]


def agreement(entries: list[Entry]) -> dict:
    """Largest relative difference between ours and the peer that computes the same thing
    (non-causal: performer; causal: FLA's chunked form with normalize=True; the delta rule:
    FLA's chunkwise form)."""
    by_name = {e.name: e for e in entries}
    out = {}
    for ours, peer in (("ours parallel, non-causal", "performer linear_attention"),
                       ("ours chunked, causal", "fla naive_chunk_linear_attn"),
                       ("ours chunked, delta rule", "fla delta_rule_chunkwise")):
        a, b = by_name[ours].fn().double(), by_name[peer].fn().double()
        b = b.reshape(a.shape)          # one batch, one head: (B, N, H, D) and (B, H, N, D) agree
        out[ours] = float(((a - b).abs().max() / b.abs().max()).item())
    return out


def _once(fn: Callable, device) -> float:
    """Seconds for one call, synchronised on an accelerator, at the current thread count."""
    timer = Timer(stmt="fn()", globals={"fn": fn}, num_threads=torch.get_num_threads())
    return timer.timeit(1).mean


def measure(entries: list[Entry], rounds: int = 9, device="cpu", matmul_size: int = 2048, seed: int = 0) -> dict:
    """Interleaved rounds. Returns {"times": {name: [s, ...]}, "matmul_gflops": rate}."""
    dev = torch.device(device)
    gen = torch.Generator().manual_seed(1)
    a = torch.randn(matmul_size, matmul_size, generator=gen).to(dev)
    b = torch.randn(matmul_size, matmul_size, generator=gen).to(dev)
    matmul = lambda: a @ b  # noqa: E731
    for e in entries:
        e.fn()                                       # warm-up
    times = {e.name: [] for e in entries}
    mm = []
    order = random.Random(seed)
    for _ in range(rounds):
        mm.append(_once(matmul, dev))
        for e in order.sample(entries, len(entries)):
            times[e.name].append(_once(e.fn, dev))
    return {"times": times, "matmul_gflops": 2 * matmul_size ** 3 / statistics.median(mm) / 1e9}


def ratios(entries: list[Entry], times: dict) -> dict:
    """Each of our entries' ratio to the best peer of its mode (peer time / ours), our
    gated entries' time over our ungated causal time, and the delta rule's recurrent time
    over its chunked time (the chunked form's speed-up)."""
    med = {name: statistics.median(ts) for name, ts in times.items()}
    best = {}
    for e in entries:
        if not e.ours:
            best[e.mode] = min(best.get(e.mode, math.inf), med[e.name])
    out = {e.name: best[e.mode] / med[e.name] for e in entries if e.ours and e.mode in best}
    ungated = med["ours chunked, causal"]
    out["ours scalar gate / ours ungated (time)"] = med["ours chunked, scalar gate"] / ungated
    out["ours per-feature gates / ours ungated (time)"] = med["ours chunked, per-feature gates"] / ungated
    out["ours recurrent / ours chunked, delta rule (time)"] = (med["ours recurrent, delta rule"]
                                                               / med["ours chunked, delta rule"])
    return out


def report(entries: list[Entry], result: dict, n: int, head_dim: int, device, rounds: int,
           agree: dict | None = None) -> str:
    """The side-by-side table, the notes, and a last line of JSON with the ratios."""
    dev = torch.device(device)
    rate = result["matmul_gflops"]
    med = {name: statistics.median(ts) for name, ts in result["times"].items()}
    r = ratios(entries, result["times"])
    where = (f"cuda ({torch.cuda.get_device_name(dev)}), timings synchronised" if dev.type == "cuda"
             else f"cpu, {torch.get_num_threads()} threads")
    lines = [f"N={n} d=m={head_dim} float32 elu+1; {where}; {rounds} interleaved rounds; "
             f"dense matmul {rate:.0f} GFLOP/s",
             f"{'mode':10s} {'entry':34s} {'median':>10s}"]
    for e in entries:
        t = med[e.name]
        line = f"{e.mode:10s} {e.name:34s} {t * 1e3:7.2f} ms"
        if e.mode == "non-causal":
            line += f"  {4 * n * head_dim * head_dim / t / 1e9 / rate:5.1%} of matmul rate"
        if e.name in r:
            line += f"  {r[e.name]:5.2f}x the best peer"
        lines.append(line)
    lines.append("ratios: peer time / our time (above 1: ours is faster); gated / ungated and "
                 "recurrent / chunked: our times")
    for mode, note in MODE_NOTES.items():
        lines.append(f"note ({mode}): {note}")
    if agree:
        lines.append("agreement with the peer computing the same output (max |diff| / max |peer|): "
                     + ", ".join(f"{name}: {x:.1e}" for name, x in agree.items()))
    lines.append(json.dumps({name: round(x, 3) for name, x in r.items()}))
    return "\n".join(lines)


def run(n: int = 16384, head_dim: int = 64, rounds: int = 9, device: str | None = None) -> tuple[int, str]:
    """(exit status, text): the whole comparison, or a note that the peers are missing."""
    if n < 64 or n % 64:
        raise ValueError(f"n: FLA's chunked forms need a multiple of their chunk size 64, got {n}")
    peers, why = load_peers()
    if peers is None:
        return 0, f"peers comparison skipped: {why}"
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    entries = build_entries(peers, n, head_dim, device)
    agree = agreement(entries)
    result = measure(entries, rounds, device)
    return 0, report(entries, result, n, head_dim, device, rounds, agree)
