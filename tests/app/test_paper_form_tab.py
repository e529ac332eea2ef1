"""The maps tab's "papers' form" box: drawn by the handler, said in the page's language, kept in the link."""

from __future__ import annotations

from urllib.parse import parse_qs

from explorer.ui import maps_tab


def test_the_handler_draws_the_papers_form_and_the_link_keeps_it():
    out = maps_tab.run_maps(source="random", n=16, d=8, maps=["softmax"], mechanisms=["retnet", "scalar_gate"],
                            paper=True, lang="zh")
    view, query = out[4], out[5]
    assert view.labels["retnet"] == "RetNet γ (paper's form)" and view.labels["scalar_gate"] == "scalar gate (paper's form)"
    from explorer.text import say
    assert "论文原式" in say(view.mechanism_note, "zh") and "论文原式" in out[0].layout.title.subtitle.text
    assert parse_qs(query.lstrip("?"))["mpaper"][0] in ("true", "1")
    plain = maps_tab.run_maps(source="random", n=16, d=8, maps=["softmax"], mechanisms=["retnet"])
    assert plain[4].labels["retnet"] == "RetNet γ"

