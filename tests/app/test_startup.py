"""The page is built without the engine: torch and plotly are imported only once the
server answers (app.py warms them in the background), which keeps start-up short."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow      # builds the app in a fresh process

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = {"GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
HEAVY = ("torch", "plotly", "explorer.views", "explorer.figures", "explorer.views.learn")


def test_building_the_app_imports_no_engine():
    code = ("import sys, explorer.ui; explorer.ui.build_app(); "
            f"print(' '.join(name for name in {HEAVY!r} if name in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(os.environ, **OFFLINE),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    imported = done.stdout.split()
    assert imported == [], f"building the page imported {imported}: import them inside the handlers"
