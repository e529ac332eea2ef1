"""The benchmark harness: it must time the right functions and report their numbers honestly.

Timing itself is not tested (a loaded CI machine makes any bound flaky); what is tested is
that each timed function computes the reference output, and that the bookkeeping around
the times (slopes, crossover, skips, progress, cancel, files, memory probe) is right.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from explorer.diagnostics import attention
from explorer.measure import bench
from explorer import maps as feature_maps
from explorer.__main__ import main

ROOT = Path(__file__).resolve().parents[2]
FAST = {"repeats": 1, "warmup": 0, "matmul_size": 128}


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # These tests check bookkeeping, not speed; one thread avoids OpenMP barriers spinning
    # against other processes on a shared 2-core machine.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _qkv(n=100, d=16, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(1, 1, n, d, generator=gen, dtype=torch.float64).float() for _ in range(3))


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("method", bench.METHODS)
def test_timed_functions_compute_the_reference(method, causal):
    # N = 100 is not a multiple of the chunk size: the padded last chunk is exercised too.
    q, k, v = _qkv()
    fmap = feature_maps.create("elu1", 16)
    eff = bench.effective_causal(method, causal)
    if eff is None:
        assert method in bench.CAUSAL_ONLY and not causal
        return
    out = bench.method_function(method, fmap, eff)(q, k, v)
    q64, k64, v64 = (t.double() for t in (q, k, v))
    if method in bench.QUADRATIC:
        ref = attention.softmax_map(q64, k64, eff) @ v64
    else:
        ref = attention.kernel_map(q64, k64, fmap.double(), eff) @ v64
    assert out.shape == ref.shape
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5)


def test_sdpa_matches_naive_softmax_in_float32():
    q, k, v = _qkv(n=128, d=32, seed=3)
    for causal in (False, True):
        naive = bench.method_function("softmax_naive", None, causal)(q, k, v)
        sdpa = bench.method_function("sdpa", None, causal)(q, k, v)
        assert (naive - sdpa).abs().max() < 1e-5


def test_effective_causal_is_honest():
    assert bench.effective_causal("linear_parallel", True) is False
    assert bench.effective_causal("linear_chunked", True) is True
    assert bench.effective_causal("linear_chunked", False) is False
    assert bench.effective_causal("linear_recurrent", False) is None
    with pytest.raises(ValueError, match="method"):
        bench.effective_causal("flash", True)


def _rows(method, ns, times, skipped_at=()):
    return [{"method": method, "n": n, "time_ms": t, "skipped": "x" if n in skipped_at else None}
            for n, t in zip(ns, times)]


def test_slopes_recover_a_known_power_law():
    ns = [256, 512, 1024, 2048, 4096]
    rows = _rows("a", ns, [3e-4 * n ** 1.5 for n in ns]) + _rows("b", ns, [0.01 * n for n in ns])
    rows += _rows("c", [64], [1.0])                               # one point: no slope
    rows += _rows("a", [8192], [1e9], skipped_at=(8192,))          # skipped rows do not count
    slopes = bench.SweepResult(rows=rows).slopes()
    assert slopes["a"] == pytest.approx(1.5, abs=1e-9)
    assert slopes["b"] == pytest.approx(1.0, abs=1e-9)
    assert "c" not in slopes
    # The range filter: a curve that bends is fitted only where asked.
    bent = _rows("d", ns, [1.0, 1.0, 1.0, 2.0, 4.0])
    assert bench.SweepResult(rows=bent).slopes(n_min=1024)["d"] == pytest.approx(1.0)
    assert bench.SweepResult(rows=bent).slopes(n_max=1024)["d"] == pytest.approx(0.0)


def test_crossover_interpolates_in_log_log():
    ns = [16, 32, 64, 128, 256]
    rows = _rows("sdpa", ns, [1e-3 * n * n for n in ns]) + _rows("linear_chunked", ns, [0.1 * n for n in ns])
    result = bench.SweepResult(rows=rows)
    assert result.crossover() == pytest.approx(100.0, rel=1e-9)     # 1e-3 n^2 = 0.1 n
    n_star, text = result.crossover_info()
    assert "overtakes" in text and "64" in text and "128" in text

    never = bench.SweepResult(rows=_rows("sdpa", ns, [1.0] * 5) + _rows("linear_chunked", ns, [2.0] * 5))
    assert never.crossover() is None
    assert "stays faster" in never.crossover_info()[1]
    always = bench.SweepResult(rows=_rows("sdpa", ns, [2.0] * 5) + _rows("linear_chunked", ns, [1.0] * 5))
    assert always.crossover() is None
    assert "already faster" in always.crossover_info()[1]
    assert bench.SweepResult(rows=[]).crossover() is None


def test_memory_estimate_is_monotone_and_quadratic_where_it_should_be():
    for method in bench.METHODS:
        sizes = [bench.estimate_memory_bytes(method, n, 64, 64) for n in (256, 1024, 4096, 16384, 65536)]
        assert sizes == sorted(sizes) and sizes[0] < sizes[-1], method
        assert bench.estimate_memory_bytes(method, 1024, 64, batch_heads=4) > sizes[1]
    # N x N: a 4x longer sequence needs ~16x the memory; the cumsum reference ~4x.
    assert bench.estimate_memory_bytes("softmax_naive", 16384, 64) > 15 * bench.estimate_memory_bytes("softmax_naive", 4096, 64)
    assert bench.estimate_memory_bytes("softmax_naive", 16384, 64) < 4 << 30    # the CLI grid fits
    assert bench.estimate_memory_bytes("softmax_naive", 65536, 64) > 4 << 30    # and 64K does not
    with pytest.raises(ValueError, match="n"):
        bench.estimate_memory_bytes("sdpa", 0, 64)


def test_sweep_skips_with_reasons():
    budget = bench.estimate_memory_bytes("softmax_naive", 64, 16)   # 64 fits, 128 does not
    result = bench.sweep([64, 128], head_dim=16, methods=bench.METHODS, causal=False,
                         memory_budget_bytes=budget, max_n={"sdpa": 64}, memory=False, **FAST)
    by = {(r["method"], r["n"]): r for r in result.rows}
    assert len(result.rows) == 2 * len(bench.METHODS)
    assert "memory budget" in by["softmax_naive", 128]["skipped"]
    assert by["softmax_naive", 128]["time_ms"] is None
    assert by["softmax_naive", 64]["skipped"] is None and by["softmax_naive", 64]["time_ms"] > 0
    assert "cap 64" in by["sdpa", 128]["skipped"]
    assert "causal" in by["linear_recurrent", 64]["skipped"]
    assert "causal" in by["linear_cumsum", 64]["skipped"]
    assert by["linear_chunked", 128]["causal"] is False
    assert by["linear_parallel", 128]["gflops"] > 0
    assert not result.cancelled and not result.truncated


def test_time_budget_truncates():
    result = bench.sweep([64], head_dim=8, methods=["linear_parallel"], time_budget_s=1e-9, **FAST)
    assert result.truncated and "time budget" in result.rows[0]["skipped"]


def test_progress_increases_to_one():
    seen = []
    bench.sweep([32, 64], head_dim=8, methods=["sdpa", "linear_chunked"], causal=True,
                progress=lambda f, msg: seen.append((f, msg)), **FAST)
    fractions = [f for f, _ in seen]
    assert len(fractions) == 1 + 4 + 1      # a matmul probe, each run, the second probe
    assert all(b > a for a, b in zip(fractions, fractions[1:]))
    assert fractions[-1] == 1.0 and all(isinstance(m, str) for _, m in seen)


def test_should_stop_cancels():
    calls = {"n": 0}

    def stop():
        calls["n"] += 1
        return calls["n"] > 3

    seen = []
    result = bench.sweep([32, 64, 128], head_dim=8, methods=["linear_parallel", "linear_chunked"],
                         should_stop=stop, progress=lambda f, m: seen.append(f), **FAST)
    assert result.cancelled
    assert len(result.rows) < 6
    assert seen[-1] == 1.0
    assert any("cancelled" in note for note in result.notes)


def test_json_and_csv_round_trip():
    result = bench.sweep([64, 128], head_dim=8, methods=["sdpa", "linear_chunked", "linear_cumsum"],
                         causal=True, max_n={"linear_cumsum": 64}, **FAST)
    back = bench.SweepResult.from_json(result.to_json())
    assert back == result
    assert json.loads(result.to_json())["slopes"] == result.slopes()
    rows = bench.rows_from_csv(result.to_csv())
    assert rows == [{key: r[key] for key in bench.ROW_FIELDS} for r in result.rows]
    assert any(r["skipped"] for r in rows)  # cumsum at 128 is above its cap
    assert "skipped" in result.table() and "GFLOP/s" in result.table()


def test_sweep_rejects_bad_arguments():
    with pytest.raises(ValueError, match="methods"):
        bench.sweep([64], methods=["flash"])
    with pytest.raises(ValueError, match="ns"):
        bench.sweep([0, 64])
    with pytest.raises(ValueError, match="repeats"):
        bench.sweep([64], repeats=0)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA error")
def test_cuda_unavailable_is_a_clear_error(capsys):
    with pytest.raises(ValueError, match="device.*CUDA is not available"):
        bench.sweep([64], device="cuda")
    assert main(["bench", "--ns", "64", "--device", "cuda", "--no-sources"]) == 2
    assert "CUDA is not available" in capsys.readouterr().err


needs_proc = pytest.mark.skipif(not os.access("/proc/self/clear_refs", os.W_OK),
                                reason="no writable /proc/self/clear_refs")


@needs_proc
def test_peak_memory_sees_an_allocation():
    big = 25 * 2**20                                      # 100 MiB of float32
    out, peak = bench.measure_peak_bytes(lambda: torch.ones(big))
    assert out.numel() == big
    assert peak >= 95 * 2**20
    del out
    # Memory freed before the call is not charged to it, nor memory reused from the heap.
    junk = torch.ones(big)
    del junk
    # RSS is the whole process's: after a long run its pages may be reused or others' freed
    # during the call, so a small call's reading is only bounded above (the 100 MiB one above
    # is what shows the allocation is seen): the junk freed before is never charged to it.
    smalls = [bench.measure_peak_bytes(lambda: torch.ones(2 * 2**20))[1] for _ in range(3)]   # 8 MiB
    assert all(small < 40 * 2**20 for small in smalls), smalls


FRAGMENTING = """
import json, torch
from explorer.measure import bench
mib = 2**18                                           # float32 elements in 1 MiB

def fragmenting():
    # Live peak 10 MiB (4 + 4, then 4 + 6). Served from a heap, the freed 4 MiB hole
    # stays resident while the 6 MiB buffer is placed after it: RSS would grow 14 MiB.
    a, b = torch.ones(4 * mib), torch.ones(4 * mib)
    del a
    return b, torch.ones(6 * mib)

bench.measure_peak_bytes(lambda: None)               # leaves glibc's threshold high
leftovers = [torch.ones(4 * mib) for _ in range(6)]
pin = torch.ones(mib)          # keeps the freed 24 MiB below it as a free chunk of this heap
del leftovers
print(json.dumps([bench.measure_peak_bytes(fragmenting)[1] for _ in range(3)]))
"""


@pytest.mark.slow
@needs_proc
def test_peak_memory_follows_live_buffers_not_heap_leftovers():
    # In a fresh process: the heap state this test builds must not be disturbed by
    # whatever the rest of the test session allocated before.
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", FRAGMENTING], cwd=root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for peak in json.loads(out.stdout.strip().splitlines()[-1]):
        assert 9.5 * 2**20 <= peak < 12 * 2**20


def test_targets_report_pass_and_miss():
    ns = [1024, 2048, 4096, 8192, 16384]
    rows = _rows("softmax_naive", ns, [1e-6 * n * n for n in ns])
    rows += _rows("linear_parallel", ns, [1e-4 * n for n in ns])
    rows += _rows("linear_chunked", ns, [5e-4 * n for n in ns])         # 5x non-causal: a miss
    rows += _rows("linear_cumsum", ns, [0.1 * n for n in ns])
    for r in rows:
        r["causal"] = r["method"] != "linear_parallel"
        r["gflops"] = 100.0 if r["method"] == "linear_parallel" else 1.0
    rows.append({"method": "linear_chunked", "n": 65536, "causal": True, "time_ms": 30.0,
                 "skipped": None, "peak_mem_bytes": 50 * 2**20, "gflops": 1.0})
    result = bench.SweepResult(rows=rows, matmul_gflops=200.0, causal=True)
    got = {t["name"].split(" at ")[0].split(" over ")[0]: t for t in bench.targets(result)}
    assert got["non-causal linear >= 40% of matmul GFLOP/s"]["passed"] is True      # 50%
    assert got["causal chunked within 3x of non-causal"]["passed"] is False
    assert got["causal chunked >= 20x faster than cumsum"]["passed"] is True         # 200x
    assert got["causal chunked extra peak < 64 MB"]["passed"] is True
    assert got["slope softmax_naive in [1.8, 2.2]"]["passed"] is True
    assert got["slope linear_chunked in [0.8, 1.2]"]["passed"] is True
    assert got["slope linear_recurrent in [0.8, 1.2]"]["passed"] is None             # not measured
    text = bench.format_targets(bench.targets(result))
    assert "PASS" in text and "MISS" in text and "not measured" in text


@pytest.mark.slow
def test_cli_writes_json(tmp_path):
    out = tmp_path / "out.json"
    csv_out = tmp_path / "out.csv"
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "explorer", "bench", "--ns", "256", "512", "--repeats", "1",
                           "--no-sources", "--json", str(out), "--csv", str(csv_out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert {r["n"] for r in data["rows"]} == {256, 512}
    assert {r["method"] for r in data["rows"]} == set(bench.METHODS)
    assert data["matmul_gflops"] > 0 and data["targets"]
    assert "targets (attention)" in done.stdout and "%matmul" in done.stdout
    assert len(bench.rows_from_csv(csv_out.read_text())) == len(data["rows"])


def test_no_command_prints_help(capsys):
    assert main([]) == 0
    assert "bench" in capsys.readouterr().out


@needs_proc
@pytest.mark.parametrize("method", bench.METHODS)
def test_memory_estimate_covers_the_measured_peak(method):
    # The estimate guards the app against runs that would not fit: it must not be low.
    n = 1024 if method == "linear_recurrent" else 2048
    q, k, v = (t.expand(1, 1, n, 64).contiguous() for t in _qkv(n=n, d=64))
    fmap = feature_maps.create("elu1", 64)
    fn = bench.method_function(method, fmap, True)
    with torch.inference_mode():
        fn(q, k, v)
        _, peak = bench.measure_peak_bytes(lambda: fn(q, k, v))
    assert 0 < peak <= bench.estimate_memory_bytes(method, n, 64, 64)


# ----------------------------------------------------------------------------- beside the peers


def test_peers_missing_is_said_and_not_an_error(capsys, monkeypatch):
    from explorer.measure import peers
    monkeypatch.setattr(peers, "load_peers", lambda: (None, "performer-pytorch and fla-core are not importable here"))
    assert main(["bench", "--peers", "--ns", "128", "--rounds", "1"]) == 0
    assert "skipped" in capsys.readouterr().out
    assert main(["bench", "--peers", "--ns", "100"]) == 2          # FLA's chunked forms need multiples of 64


def _stand_in_peers():
    """Plain-torch stand-ins with the peers' signatures: performer takes features, FLA takes
    (B, N, H, D) tensors. The first two compute what ours computes, so ``agreement`` must
    find them equal; the gated ones only need to run."""
    def performer(fq, fk, v):
        return (fq @ (fk.transpose(-1, -2) @ v)) / (fq @ fk.sum(-2).unsqueeze(-1))

    def fla_chunk(fq, fk, v, scale=1.0, normalize=True):
        fq, fk, v = (t.transpose(1, 2) for t in (fq, fk, v))
        w = (fq @ fk.transpose(-1, -2)).tril()
        return ((w @ v) / w.sum(-1, keepdim=True)).transpose(1, 2)

    def gated(q, k, v, g):
        return v * 2.0, None

    def fla_delta(q, k, v, beta, chunk_size=32):
        """The delta rule one token at a time, q scaled by d^-1/2 inside as FLA does."""
        q = q * q.shape[-1] ** -0.5
        s = q.new_zeros(*q.shape[:2], q.shape[-1], v.shape[-1])
        out = torch.empty_like(v)
        for t in range(q.shape[2]):
            kt, bt = k[:, :, t], beta[:, :, t, None]
            s = s + kt.unsqueeze(-1) * (bt * (v[:, :, t] - (kt.unsqueeze(-2) @ s).squeeze(-2))).unsqueeze(-2)
            out[:, :, t] = (q[:, :, t].unsqueeze(-2) @ s).squeeze(-2)
        return out, s
    return {"performer": performer, "fla_chunk": fla_chunk, "fla_simple_gla": gated, "fla_recurrent_gla": gated,
            "fla_delta": fla_delta}


def test_peers_report_puts_ours_beside_them_with_ratios():
    from explorer.measure import peers
    entries = peers.build_entries(_stand_in_peers(), 128, head_dim=16)
    assert {e.mode for e in entries} == set(peers.MODES)
    agree = peers.agreement(entries)
    assert set(agree) == {"ours parallel, non-causal", "ours chunked, causal", "ours chunked, delta rule"}
    assert max(agree.values()) < 1e-5
    result = peers.measure(entries, rounds=2, matmul_size=64)
    assert all(len(ts) == 2 and min(ts) > 0 for ts in result["times"].values())
    ratios = peers.ratios(entries, result["times"])
    med = {name: sorted(ts)[0] / 2 + sorted(ts)[1] / 2 for name, ts in result["times"].items()}
    want = med["fla naive_chunk_linear_attn"] / med["ours chunked, causal"]
    assert ratios["ours chunked, causal"] == pytest.approx(want)
    text = peers.report(entries, result, 128, 16, "cpu", 2, agree)
    assert "cpu, " in text and "dense matmul" in text and text.count("x the best peer") == 6
    want = med["ours recurrent, delta rule"] / med["ours chunked, delta rule"]
    assert ratios["ours recurrent / ours chunked, delta rule (time)"] == pytest.approx(want)
    assert json.loads(text.splitlines()[-1]).keys() == ratios.keys()


def test_peers_agreement_catches_a_peer_that_differs():
    from explorer.measure import peers
    wrong = _stand_in_peers()
    wrong["performer"] = lambda fq, fk, v: v
    wrong["fla_delta"] = lambda q, k, v, beta, chunk_size=32: (v, None)
    agree = peers.agreement(peers.build_entries(wrong, 64, head_dim=8))
    assert agree["ours parallel, non-causal"] > 1e-2
    assert agree["ours chunked, delta rule"] > 1e-2
    assert agree["ours chunked, causal"] < 1e-5


def test_slope_labels_name_the_range_measured():
    # A sweep over N = 512..2048 must not be labelled with the default grid's 1K..16K.
    ns = [512, 1024, 2048]
    rows = _rows("softmax_naive", ns, [1e-6 * n * n for n in ns]) + _rows("linear_chunked", ns, [1e-3 * n for n in ns])
    result = bench.SweepResult(rows=rows, causal=True)
    fits = result.slope_fits(None, 16384)
    assert (fits["softmax_naive"]["n_min"], fits["softmax_naive"]["n_max"], fits["softmax_naive"]["points"]) == (512, 2048, 3)
    names = [t["name"] for t in bench.targets(result)]
    slope_names = [n for n in names if n.startswith("slope ")]
    assert any("softmax_naive" in n and "over N=512..2048" in n for n in slope_names)
    assert not any("16384" in n for n in slope_names)
    assert any("linear_recurrent" in n and "fewer than two measured N" in n for n in slope_names)


@pytest.mark.slow
def test_cli_labels_slopes_with_its_own_ns():
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "explorer", "bench", "--ns", "128", "256", "512", "--repeats", "1",
                           "--warmup", "0", "--no-sources", "--no-memory",
                           "--methods", "softmax_naive", "linear_parallel", "linear_chunked"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "log-log slopes over N = 128..512:" in done.stdout
    assert "1K..16K" not in done.stdout and "N=1024..16384" not in done.stdout
    assert "slope softmax_naive in [1.8, 2.2] over N=128..512" in done.stdout
