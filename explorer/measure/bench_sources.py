"""How long the text source takes: the first model load, and one from_text call after it.

The first load is only meaningful cold: once a process has imported transformers or
loaded the model, a second load measures a cache. So when this process is already warm,
the measurement runs in a fresh Python subprocess. Nothing is printed here; the command
line decides how to show the dict.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ..checks import check_positive_int

_WORDS = ("attention reads every token against every other token and weighs what it finds "
          "so the cost grows with the square of the length while a kernel feature map "
          "lets the same sum be taken in one pass ").split()


def measure_text_source(n_tokens: int = 128, repeats: int = 10) -> dict:
    """{"first_load_s", "import_s", "from_text_p50_ms", "tokens", ...} for the embedded model.

    ``first_load_s`` is the whole cold load (importing transformers, reading tokenizer and
    weights); ``import_s`` is the library-import part of it. ``from_text_p50_ms`` is the
    median over ``repeats`` calls on a text of ``n_tokens`` tokens (special tokens included).
    """
    n_tokens = check_positive_int(n_tokens, "n_tokens")
    repeats = check_positive_int(repeats, "repeats")
    from ..sources import text

    if text.loaded_models() or "transformers.modeling_utils" in sys.modules:
        return _measure_in_subprocess(n_tokens, repeats)
    return _measure_here(n_tokens, repeats)


def _measure_here(n_tokens: int, repeats: int) -> dict:
    from ..sources import text

    start = time.perf_counter()
    loaded = text.get_model()
    first_load_s = time.perf_counter() - start
    passage = " ".join(_WORDS[i % len(_WORDS)] for i in range(n_tokens + 16))
    sample = text.from_text(passage, max_tokens=n_tokens)  # one warm-up call, not timed
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        text.from_text(passage, max_tokens=n_tokens)
        times.append(time.perf_counter() - t0)
    return {
        "first_load_s": round(first_load_s, 3),
        "import_s": round(loaded.import_s, 3),
        "from_text_p50_ms": round(statistics.median(times) * 1000, 2),
        "tokens": sample.n_tokens,
        "repeats": repeats,
        "model": loaded.name,
        "measured_in": "this process",
    }


def _measure_in_subprocess(n_tokens: int, repeats: int) -> dict:
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1", TRANSFORMERS_OFFLINE="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    code = ("import json, explorer.measure.bench_sources as b; "
            f"print(json.dumps(b._measure_here({n_tokens}, {repeats})))")
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the measuring subprocess failed: {done.stderr.strip()[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["measured_in"] = "fresh subprocess"
    return result
