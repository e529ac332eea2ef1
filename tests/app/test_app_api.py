"""Every endpoint through gradio_client against a running `python app.py`: defaults give
figures, bad input gives a clear error (never a traceback), and the server stays up."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def client(app_url):
    return Client(app_url, verbose=False)


def plotly_json(value) -> dict:
    """The figure a gr.Plot output carries, as plotly JSON."""
    assert isinstance(value, dict) and value.get("type") == "plotly", value
    return json.loads(value["plot"])


def assert_clear_error(excinfo, *words):
    message = str(excinfo.value)
    assert "Traceback" not in message
    for word in words:
        assert word.lower() in message.lower(), message


def test_named_endpoints(client):
    names = set(client.view_api(print_info=False, return_format="dict")["named_endpoints"])
    assert {"/maps", "/quality", "/state", "/complexity"} <= names


# --------------------------------------------------------------------------- maps

def test_maps_defaults(client):
    plot, table, badge, notices, query = client.predict(api_name="/maps")
    fig = plotly_json(plot)
    heatmaps = [t for t in fig["data"] if t["type"] == "heatmap"]
    assert len(heatmaps) == 5 + 4           # five maps, four error maps (none for softmax itself)
    assert table["headers"][0] == "map"
    assert [row[0] for row in table["data"]][:1] == ["softmax"]
    assert len(table["data"]) == 5
    assert badge.startswith("✓") and "matches" in badge and "max |difference|" in badge
    assert "tab=maps" in query


def test_maps_random_1024_is_downsampled(client):
    plot, table, *_ = client.predict(source="random", preset="gaussian", n=1024, d=32, api_name="/maps")
    fig = plotly_json(plot)
    assert len(table["data"]) == 5
    # The browser gets 128 x 128 block means, and the figure says so.
    assert "8×8 block" in json.dumps(fig["layout"]["title"], ensure_ascii=False)


def test_maps_empty_text(client, app_url, server_alive):
    with pytest.raises(AppError) as excinfo:
        client.predict(text="   ", api_name="/maps")
    assert_clear_error(excinfo, "empty")
    assert server_alive(app_url)


def test_maps_long_text_gives_notice(client):
    long_text = " ".join(["attention is kernel regression"] * 200)   # ~800 tokens
    plot, table, badge, notices, _ = client.predict(text=long_text, maps=["softmax", "elu1"], api_name="/maps")
    assert "truncated" in notices.lower()
    assert plotly_json(plot)["data"]


def test_maps_n_over_cap(client, app_url, server_alive):
    with pytest.raises(AppError) as excinfo:
        client.predict(source="random", n=10_000_000, api_name="/maps")
    assert_clear_error(excinfo, "n")
    assert server_alive(app_url)


def test_maps_upload_wrong_shape(client, tmp_path, app_url, server_alive):
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((5, 7), dtype=np.float32))       # not (2 or 3, N, d)
    with pytest.raises(AppError) as excinfo:
        client.predict(source="file", file=handle_file(str(bad)), api_name="/maps")
    assert "Traceback" not in str(excinfo.value)
    assert server_alive(app_url)


def test_maps_upload_good_file(client, tmp_path):
    rng = np.random.default_rng(0)
    good = tmp_path / "qk.npz"
    np.savez(good, q=rng.standard_normal((24, 16)).astype(np.float32),
             k=rng.standard_normal((24, 16)).astype(np.float32))
    plot, table, *_ = client.predict(source="file", file=handle_file(str(good)), layer=0, head="0",
                                     maps=["softmax", "elu1"], api_name="/maps")
    assert len(plotly_json(plot)["data"][0]["x"]) == 24      # one column per uploaded token
    assert len(table["data"]) == 2


def test_maps_no_map_chosen(client):
    with pytest.raises(AppError) as excinfo:
        client.predict(maps=[], api_name="/maps")
    assert_clear_error(excinfo, "at least one map")


# --------------------------------------------------------------------------- quality

def test_quality_defaults(client):
    curves, norms, shape, overview, heads, notices, query = client.predict(seeds=10, api_name="/quality")
    fig = plotly_json(curves)
    names = {t.get("name") for t in fig["data"]}
    assert "FAVOR+ (IID) (theory, IID)" in names and "FAVOR+ (orthogonal) (measured)" in names
    assert fig["layout"]["xaxis"]["type"] == "log" and fig["layout"]["yaxis"]["type"] == "log"
    over = plotly_json(overview)
    assert np.asarray(_decode(over["data"][0]["z"])).shape == (6, 12)
    assert len(heads["data"]) == 72
    assert "FAVOR+ needs m" in plotly_json(norms)["layout"]["title"]["text"]


def test_quality_without_random_map(client, app_url, server_alive):
    with pytest.raises(AppError) as excinfo:
        client.predict(maps=["elu1"], source="random", preset="gaussian", n=32, api_name="/quality")
    # Refused before gradio's own check, in the words every parameter uses.
    assert_clear_error(excinfo, "maps must be a list of values from favor_plus_iid", "got ['elu1']")
    assert server_alive(app_url)


# --------------------------------------------------------------------------- state

def test_state_defaults(client):
    step, curves, memory, notices, t_update, query, capacity = client.predict(api_name="/state")
    assert len([t for t in plotly_json(step)["data"] if t["type"] == "heatmap"]) == 2
    names = {t.get("name") for t in plotly_json(curves)["data"]}
    assert {"no decay", "RetNet γ", "GLA gates"} <= names
    assert len(plotly_json(memory)["data"]) == 2


def test_state_softmax_refused(client, app_url, server_alive):
    with pytest.raises(AppError) as excinfo:
        client.predict(map_id="softmax", api_name="/state")
    assert "Traceback" not in str(excinfo.value)
    assert server_alive(app_url)


def test_state_bad_gamma(client):
    with pytest.raises(AppError) as excinfo:
        client.predict(gamma=0.0, api_name="/state")
    # The slider's own bounds refuse it before the engine would, in the words every check uses.
    assert_clear_error(excinfo, "gamma must be a number from 0.5 to 1; got 0.0")


# --------------------------------------------------------------------------- complexity

def test_complexity_small_sweep(client):
    plot, claim, table, summary, query = client.predict(
        n_min=128, n_max=512, points=3, d=32, repeats=1, api_name="/complexity")
    fig = plotly_json(plot)
    assert fig["layout"]["xaxis"]["type"] == "log"
    assert len(table["data"]) >= 9
    assert "775" in summary or "780" in summary


def test_complexity_over_cap(client, app_url, server_alive):
    with pytest.raises(AppError) as excinfo:
        client.predict(n_max=10_000_000, api_name="/complexity")
    assert_clear_error(excinfo, "n_max must be a whole number from 16 to 131,072; got 10,000,000")
    assert server_alive(app_url)


def test_complexity_over_memory(client, app_url, server_alive):
    with pytest.raises(AppError) as excinfo:
        client.predict(n_min=131072, n_max=131072, points=1, methods=["softmax_naive"], api_name="/complexity")
    assert_clear_error(excinfo, "memory")
    assert server_alive(app_url)


def _decode(z):
    """plotly's base64 typed arrays back to numpy (what the browser decodes)."""
    if isinstance(z, dict) and "bdata" in z:
        import base64
        arr = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
        shape = [int(s) for s in str(z.get("shape", len(arr))).split(",")]
        return arr.reshape(shape)
    return np.asarray(z)


def test_export_writes_png_html_and_csv():
    """The export buttons' helper: PNG (kaleido, Chromium), standalone HTML and CSV."""
    from explorer import views
    from explorer.ui import downloads, maps_tab
    sample = views.load_sample("random", preset="local", n=24, d=8)
    view = views.maps_view(sample, 0, 0, ["softmax", "elu1"], False, 8, 0)
    paths = downloads.export_files("maps", {"grid": maps_tab.render(view, True)},
                                {"metrics": views.metrics_table(view.metrics)})
    kinds = {p.rsplit(".", 1)[1] for p in paths}
    assert {"html", "csv"} <= kinds
    if "png" in kinds:
        with open([p for p in paths if p.endswith(".png")][0], "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    html = open([p for p in paths if p.endswith(".html")][0], encoding="utf-8").read()
    assert '<script src="http' not in html and "Plotly.newPlot" in html    # plotly.js embedded: opens offline


# ------------------------------------------------------------- one validation path

def _app_log(tmp_path_factory) -> str:
    """The running app's log (conftest.app_url writes it under the session's temp folder)."""
    logs = sorted(tmp_path_factory.getbasetemp().glob("app*/app.log"))
    return logs[-1].read_text(errors="replace") if logs else ""


@pytest.mark.parametrize("kwargs, words", [
    ({"maps": ["softmax"], "n": 100.7, "source": "random"}, "n must be a whole number from 1 to 8,192; got 100.7"),
    ({"maps": ["softmax"], "m": "abc"}, "m must be a whole number from 2 to 1,024; got 'abc'"),
    ({"maps": ["softmax"], "causal": "maybe"}, "causal must be true or false"),
    ({"maps": ["softmax", "nope"]}, "maps must be a list of values from softmax"),
    ({"maps": ["softmax"], "layer": True}, "layer must be a whole number from 0 to 29; got true"),
    ({"maps": ["softmax"], "seed": "1" * 100_000}, "(100,000 characters)"),
])
def test_every_endpoint_refuses_in_the_same_words(client, kwargs, words):
    with pytest.raises(AppError) as excinfo:
        client.predict(**kwargs, api_name="/maps")
    assert_clear_error(excinfo, words)
    assert len(str(excinfo.value)) < 400


@pytest.mark.parametrize("kwargs, words", [
    ({"chapter": "abc"}, "chapter must be a whole number from 0 to 6; got 'abc'"),
    ({"chapter": 2.5}, "got 2.5"),
    ({"chapter": True}, "got true"),
    ({"chapter": "9" * 5000}, "(5,000 characters)"),
    ({"chapter": 0, "controls": '{"n": 100.7}'}, "n must be a whole number from 64 to 1,000,000; got 100.7"),
    ({"chapter": 0, "controls": '{"n": 1e400}'}, "got inf"),
    ({"chapter": 0, "controls": '{"n": NaN}'}, "got nan"),
    ({"chapter": 0, "controls": "[" * 100_000 + "]" * 100_000}, "at most 10,000 characters"),
    ({"chapter": 0, "controls": json.dumps({"k" * 1_000_000: 1})}, "at most 10,000 characters"),
    ({"chapter": 0, "controls": json.dumps({"k" * 3000: 1})}, "chapter 0 has no control"),
])
def test_lecture_refuses_garbage_in_one_short_sentence(client, app_url, server_alive, kwargs, words):
    with pytest.raises(AppError) as excinfo:
        client.predict(**kwargs, api_name="/lecture")
    assert_clear_error(excinfo, words)
    assert len(str(excinfo.value)) < 300                 # never the whole input echoed back
    assert server_alive(app_url)


def test_hybrid_accepts_the_layers_its_schema_lists(client, tmp_path_factory):
    before = len(_app_log(tmp_path_factory))
    cosine, drift, table, summary = client.predict("elu1", "chosen layers", ["2", "3"], 0, 16, 0, 1, False,
                                                   api_name="/hybrid")
    assert "layers **2, 3**" in summary
    with pytest.raises(AppError) as excinfo:
        client.predict("elu1", "chosen layers", ["9"], 0, 16, 0, 1, False, api_name="/hybrid")
    assert_clear_error(excinfo, "layers must be a list of values from 0, 1, 2, 3, 4, 5; got ['9']")
    assert "Traceback" not in _app_log(tmp_path_factory)[before:]


def test_maps_arrays_export_from_the_api(client):
    from safetensors.numpy import load_file
    files = client.predict(source="random", preset="clustered", n=48, d=8, maps=["softmax", "elu1"], m=16,
                           api_name="/maps_arrays")
    # The file paths view_api() and docs/api.md promise, not a component update.
    assert isinstance(files, list) and all(isinstance(f, str) for f in files), files
    paths = files
    assert sorted(os.path.basename(p) for p in paths) == ["maps-arrays.npz", "maps-arrays.safetensors"]
    returns = client.view_api(print_info=False, return_format="dict")["named_endpoints"]["/maps_arrays"]["returns"]
    assert [r["python_type"]["type"] for r in returns] == ["list[filepath]"], returns
    npz = next(p for p in paths if str(p).endswith(".npz"))
    st = next(p for p in paths if str(p).endswith(".safetensors"))
    arrays = np.load(npz, allow_pickle=False)
    assert arrays["q"].shape == (48, 8) and arrays["A"].shape == (48, 48)
    assert arrays["A_hat.elu1"].shape == (48, 48)
    assert np.allclose(arrays["A"].sum(-1), 1, atol=1e-5)
    assert set(load_file(st)) == set(arrays.files) - {"meta_json", "provenance"}
