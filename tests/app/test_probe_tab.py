"""The probe page: the upload is bounded before it is read, the handler answers with the
heatmap, the summary and the whole table, and the tab builds into the page."""

from __future__ import annotations

import gradio as gr
import pandas as pd
import pytest

from explorer.catalog import PROBE_MAX_FILE_BYTES
from explorer.ui import probe_tab


def _quiet(*_, **__):
    pass


def test_an_upload_is_refused_when_missing_too_large_or_not_utf8(tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"a\n" * (PROBE_MAX_FILE_BYTES // 2 + 1))
    latin = tmp_path / "latin.txt"
    latin.write_bytes("café\n".encode("latin-1"))
    for path, words in ((None, "no file"), (big, "bytes, over"), (latin, "UTF-8")):
        with pytest.raises(gr.Error, match=words):
            probe_tab.run_probe(path, progress=_quiet)


@pytest.mark.slow
def test_the_handler_draws_the_heatmap_and_writes_the_table(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The cat sat on the mat.\n<b>Kernels</b> weigh every key.\n", encoding="utf-8")
    fig, summary, status, csv = probe_tab.run_probe(str(corpus), maps=["elu1", "taylor2"], metric="map_rel_error",
                                                    lang="zh", progress=_quiet)
    assert len(fig.data[0].y) == 72 and list(fig.data[0].x) == ["elu+1", "Taylor-2"]
    assert len(summary) == 2 and "文本：2 段" in status
    table = pd.read_csv(csv)
    assert len(table) == 2 * 72 * 2 and set(table["map"]) == {"elu1", "taylor2"}


def test_the_tab_builds():
    with gr.Blocks() as demo:
        lang = gr.Radio(["en", "zh"], value="en")
        probe_tab.build(gr.Checkbox(False), lang)
    assert "probe" in [fn.api_name for fn in demo.fns.values()]


@pytest.mark.slow
def test_the_endpoint_answers_through_the_running_app(app_url, tmp_path):
    from gradio_client import Client, handle_file

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The cat sat on the mat.\n", encoding="utf-8")
    client = Client(app_url, verbose=False)
    plot, summary, status, csv = client.predict(file=handle_file(str(corpus)), maps=["elu1"], metric="kl_mean",
                                                m=64, seed=0, api_name="/probe")
    assert "Texts: 1 · heads: 72 · maps: 1 · rows in the table: 72." in status
    assert len(pd.read_csv(csv)) == 72
    with pytest.raises(Exception, match="not one of|maps"):
        client.predict(file=handle_file(str(corpus)), maps=["nope"], api_name="/probe")
