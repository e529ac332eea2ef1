"""What the browser tests share: what they wait on (conditions the page itself reports, never
a fixed time), the page they watch (``Watched``) and where they save what they see.

``watch(page_or_context)`` installs, before the page's own scripts run, a record of

- every toast the page showed (kind and text), kept after gradio removes it, so a notice
  that came and went while the test was waiting for something else is still read;
- the page's activity: requests to the app still in flight (the heartbeat left out), the
  page's queued events not yet completed (read from the queue's joins and event stream),
  short timers still pending (the page's own deferred relayouts, gradio's chained steps)
  and animation frames drawn since the last of these.

``wait_quiet`` then waits until nothing is in flight or pending and the page has drawn a
few frames with nothing new; on a loaded machine that takes longer, and the wait follows.
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

from helpers import ROOT

ARTIFACTS = ROOT / "test-artifacts"           # screenshots and logs of a run (ignored by git)
TIMEOUT_MS = int(os.environ.get("TEST_TIMEOUT_MS", 300_000))      # generous: a busy 2-core machine (SmolLM2's first read, a queue behind other work)

# Timers longer than this are not the page finishing what it started (toasts expire after
# 10 s, status timers tick): they do not keep it busy.
SHORT_TIMER_MS = 3000

WATCH_JS = """(() => {
  if (window.__watch) { return; }
  const w = window.__watch = {fetches: 0, events: new Set(), done: new Set(), streams: new Map(),
                              timers: new Map(), open: new Map(), frames: 0, since: performance.now(), toasts: []};
  const busy = () => { w.frames = 0; w.since = performance.now(); };

  const fetch0 = window.fetch;
  // The page's queued events: each joins (/queue/join answers its id) and is done when the
  // queue's event stream says process_completed. An open stream is not itself work: gradio
  // can open one after its events already finished on the one before (a fast event whose
  // messages came before its join's answer), and the server then holds it open, idle.
  const finished = (id) => { if (id) { w.done.add(id); w.events.delete(id); busy(); } };
  const readMessages = (text) => text.split('\\n').forEach((line) => {
    if (!line.startsWith('data:')) { return; }
    try { const m = JSON.parse(line.slice(5)); if (m.msg === 'process_completed') { finished(m.event_id); } } catch (e) { /* a partial line */ }
  });
  window.fetch = function (input, init) {
    const url = String((input && input.url) || input);
    const answer = fetch0.apply(this, arguments);
    if (url.includes('/heartbeat/')) { return answer; }
    const key = Symbol(url);
    w.fetches += 1; w.open.set(key, url); busy();
    const done = () => { w.fetches -= 1; w.open.delete(key); busy(); };
    // An answer counts until it has arrived (a join's until its event id is read); a stream
    // is read for its events' ends as the page reads it.
    return answer.then((r) => {
      if (url.includes('/queue/join') && r.ok) {
        r.clone().json().then((j) => { if (j && j.event_id && !w.done.has(j.event_id)) { w.events.add(j.event_id); } })
          .catch(() => {}).finally(done);
        return r;
      }
      if (!r.body || !(r.headers.get('content-type') || '').includes('event-stream')) { done(); return r; }
      done();
      w.streams.set(key, url);
      const closed = () => { w.streams.delete(key); busy(); };
      const source = r.body;
      const decoder = new TextDecoder();
      let body = null, rest = '';
      Object.defineProperty(r, 'body', {configurable: true, get() {
        if (body) { return body; }
        const reader = source.getReader();
        body = new ReadableStream({
          pull(c) {
            return reader.read().then(({done: end, value}) => {
              if (end) { closed(); c.close(); return; }
              const lines = (rest + decoder.decode(value, {stream: true})).split('\\n');
              rest = lines.pop();
              readMessages(lines.join('\\n'));
              c.enqueue(value);
            }, (err) => { closed(); c.error(err); });
          },
          cancel(reason) { closed(); return reader.cancel(reason); },
        });
        return body;
      }});
      return r;
    }, (err) => { done(); throw err; });
  };

  const set0 = window.setTimeout, clear0 = window.clearTimeout;
  window.setTimeout = function (fn, ms, ...rest) {
    if (typeof fn !== 'function' || Number(ms) > %(short)d) { return set0.call(window, fn, ms, ...rest); }
    let id = null;
    id = set0.call(window, function () { w.timers.delete(id); busy(); return fn.apply(this, arguments); }, ms, ...rest);
    w.timers.set(id, Number(ms) || 0);
    return id;
  };
  window.clearTimeout = function (id) { w.timers.delete(id); return clear0.call(window, id); };

  const frame = () => { w.frames += 1; requestAnimationFrame(frame); };
  requestAnimationFrame(frame);

  const seen = new WeakMap();
  const record = () => document.querySelectorAll('[data-testid="toast-body"]').forEach((el) => {
    const text = (el.innerText || el.textContent || '').trim();
    if (!text) { return; }
    const kind = ['error', 'warning', 'info', 'success'].find((k) => el.classList.contains(k)) || el.className;
    if (!seen.has(el)) { const entry = {kind, text}; seen.set(el, entry); w.toasts.push(entry); }
    else { Object.assign(seen.get(el), {kind, text}); }
  });
  new MutationObserver(record).observe(document, {childList: true, subtree: true, characterData: true});
})();""" % {"short": SHORT_TIMER_MS}

QUIET_JS = """([frames, ms, requests, queue]) => { const w = window.__watch;
  return !!w && (!requests || w.fetches === 0) && (!queue || w.events.size === 0) && w.timers.size === 0
         && w.frames >= frames && performance.now() - w.since >= ms; }"""


def watch(target):
    """Install the record on a page or a context; before ``goto`` (it runs on each new document)."""
    target.add_init_script(WATCH_JS)
    return target


def wait_quiet(page, frames: int = 10, ms: int = 500, requests: bool = True, queue: bool = True,
               timeout: int = TIMEOUT_MS):
    """Until the page has finished what it started: every request to the app answered (unless
    ``requests`` is False), every queued event of the page completed (unless ``queue`` is False: the lecture computes the next chapter in the
    background after each draw), no short timer pending, and ``frames`` animation frames and
    ``ms`` milliseconds drawn since the last of these."""
    from playwright.sync_api import TimeoutError as PageTimeout
    try:
        page.wait_for_function(QUIET_JS, arg=[frames, ms, requests, queue], polling="raf", timeout=timeout)
    except PageTimeout:
        busy = page.evaluate("() => { const w = window.__watch; return w && {requests: [...w.open.values()], "
                             "events: [...w.events], streams: [...w.streams.values()], "
                             "timers_ms: [...w.timers.values()], frames: w.frames}; }")
        raise AssertionError(f"the page was still busy after {timeout} ms: {busy}\n{_server_side(page)}") from None


# Where the app under test is (tests/conftest.py sets these when it starts it): on a timeout
# the failure says what the page still waits for and what every thread of the server is doing.
PENDING_JS = """() => [...document.querySelectorAll('[data-testid="status-tracker"], .wrap.default, .progress-text')]
  .filter((el) => el.offsetParent !== null && (el.innerText || '').trim())
  .map((el) => (el.closest('[id]') || {}).id + ': ' + el.innerText.trim().replace(/\\s+/g, ' ').slice(0, 80))"""


def _server_side(page) -> str:
    import signal
    import time
    try:
        pending = page.evaluate(PENDING_JS)
    except Exception as exc:            # the page itself may be gone
        pending = f"(not read: {exc})"
    lines = [f"pending on the page: {pending}"]
    pid, log = os.environ.get("EXPLORER_TEST_APP_PID"), os.environ.get("EXPLORER_TEST_APP_LOG")
    if pid and log:
        try:
            os.kill(int(pid), signal.SIGUSR1)
            time.sleep(2)
            with open(log, encoding="utf-8", errors="replace") as fh:
                lines.append("the server's log, last 8000 characters:\n" + fh.read()[-8000:])
        except (OSError, ValueError) as exc:
            lines.append(f"(no stack dump: {exc})")
    return "\n".join(lines)


def toasts(page, kind: str | None = None) -> list[str]:
    """The text of every toast the page has shown since it loaded (of one kind: "error", ...)."""
    shown = page.evaluate("() => (window.__watch || {toasts: []}).toasts")
    return [t["text"] for t in shown if kind is None or t["kind"] == kind]


def wait_toast(page, text: str, timeout: int = TIMEOUT_MS) -> list[str]:
    """Until a toast holding ``text`` has been shown (now or earlier); then every toast seen."""
    from playwright.sync_api import TimeoutError as PageTimeout
    try:
        page.wait_for_function("(text) => ((window.__watch || {toasts: []}).toasts).some((t) => t.text.includes(text))",
                               arg=text, timeout=timeout)
    except PageTimeout:
        raise AssertionError(f"no toast holding {text!r} within {timeout} ms; shown: {toasts(page)}") from None
    return toasts(page)


# A box that has kept its place and size over the last frames (a figure resized to its box).
STEADY_JS = """([selector, frames]) => {
  const el = document.querySelector(selector);
  if (!el) { return false; }
  const r = el.getBoundingClientRect(), key = [r.left, r.top, r.width, r.height].join(',');
  const memo = (window.__steady = window.__steady || {});
  const last = memo[selector];
  if (!last || last.key !== key) { memo[selector] = {key, count: 0}; return false; }
  last.count += 1;
  return last.count >= frames;
}"""


def wait_steady(page, selector: str, frames: int = 5, timeout: int = TIMEOUT_MS):
    """Until the element's box has not moved or changed size for ``frames`` animation frames."""
    page.evaluate("(selector) => { if (window.__steady) { delete window.__steady[selector]; } }", selector)
    page.wait_for_function(STEADY_JS, arg=[selector, frames], polling="raf", timeout=timeout)


LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}


class Watched:
    """A page with its console errors, the hosts it contacted and every toast it showed
    (the record of ``watch``; made before the page's ``goto``)."""

    def __init__(self, page):
        self.page = watch(page)
        self.errors: list[str] = []
        self.hosts: set[str] = set()
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", lambda r: self.hosts.add(urlparse(r.url).hostname or r.url))

    def check_clean(self):
        errors = toasts(self.page, "error")          # shown at any time, gone since or not
        assert not errors, errors
        assert not self.errors, self.errors
        foreign = {h for h in self.hosts if h not in LOCAL_HOSTS and not h.startswith(("data:", "blob:"))}
        assert not foreign, f"requests left the machine: {foreign}"


# The texts a part of the page (a tab) shows: its visible text, and the text of its figures
# but their tick labels (the tokens of the text and the numbers).
TEXTS_JS = """(sel) => {
  const root = document.querySelector(sel);
  if (!root) { return []; }
  const out = root.innerText.split('\\n');
  root.querySelectorAll('.js-plotly-plot svg text').forEach((t) => {
    if (!t.closest('.xtick, .ytick, .hovertext')) { out.push(t.textContent); }
  });
  return out.map((s) => s.trim()).filter((s) => s);
}"""
