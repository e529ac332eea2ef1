"""Issue 40, break 5: a malformed request is answered in words and written to the log in
at most one line. Before: a list nested 900 deep in a /lecture argument wrote 3,014 lines
of traceback (the guard's cleaning recursed before any check); a lone surrogate sent to the
model box by fn_index answered 500 with a 77-line traceback; gradio's own answers to an
unknown session or event (queue/data?session_hash=nosuch, call/maps/nosuch) wrote 78 lines
of "Exception in ASGI application" each. Loopback only, bounded."""

from __future__ import annotations

import json
import logging

import gradio as gr
import httpx
import pytest

from explorer.ui import gradio_checks, server, validate
from explorer.ui.lecture_handlers import lecture_api
from explorer.ui.source import take_typed

pytestmark = pytest.mark.slow          # starts a server

MODELS = ["all-MiniLM-L6-v2", "SmolLM2-135M"]


@pytest.fixture(scope="module")
def small_app():
    """The lecture's API function, and the data panel's model box and its "other…" box
    (whose event echoes what was typed, unqueued), with the server's checks and guard."""
    with gr.Blocks() as demo:
        model = gr.Dropdown(MODELS, value=MODELS[0], elem_id="model")
        other = gr.Textbox(elem_id="model-other")
        other.submit(take_typed, other, [model, other], queue=False, api_visibility="private")
        model.input(lambda choice: gr.update(visible=choice == "x"), model, other, queue=False,
                    api_visibility="private")
        gr.api(lecture_api, api_name="lecture")
    gradio_checks.install(demo)
    server.configure_queue(demo)
    demo.launch(server_name="127.0.0.1", server_port=None, prevent_thread_lock=True, quiet=True,
                app_kwargs=server.app_kwargs(), show_error=True)
    try:
        yield demo
    finally:
        demo.close()


@pytest.fixture()
def log_lines(capfd, caplog):
    """The lines the server writes (stdout, stderr and log records) during a test."""
    caplog.set_level(logging.WARNING)
    capfd.readouterr()

    def read() -> list[str]:
        out, err = capfd.readouterr()
        return [line for line in (out + err).splitlines() if line.strip()] + [r.getMessage() for r in caplog.records]
    return read


def _fn_index(demo, fn) -> int:
    return next(i for i, dep in demo.fns.items() if dep.fn is fn or getattr(dep.fn, "__wrapped__", None) is fn)


def _lecture(url: str, arguments: list) -> tuple[str, str]:
    body = json.dumps({"data": arguments})
    with httpx.Client(timeout=60) as client:
        joined = client.post(f"{url}gradio_api/call/lecture", content=body, headers={"Content-Type": "application/json"})
        assert joined.status_code == 200, joined.text
        answer = client.get(f"{url}gradio_api/call/lecture/{joined.json()['event_id']}").text
    event, data = [block for block in answer.strip().split("\n\n") if block.startswith("event:")][-1].split("\n", 1)
    return event.removeprefix("event:").strip(), data.removeprefix("data:").strip()


def test_a_list_nested_900_deep_is_refused_in_one_log_line(small_app, log_lines):
    nested = json.loads("[" * 900 + "]" * 900)
    event, data = _lecture(small_app.local_url, [0, nested, "en", "{}", False, ""])
    assert event == "error"
    assert "nested more than 32 levels deep" in json.loads(data)["error"]
    lines = log_lines()
    assert len(lines) <= 1 and not any("Traceback" in line for line in lines), lines[:5]


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_arguments_past_the_bounds_are_refused_without_recursion():
    with pytest.raises(ValueError, match="nested more than 32"):
        validate.check_arguments([_nested(50_000)])        # deeper than any recursion could walk
    validate.check_arguments([_nested(32)])
    with pytest.raises(ValueError, match="more than 100,000 values"):
        validate.check_arguments([[0] * 60_000, {"a": [0] * 60_000}])
    validate.check_arguments([[["a", {"b": [1, 2]}]] * 100, "text", 3])      # what a page sends passes


def _predict(demo, fn, data: list, session: str = "hostile") -> httpx.Response:
    body = json.dumps({"data": data, "fn_index": _fn_index(demo, fn), "session_hash": session,
                       "event_data": None, "trigger_id": None})           # ensure_ascii: "\\ud800" travels as sent
    return httpx.post(f"{demo.local_url}gradio_api/run/predict", content=body,
                      headers={"Content-Type": "application/json"}, timeout=60)


def test_a_lone_surrogate_is_refused_in_words_or_replaced_never_a_traceback(small_app, log_lines):
    demo = small_app
    model_box = next(dep.fn for dep in demo.fns.values() if dep.inputs and dep.inputs[0].elem_id == "model")
    refused = _predict(demo, model_box, ["\ud800"])
    assert "lone surrogates" in refused.json()["error"]
    typed = _predict(demo, take_typed, ["my-model \ud800"])         # free text: replaced, and answered
    assert typed.status_code == 200 and "my-model \ufffd" in typed.text
    again = _predict(demo, model_box, ["\ud800"])                   # the session's own copy of the box
    assert "lone surrogates" in again.json()["error"]
    lines = log_lines()
    assert len(lines) <= 2 and not any("Traceback" in line for line in lines), lines[:5]


def test_the_refusal_is_said_in_chinese_on_the_chinese_page():
    from explorer.text import say_error

    with pytest.raises(ValueError) as caught:
        validate.check(validate.Bound("model", "choice", choices=tuple(MODELS)), "\ud800")
    assert "孤立代理项" in say_error(caught.value, "zh")
    with pytest.raises(ValueError) as caught:
        validate.check_arguments([_nested(40)])
    assert "嵌套超过 32 层" in say_error(caught.value, "zh")


@pytest.mark.parametrize("path", ["gradio_api/queue/data?session_hash=nosuch", "gradio_api/call/maps/nosuch"])
def test_an_unknown_session_or_event_is_logged_in_one_short_line(small_app, log_lines, path):
    answer = httpx.get(f"{small_app.local_url}{path}", timeout=30)
    assert answer.status_code == 200 and ("session_not_found" in answer.text or "404" in answer.text)
    lines = log_lines()
    assert len(lines) == 1 and len(lines[0]) < 200 and "404" in lines[0], lines[:5]


def test_an_event_sent_too_few_values_is_refused_in_one_line(small_app, log_lines):
    # Gradio's own refusal repeated every value sent and logged a traceback.
    demo = small_app
    model_box = next(dep.fn for dep in demo.fns.values() if dep.inputs and dep.inputs[0].elem_id == "model")
    body = json.dumps({"data": [], "fn_index": _fn_index(demo, model_box), "session_hash": "short",
                       "event_data": None, "trigger_id": None})
    answer = httpx.post(f"{demo.local_url}gradio_api/run/predict", content=body,
                        headers={"Content-Type": "application/json"}, timeout=60)
    assert "sends 0 values; this action takes 1" in answer.json()["error"]
    lines = log_lines()
    assert len(lines) <= 1 and not any("Traceback" in line for line in lines), lines[:5]
