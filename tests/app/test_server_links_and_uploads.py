"""The hardening defects that only the running server shows (a `python app.py` subprocess,
shared with tests/app/test_app_api.py): links the app makes open, uploads over the limit are
refused before they are stored, a refused file path and a lone surrogate get real answers."""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

import httpx
import pytest

from explorer.ui import common
from helpers.server import MAPS_ARGS, api_call

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import crafted  # noqa: E402

pytestmark = pytest.mark.slow      # on the running app


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_apps_own_link_for_an_8000_character_chinese_text_opens(app_url):
    query = common.query_string({"tab": "maps", "src": "text", "text": crafted.long_chinese_text(8000),
                                 "layer": 2, "head": 3, "m": 64})
    assert _get(f"{app_url}?{query}") == 200
    assert _get(f"{app_url}?{crafted.huge_int_query()}") == 200


def test_a_lone_surrogate_through_the_api_is_cleaned(app_url):
    args = list(MAPS_ARGS)
    args[1] = "abc \ud800 def"
    event, payload = api_call(app_url, "maps", args)
    assert event == "complete", payload
    assert "%EF%BF%BD" in payload                        # the link holds U+FFFD


def test_a_refused_file_path_says_why(app_url):
    args = list(MAPS_ARGS)
    args[0], args[7] = "file", {"path": "/etc/passwd.npy", "meta": {"_type": "gradio.FileData"}}
    event, payload = api_call(app_url, "maps", args)
    assert event == "error"
    message = json.loads(payload)["error"]
    assert message and "not uploaded" in message            # was {"error": null}
    # One line in the server's log, not gradio's traceback of InvalidPathError.
    log = Path(os.environ["EXPLORER_TEST_APP_LOG"]).read_text(encoding="utf-8", errors="replace")
    assert "refused a file path that was not uploaded" in log
    assert "InvalidPathError" not in log, log[log.find("InvalidPathError") - 2000:][:2500]


def test_an_upload_over_the_limit_is_refused_before_it_is_stored(app_url, tmp_path):
    big = tmp_path / "big.npy"
    with open(big, "wb") as fh:                             # sparse: no disk used here
        fh.truncate(130 * 2 ** 20)
    with open(big, "rb") as fh:
        response = httpx.post(f"{app_url}gradio_api/upload", files={"files": ("big.npy", fh)}, timeout=120)
    assert response.status_code == 413, response.text[:200]
    assert "size" in response.text.lower()
