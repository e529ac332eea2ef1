"""Shared test setup: everything runs offline and quiet, as the app does."""

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from helpers import ROOT
from helpers.server import APP_START_TIMEOUT_S, free_port

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# As in app.py: OpenMP threads that spin while idle starve each other on a busy 2-core machine.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


# Test modules import what they share from tests/helpers/ (this folder is on sys.path, as
# pytest puts the folder of a conftest.py without __init__.py there). A few still import
# another test module (test_state_view's KINDS, test_browser's Watched), so each group's
# folder stays importable from the others until those move.
for _group in ("engine", "app", "browser"):
    sys.path.insert(0, str(Path(__file__).resolve().parent / _group))


# ---------------------------------------------------------------------------------------
# Markers (registered in pyproject.toml): every test of a browser module is ``browser``;
# ``slow`` are the tests that start the app (its start alone took 36 s) and those measured
# slowest with `python -m pytest -m "not browser" --durations=60` on the busy 2-core
# machine (3 s and over there; a module whose shared fixture took 6 s or more, whole), then
# the fast part's own slowest (3 s and over in its first run).
# `python -m pytest -m "not browser and not slow"` runs the rest, the fast part.
# ---------------------------------------------------------------------------------------

# Module file name -> the names of its slow test functions (every parameter case of each),
# or None when the whole module is slow.
SLOW_TESTS: dict[str, set[str] | None] = {
    "test_attention.py": {"test_softmax_map_is_row_softmax_of_scaled_logits"},
    "test_api_snippets.py": {"test_the_maps_tabs_csv_names_its_text_model_and_settings"},
    "test_bench.py": {"test_cli_writes_json", "test_cli_labels_slopes_with_its_own_ns",
                      "test_peak_memory_follows_live_buffers_not_heap_leftovers"},
    "test_figure_layout.py": None,          # a small sweep and the built app, shared
    "test_app_api.py": {"test_export_writes_png_html_and_csv"},
    # 64 tokens decoded through all 30 layers, then the parallel forward; 30+ forwards of the
    # model for a ranking or a search; a second copy of the model: 5-20 s each.
    "test_linearize_model.py": {"test_recurrent_decoding_equals_the_parallel_forward_over_64_tokens",
                                "test_an_all_linear_model_decodes_as_its_parallel_forward",
                                "test_no_layer_swapped_is_the_original_causal_lm",
                                "test_sampling_is_seeded",
                                "test_sensitivity_ranks_every_layer_by_what_linearizing_it_alone_costs",
                                "test_plain_rules_and_a_bounded_greedy_search",
                                "test_cli_linearize_prints_the_table_and_writes_csv_and_json",
                                "test_cli_generate_streams_the_continuation_and_says_the_memory"},
    # SmolLM2 read, judged on two held-out passages or generating twice: 5-30 s each.
    "test_linearize_tab.py": {"test_the_numbers_change_with_k", "test_generate_streams_and_only_the_originals_memory_grows",
                              "test_generate_stops_when_asked"},
    "test_i18n_tabs.py": {"test_complexity_view_figures_summary_and_table_in_chinese",
                          "test_quality_figures_tables_and_notices_in_chinese"},
    "test_linearize_transfer.py": None,     # reads SmolLM2, trains a layer twice
    "test_learn_model.py": {"test_the_learn_handler_trains_a_smollm2_head_against_its_causal_softmax"},
    "test_learn_tab.py": {"test_learn_tab_in_chinese_at_1600x900", "test_endpoints_through_gradio_client"},
    "test_learn_seeds_tab.py": {"test_the_learn_endpoint_takes_seeds_and_texts"},
    "test_lecture_causal.py": {"test_without_the_causal_model_chapter_five_keeps_minilm_for_its_trained_map"},
    "test_lecture_claims.py": {             # every chapter's views in both languages, shared
        "test_every_number_written_on_a_build_is_one_the_build_measured",
        "test_every_build_says_one_short_claim_of_its_own_and_two_to_five_notes",
        "test_a_notice_is_in_the_notes_of_the_build_it_is_about_only",
        "test_one_recall_experiment_serves_chapters_4_5_and_6",
        "test_it_is_the_same_token_in_chapters_1_and_4_and_the_sentence_is_the_audiences"},
    "test_lecture_deck.py": None,           # every chapter's views and figures, shared
    "test_lecture_export.py": None,         # the deck written once, shared
    "test_lecture_figures.py": {"test_associativity_labels_never_overlap_over_the_whole_range_of_n",
                                "test_every_number_of_every_chapter_has_a_readable_label",
                                "test_titles_and_notes_stay_inside_the_lecture_column"},
    "test_lecture_forgetting.py": {"test_overwriting_recall_is_the_engines_probe",
                                   "test_state_updates_have_a_roadmap_of_their_own_measured_as_recall",
                                   "test_hgrn2_bounds_rise_with_depth_and_the_memory_and_recall_follow",
                                   "test_try_this_moves_the_overwriting_build"},
    "test_lecture_smollm2.py": {
        "test_the_lecture_endpoint_clamps_a_head_past_the_model_and_fills_the_models_defaults",
        "test_chapter_five_reads_smollm2_and_its_trained_map_halves_elu1s_causal_kl"},
    "test_lecture_views.py": {"test_every_chapter_draws_in_both_languages",
                              "test_a_new_seed_recomputes_only_the_maps_that_draw_something",
                              "test_random_sample_chapters_work_without_a_model", "test_try_this_presets_build",
                              "test_chapter_one_names_its_reference_for_what_it_is",
                              "test_values_a_log_axis_cannot_show_are_named_not_dropped",
                              "test_chapter_five_uses_a_cached_trained_hedgehog"},
    "test_models.py": {"test_hub_id_loads_through_from_pretrained_from_the_hub_cache",
                       "test_hub_id_offline_says_it_is_not_cached_and_how_to_get_it",
                       "test_memory_limit_refuses_before_any_weight_is_read"},
    "test_readme.py": {"test_the_bench_cli_runs_outside_the_repository",
                       "test_the_installed_package_finds_its_assets",
                       "test_the_readme_engine_snippet_runs_outside_the_repository"},
    "test_startup.py": {"test_building_the_app_imports_no_engine"},
    "test_state_view.py": {"test_chinese_figures_have_no_english_words"},
    "test_untrusted_input_and_limits.py": {
        "test_png_exporter_browser_is_stopped_at_exit", "test_exports_live_in_one_pruned_folder_removed_at_exit",
        "test_many_member_npz_gives_a_short_notice_and_a_huge_one_is_refused"},
    "test_probe.py": {"test_the_command_line_writes_and_merges"},
    "test_probe_view.py": None,             # every head of two texts, shared
    "test_probe_tab.py": {"test_the_handler_draws_the_heatmap_and_writes_the_table"},
    "test_provenance.py": {"test_npz_and_safetensors_carry_it_and_load_back", "test_a_trained_map_carries_it",
                           "test_the_docs_loading_lines_read_every_export",
                           "test_a_trained_maps_texts_too_long_for_its_header_are_told_by_their_hashes"},
    "test_handout.py": {"test_handout_has_three_builds_a_page_and_their_notes"},   # Chromium prints it
    "test_speaker_browser.py": None,        # the deck and its speaker window, on the app
    "test_public_stop.py": None,            # starts app.py and stops it with SIGTERM
    "test_startup_requests.py": None,       # fresh processes and a fresh app.py
    "test_offline_switch.py": None,         # a fresh process per case
    "test_public_sweep.py": {"test_a_sweep_asked_for_minutes_ends_within_its_budget"},
    "test_public_leave.py": {"test_a_learn_whose_client_disconnects_stops_within_2_s"},
    "test_public_learn_budget.py": None,   # trains every head, on a server of its own
    "test_public_lanes.py": None,          # builds the whole app
    "test_public_refuse_first.py": None,    # reads SmolLM2
    "test_causal_default.py": {"test_smollm2_maps_give_the_entropy_the_model_computes"},
    "test_public_server.py": {"test_sixteen_sessions_joining_past_their_share_leave_room_for_a_seventeenth"},
    "test_public_sessions.py": {"test_sessions_are_bounded_and_an_idle_one_is_forgotten"},
    "test_views.py": {"test_complexity_view_small",
                      "test_state_defaults_show_decay_on_the_default_text_and_more_on_the_preset"},
}


def _is_browser_module(path: Path) -> bool:
    return path.parent.name == "browser" or "browser" in path.stem


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _is_browser_module(item.path):
            item.add_marker(pytest.mark.browser)
        slow = SLOW_TESTS.get(item.path.name, ())
        if (slow is None or getattr(item, "originalname", item.name) in slow
                or "app_url" in getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


# ---------------------------------------------------------------------------------------
# A running app for the API and browser tests: `python app.py` in a subprocess on a free
# port, one per group of tests (app/, browser/), started when the group's first test asks
# and stopped when the next group starts, or at the end. The browser tests then see a page
# served as a visitor finds it, not a server that has just taken hundreds of hostile and
# abandoned API requests (those are the app group's to judge). On a wait that times out,
# tests/helpers/page.py reads EXPLORER_TEST_APP_PID/_LOG to say what the server does.
# ---------------------------------------------------------------------------------------

def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status == 200
    except OSError:
        return False


def _start_app(log_path: Path):
    port = free_port()
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), GRADIO_SERVER_NAME="127.0.0.1",
               EXPLORER_SWEEP_BUDGET_S="20")
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + APP_START_TIMEOUT_S
    while not _answers(url):
        try:
            proc.wait(timeout=0.5)                # returns only when the app has exited
        except subprocess.TimeoutExpired:
            pass
        else:
            raise RuntimeError(f"app.py exited with {proc.returncode}:\n{log_path.read_text()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"app.py did not answer within {APP_START_TIMEOUT_S} s:\n{log_path.read_text()}")
    os.environ["EXPLORER_TEST_APP_PID"], os.environ["EXPLORER_TEST_APP_LOG"] = str(proc.pid), str(log_path)
    return proc, url


def _stop_app(proc) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def _apps(tmp_path_factory):
    """The running app of the current group: {group: (process, url)}, at most one at a time."""
    running: dict = {}
    yield running, tmp_path_factory
    for proc, _ in running.values():
        _stop_app(proc)


@pytest.fixture(scope="module")
def app_url(_apps, request):
    running, factory = _apps
    group = request.path.parent.name
    if group not in running:
        for proc, _ in running.values():
            _stop_app(proc)
        running.clear()
        running[group] = _start_app(factory.mktemp(f"app-{group}") / "app.log")
    return running[group][1]


@pytest.fixture(scope="session")
def server_alive():
    """A check that the server still answers a plain page request."""
    def alive(url: str) -> bool:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status == 200
        except OSError:
            return False
    return alive


# ---------------------------------------------------------------------------------------
# Chromium for the browser test modules (Debian's chromium through playwright, offline),
# one per module: two sync playwright sessions cannot be open at once in one thread.
# Under CI (CI=true) a missing browser fails the run; elsewhere it skips.
# ---------------------------------------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _browser_missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} not found"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "python playwright is not installed"
    return None


@pytest.fixture(scope="module")
def chromium():
    missing = _browser_missing()
    if missing:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"browser tests must run under CI: {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def browser(chromium):
    """The module's Chromium, under the name the browser tests use."""
    return chromium


# ---------------------------------------------------------------------------------------
# The learn tab alone on a gradio server of its own, for the tests of a training whose
# visitor leaves: (its address, the learn endpoint's fn_index).
# ---------------------------------------------------------------------------------------

@pytest.fixture()
def learn_app():
    import gradio as gr

    from explorer.ui import learn_tab

    with gr.Blocks() as demo:
        learn_tab.build(gr.Checkbox(False))
    demo.queue().launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True)
    fn_index = next(i for i, dep in enumerate(demo.config["dependencies"]) if dep.get("api_name") == "learn")
    try:
        yield demo.local_url, fn_index
    finally:
        demo.close()
