"""On SIGTERM (a Space or docker stopping the app) the app's temporary export folder is
removed: atexit alone never runs on a signal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from helpers import ROOT
from helpers.server import APP_START_TIMEOUT_S, free_port

pytestmark = pytest.mark.slow      # starts app.py and stops it with SIGTERM


def test_sigterm_removes_the_export_folder(tmp_path):
    port = free_port()
    env = dict(os.environ, GRADIO_SERVER_PORT=str(port), GRADIO_SERVER_NAME="127.0.0.1", TMPDIR=str(tmp_path))
    log = open(tmp_path / "app.log", "w")
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + APP_START_TIMEOUT_S
        while True:
            assert proc.poll() is None, (tmp_path / "app.log").read_text()[-2000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2):
                    break
            except OSError:
                assert time.time() < deadline, "the app did not start"
                time.sleep(0.5)
        folders = list(tmp_path.glob("attention-explorer-*"))
        assert len(folders) == 1
        (folders[0] / "an-export").mkdir()                     # something in it, as after a download
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        assert not folders[0].exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
