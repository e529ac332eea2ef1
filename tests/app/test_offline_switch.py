"""One variable decides whether the app may contact the Hugging Face Hub: HF_HUB_OFFLINE
(issue 23, point 14). ``HF_HUB_OFFLINE=0 python app.py`` allows Hub ids as docs/models.md
says; before, app.py also set TRANSFORMERS_OFFLINE=1, which kept the app offline and the
message blamed HF_HUB_OFFLINE. Nothing here downloads: each check runs app.py's settings in
a fresh process and reads which way they point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow      # a fresh process per case

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, os, runpy
runpy.run_path("app.py", run_name="not_main")          # app.py's settings, no server
import huggingface_hub.constants as hub
from explorer.sources import models
message = None
if models.offline():
    message = models._hub_message("someone/not-cached", OSError("not cached"))
print(json.dumps({"app": models.offline(), "hub": hub.HF_HUB_OFFLINE, "switch": models.offline_switch(),
                  "message": message}))
"""


def _probe(env: dict, tmp_path) -> dict:
    full = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    full.update(PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", HF_HOME=str(tmp_path), **env)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(PROBE)], cwd=ROOT, env=full,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("env, offline", [
    ({}, True),                                                    # the default: offline
    ({"HF_HUB_OFFLINE": "0"}, False),                              # as docs/models.md says
    ({"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "1"}, False),  # HF_HUB_OFFLINE decides
    ({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "0"}, True),
])
def test_hf_hub_offline_alone_decides_and_the_hub_library_agrees(env, offline, tmp_path):
    got = _probe(env, tmp_path)
    assert got["switch"] == "HF_HUB_OFFLINE"
    assert got["app"] is offline and got["hub"] is offline


def test_the_offline_message_names_the_variable_that_decided(tmp_path):
    got = _probe({"HF_HUB_OFFLINE": "1"}, tmp_path)
    assert "HF_HUB_OFFLINE is set" in got["message"] and "HF_HUB_OFFLINE=0" in got["message"]


def test_without_app_py_the_rule_is_the_hub_librarys(monkeypatch):
    from explorer.sources import models

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    assert models.offline_switch() == "TRANSFORMERS_OFFLINE" and models.offline()
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert models.offline_switch() == "HF_HUB_OFFLINE" and not models.offline()
