"""Attention Kernel Explorer: the web app (also the Hugging Face Spaces entry point).

    python app.py                      # http://127.0.0.1:7860
    python app.py --host 0.0.0.0 --port 8080
    python app.py --public             # as on a Space: only the built-in models (explorer.catalog.public_server)
    python app.py --feature-maps mymaps.py   # your own feature maps beside the built-in ones (docs/maps.md)
    GRADIO_SERVER_NAME=0.0.0.0 GRADIO_SERVER_PORT=8080 python app.py

Runs offline: analytics and hub look-ups are switched off before gradio is imported, and
the theme uses system fonts. The page is built without the engine (its controls come from
explorer.catalog), so the server answers before torch and plotly are even imported. Once
it does, a background thread imports the engine and then loads the embedded model
(importing transformers alone takes seconds): the first request usually finds both ready,
and one arriving earlier waits for them.
"""

import argparse
import faulthandler
import logging
import os
import signal
import sys
import threading

# Before gradio / huggingface_hub are imported: they read these at import time.
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
# HF_HUB_OFFLINE alone decides whether the Hub may be contacted (HF_HUB_OFFLINE=0 allows Hub
# ids): once it is set, the Hub library and explorer.sources.models.offline() ignore
# TRANSFORMERS_OFFLINE, so it is not set here.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# Before torch is imported (OpenMP reads it once): threads that spin while waiting steal the
# cores from each other and from other work on a shared machine; under load the quality and
# maps views ran ~10x slower with spinning threads than with passive ones (scripts/bench_app.py).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# A server never runs inside IPython: None makes gradio's optional `import IPython` (0.4 s) fail at once.
sys.modules.setdefault("IPython", None)

# Uploads larger than this are refused by gradio itself, before anything is stored.
MAX_UPLOAD = "128mb"
# Gradio's own copies of uploads and downloads: swept every 10 minutes, kept an hour.
DELETE_CACHE = (600, 3600)


def warm_up():
    """Import the engine, load the model, on a Space's first start convert the causal model
    (explorer/ui/model_start.py), then draw the lecture's chapters: run in the background once
    the page is served."""
    from explorer.ui import model_start

    try:
        from explorer.ui.common import import_engine

        import_engine()
        from explorer.sources.text import preload

        preload()
        from explorer.ui import lecture_warm

        model_start.convert()   # a Space's first start: the causal model, before the lecture reads it
        lecture_warm.warm()     # every chapter's default view and figures, for the deck
    except Exception:  # the server stays up; the first request that needs it retries and says why
        logging.getLogger("explorer").exception("warming up the engine failed")
    finally:
        model_start.give_up()   # a conversion that never ran no longer holds the lecture


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # Defaults come from gradio's own variables, so Spaces and docker setups keep working.
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT", "7860")))
    parser.add_argument("--max-threads", type=int, default=8)
    parser.add_argument("--public", action="store_true",
                        help="serve anyone (as on a Space): only the built-in models, unless EXPLORER_ALLOW_MODELS says more")
    parser.add_argument("--feature-maps", metavar="MODULES", default=None,
                        help="modules or .py files that add feature maps (comma-separated; also EXPLORER_FEATURE_MAPS); "
                             "refused with --public")
    args = parser.parse_args(argv)
    if args.public:
        os.environ["EXPLORER_PUBLIC"] = "1"      # read by explorer.catalog.public_server
    if args.feature_maps is not None:
        os.environ["EXPLORER_FEATURE_MAPS"] = args.feature_maps

    from explorer import plugins
    try:
        added = plugins.load()                   # before the page lists the maps
    except plugins.Refused as exc:
        parser.exit(2, f"{exc}\n")
    if added:
        print(f"feature maps from outside the package: {', '.join(added)}", flush=True)

    from explorer import memory
    from explorer.ui import build_app, launch_kwargs, server

    memory.limit_arenas(2)   # before the server's threads start: see explorer.memory
    from explorer.ui import model_start
    model_start.expect()     # a Space's first start: the lecture waits for the causal model (warm_up)
    demo = build_app()
    demo.delete_cache = DELETE_CACHE
    # Every event has its own concurrency limit; the queue bounds what waits behind them, and
    # each visitor's share of it (explorer/ui/server.py).
    server.configure_queue(demo, default_concurrency_limit=2)
    server.expire_states(demo)
    server.remove_exports_on_sigterm()
    # `kill -USR1 <pid>` writes every thread's stack to stderr: what a stuck request waits on.
    if hasattr(faulthandler, "register") and hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    demo.launch(server_name=args.host, server_port=args.port, max_threads=args.max_threads,
                footer_links=["api"], prevent_thread_lock=True, max_file_size=MAX_UPLOAD,
                app_kwargs=server.app_kwargs(),   # the page's security policy and the body cap
                state_session_capacity=server.SESSION_CAPACITY,
                # Our handlers turn every error into a gr.Error; what is left is gradio's own refusals
                # (a file path it will not read, ...), whose messages are meant for the user.
                show_error=True, **launch_kwargs())
    # A request arriving meanwhile waits behind the engine's import lock and the model loader's.
    threading.Thread(target=warm_up, name="warm-up", daemon=True).start()
    server.expire_idle_sessions(demo)
    demo.block_thread()


if __name__ == "__main__":
    main()
