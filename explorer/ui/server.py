"""What the server adds to gradio for a page anyone may open: a Content-Security-Policy on
every response, a cap on request bodies, a share of the queue per session and per visitor
(client address), no work for an event nobody reads, no route around the queue, lanes for the
events the server's one budget bounds (taken in turn by visitors), sessions that expire, and
the export folder removed when the process is told to stop.

    configure_queue(demo)                     # gradio's queue, smaller, each visitor's share, the lanes;
                                              # in public, no direct route around it
    expire_states(demo)                       # every gr.State forgotten STATE_TTL_S after its last change
    demo.launch(app_kwargs=app_kwargs(), state_session_capacity=SESSION_CAPACITY, ...)
    expire_idle_sessions(demo)                # after launch: a session unused for SESSION_IDLE_S goes
    remove_exports_on_sigterm()
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from collections import Counter
from urllib.parse import parse_qs, urlsplit

from starlette.middleware import Middleware
from starlette.requests import Request

from ..text import normal_lang, say
from . import upload_sweep

log = logging.getLogger("explorer.ui.server")

# The page's own scripts, styles and images, and nothing from another host: no remote image,
# form target or script can be put into the page by a value it shows. Gradio writes its
# config into an inline script and runs the page's own js= through `new Function`, and
# plotly and gradio set inline styles, hence 'unsafe-inline' / 'unsafe-eval' for 'self' only.
# No frame-ancestors: a Space shows the app inside a frame of its own page.
CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "media-src 'self' data: blob:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
])

# A request body the app can need: the largest text (100,000 characters) sent as JSON with
# every character escaped is about 1.2 MB. Uploads go to gradio's upload route, which has its
# own limit (launch's max_file_size) and is left to it.
MAX_BODY_BYTES = 4 * 2 ** 20
UPLOAD_PATH_END = "/upload"

# Uploads on disk: gradio bounds one file (launch's max_file_size) and sweeps its folder every
# so often, and between sweeps five distinct 100 MiB uploads were stored in 3.7 s. One visitor
# (one address) may upload VISITOR_UPLOAD_BYTES within UPLOAD_WINDOW_S, and no upload is taken
# while gradio's folder (uploads and the files it serves) holds ALL_UPLOADS_BYTES.
UPLOAD_WINDOW_S = 3600
VISITOR_UPLOAD_BYTES = 512 * 2 ** 20
ALL_UPLOADS_BYTES = 4 * 2 ** 30

# The queue: what waits behind the running events. One visitor (one session) may have this
# many events waiting at once: a page's load alone joins four at once (its two restores, the
# lecture's early draw and the opened tab's select), and on a busy server none of them has
# started when the fourth arrives (a share of 3 refused a reloaded lecture page as "busy");
# then the draw and the summary its values trigger. 16 visitors each at their share still
# leave room for others.
QUEUE_SIZE = 128
SESSION_SHARE = 6
# One visitor is one client address, whatever session hashes it invents (they are free: 22
# invented sessions x 6 joins filled the queue in 3.1 s and everyone else got 503). An address
# may have this many events waiting or running at once: a few pages of its own (four joins each
# as they load), an eighth of the queue. Visitors behind one address (a classroom's NAT) share it.
VISITOR_SHARE = 16


# Sessions: gradio keeps a copy of the page's values (figures included) per session, 10,000
# sessions by default and none ever expiring on its own. Here at most SESSION_CAPACITY (the
# least recently used goes first), each gone after SESSION_IDLE_S without a request, and every
# gr.State value (a tab's view: arrays and figures) forgotten STATE_TTL_S after its last change.
SESSION_CAPACITY = 256
SESSION_IDLE_S = 3600
STATE_TTL_S = 3600
SESSION_SWEEP_S = 60


# Readers: a result is read through a stream the client opens after joining, by session
# (GET /gradio_api/queue/data?session_hash=...) or by event (GET /gradio_api/call/<name>/<id>).
# An event with none open for READER_GRACE_S is read by nobody: it does not start, and its
# loops stop (visitor_left). Gradio itself notices a closed stream only within ~10 s, and a
# stream never opened never: one POST of a sweep nobody read kept two cores busy for a minute.
READER_GRACE_S = 1.0
READERS_SCOPE_KEY = "explorer.readers"


class Readers:
    """The result streams open now on one server, counted by session hash and by event id."""

    def __init__(self):
        self._open: Counter = Counter()
        self._lock = threading.Lock()

    def opened(self, keys) -> None:
        with self._lock:
            self._open.update(keys)

    def closed(self, keys) -> None:
        with self._lock:
            self._open.subtract(keys)
            for key in keys:
                if self._open[key] <= 0:
                    del self._open[key]

    def reading(self, *keys) -> bool:
        with self._lock:
            return any(self._open.get(key, 0) > 0 for key in keys)


class UploadLedger:
    """The bytes each address uploaded within the last UPLOAD_WINDOW_S."""

    def __init__(self):
        self._sent: dict[str, list] = {}
        self._lock = threading.Lock()

    def sent(self, address: str) -> int:
        now = time.monotonic()
        with self._lock:
            recent = [(at, size) for at, size in self._sent.get(address, []) if now - at < UPLOAD_WINDOW_S]
            if recent:
                self._sent[address] = recent
            else:
                self._sent.pop(address, None)
            return sum(size for _, size in recent)

    def add(self, address: str, size: int) -> None:
        if size > 0:
            with self._lock:
                self._sent.setdefault(address, []).append((time.monotonic(), size))


def stored_upload_bytes() -> int:
    """What gradio's file folder holds now (uploads, and the files it serves)."""
    from gradio.utils import get_upload_folder

    total = 0
    for folder, _, files in os.walk(get_upload_folder()):
        for name in files:
            try:
                total += os.stat(os.path.join(folder, name)).st_size
            except OSError:          # swept meanwhile
                pass
    return total


def streamed_keys(scope) -> tuple:
    """The session hash or event id whose results a request streams; () for any other request."""
    if scope.get("method") != "GET":
        return ()
    path = str(scope.get("path", ""))
    if path.endswith("/queue/data"):
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        return tuple(query.get("session_hash", [])[:1])
    if "/call/" in path:
        segments = path.split("/call/", 1)[1].strip("/").split("/")
        return (segments[-1],) if len(segments) >= 2 else ()
    return ()


class PublicGuard:
    """ASGI middleware: the policy header on every response; a body over the cap refused
    with 413 before it is read (by its Content-Length), or as soon as it passes the cap
    (a body sent in chunks); the result streams open counted (Readers); and an error raised
    after an answer has started logged in one line."""

    def __init__(self, app, max_body: int = MAX_BODY_BYTES):
        self.app = app
        self.max_body = max_body
        self.readers = Readers()
        self.uploads = UploadLedger()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        scope[READERS_SCOPE_KEY] = self.readers      # what visitor_left asks of a joined event
        streamed = streamed_keys(scope)
        reading = [bool(streamed)]

        def stop_reading():
            if reading[0]:
                reading[0] = False
                self.readers.closed(streamed)

        if streamed:
            self.readers.opened(streamed)
        try:
            await self._guarded(scope, receive, send, stop_reading)
        finally:
            stop_reading()

    async def _guarded(self, scope, receive, send, stop_reading):
        upload = scope.get("method") == "POST" and scope.get("path", "").endswith(UPLOAD_PATH_END)
        capped = not scope.get("path", "").endswith(UPLOAD_PATH_END)
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length", b"")
        if capped and length.isdigit() and int(length) > self.max_body:
            return await self._refuse(send)
        visitor = visitor_address(Request(scope)) if upload else None
        upload_room = self._upload_room(visitor) if upload else None
        if upload and (upload_room <= 0 or (length.isdigit() and int(length) > upload_room)):
            return await self._refuse(send, self._upload_refusal(scope))

        state = {"started": False, "ended": False, "refused": False, "received": 0}

        async def send_with_policy(message):
            if state["refused"]:
                return                       # the 413 has gone out; the app's own answer is dropped
            if message["type"] == "http.response.start":
                state["started"] = True
                message = dict(message)
                message["headers"] = [*message.get("headers", []),
                                      (b"content-security-policy", CONTENT_SECURITY_POLICY.encode())]
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                state["ended"] = True
            await send(message)

        async def counted_receive():
            message = await receive()
            if message["type"] == "http.disconnect":
                stop_reading()               # a reader that went is gone now, not once its stream unwinds
            if message["type"] == "http.request":
                state["received"] += len(message.get("body", b""))
                over_cap = capped and state["received"] > self.max_body
                over_share = upload and state["received"] > upload_room
                if (over_cap or over_share) and not state["refused"]:
                    if not state["started"]:
                        await self._refuse(send, self._upload_refusal(scope) if over_share else None)
                    state["refused"] = True
                    return {"type": "http.disconnect"}
            return message

        try:
            await self.app(scope, counted_receive, send_with_policy)
        except Exception as exc:
            if state["refused"]:
                return
            if not state["started"]:
                raise                        # nothing answered yet: the server's own 500 (and traceback)
            # The client has its answer already: gradio's event streams answer an unknown session
            # or event ("session_not_found", "404: Not Found") and then raise, which would log
            # 78 lines of traceback for each such request. One line, and the answer closed.
            log.warning("%s %s: %s after the answer had started", scope.get("method", ""),
                        _shown_path(scope), _root_cause(exc))
            if not state["ended"]:
                try:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                except Exception:            # the client has gone: nothing to close
                    pass
        finally:
            if upload:
                self.uploads.add(visitor, state["received"])

    def _upload_room(self, visitor: str) -> int:
        """The bytes ``visitor`` may still upload: its share left, or none while gradio's
        folder is full."""
        if stored_upload_bytes() >= ALL_UPLOADS_BYTES:
            return 0
        return VISITOR_UPLOAD_BYTES - self.uploads.sent(visitor)

    def _upload_refusal(self, scope) -> str:
        lang = _page_lang(Request(scope))
        if stored_upload_bytes() >= ALL_UPLOADS_BYTES:
            return say("common.uploads_full", lang)
        return say("common.upload_share", lang, limit=VISITOR_UPLOAD_BYTES // 2 ** 20, minutes=UPLOAD_WINDOW_S // 60)

    async def _refuse(self, send, message: str | None = None):
        message = message or say("common.body_too_large", "en", limit=self.max_body // 2 ** 20)
        body = json.dumps({"error": message}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close"),
                                (b"content-security-policy", CONTENT_SECURITY_POLICY.encode())]})
        await send({"type": "http.response.body", "body": body})


SHOWN_PATH_CHARS = 120      # of a request's path in a log line: a path is whatever a client sends


def _shown_path(scope) -> str:
    path = str(scope.get("path", ""))
    return path if len(path) <= SHOWN_PATH_CHARS else path[:SHOWN_PATH_CHARS - 1] + "…"


def _root_cause(exc: BaseException) -> str:
    """The first exception of a ``raise ... from`` chain (what was raised, not what wrapped
    it), on one line."""
    seen = set()
    while exc.__cause__ is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc = exc.__cause__
    words = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}: {words}" if words else type(exc).__name__


def app_kwargs() -> dict:
    """launch(app_kwargs=...): the guard, inside gradio's own middleware."""
    return {"middleware": [Middleware(PublicGuard)]}


# The event groups whose work the server's one budget bounds (explorer/measure/budget.py):
# they run up to LANES events each, and the budget decides which may compute at once, what
# memory they get, and refuses at once what does not fit. A small request therefore never
# waits in a group's line behind large ones. The timed sweep, training and exports keep
# their one-at-a-time groups (timings need a quiet CPU; one training; one PNG browser).
BUDGETED_GROUPS = ("compute", "quality", "summary")
LANES = 4


def configure_queue(demo, default_concurrency_limit: int = 2, public: bool | None = None):
    """Gradio's queue at QUEUE_SIZE, with each session's share of it (share_queue), and the
    budgeted groups' lanes (open_lanes). On a public server (``public``; by default
    explorer.catalog.public_server) the direct route is closed to queued events (api_open)."""
    if public is None:
        from ..catalog import public_server
        public = public_server()
    # POST /gradio_api/run/<name> runs an event at once, outside the queue: no share, no lane,
    # and no disconnect noticed (a sweep whose client left after 6 s computed 53 s more).
    # Gradio closes it to queued events only when SYSTEM=spaces; a public server closes it
    # itself. The page's own unqueued events (showing a box, a language) still use it.
    demo.queue(max_size=QUEUE_SIZE, default_concurrency_limit=default_concurrency_limit,
               api_open=not public)
    share_queue(demo)
    take_turns(demo)
    skip_unread_events(demo)
    open_lanes(demo)


def open_lanes(demo, lanes: int = LANES, groups=BUDGETED_GROUPS) -> int:
    """Let every event of ``groups`` run ``lanes`` at a time (before the first event is queued:
    gradio fixes a group's limit when it first sees it); how many events were changed."""
    changed = 0
    for fn in demo.fns.values():
        if fn.concurrency_id in groups and fn.concurrency_limit != lanes:
            fn.concurrency_limit = lanes
            changed += 1
    return changed


def share_queue(demo, share: int = SESSION_SHARE, visitor_share: int = VISITOR_SHARE) -> None:
    """Refuse an event, in words, when its session already has ``share`` events waiting, or its
    visitor (visitor_address) ``visitor_share`` events waiting or running, so that no visitor
    can fill the queue (gradio bounds only the queue as a whole)."""
    queue = demo._queue
    push = queue.push

    async def push_within_share(body, request, username):
        session = getattr(body, "session_hash", None)
        waiting = [event for events in queue.event_queue_per_concurrency_id.values() for event in events.queue]
        if session is not None and sum(1 for event in waiting if event.session_hash == session) >= share:
            return False, say("common.queue_share", _page_lang(request), count=share), "queue_full"
        visitor = visitor_address(request)
        running = [event for job in list(queue.active_jobs) if job for event in job]
        if sum(1 for event in waiting + running if visitor_address(event.request) == visitor) >= visitor_share:
            return False, say("common.queue_visitor_share", _page_lang(request), count=visitor_share), "queue_full"
        return await push(body, request, username)

    queue.push = push_within_share


def turn_order(line: list, running: Counter, group: str, address=None) -> list:
    """The events of one group's line in the order they should run: visitors take turns. An
    event's turn is how many events its visitor already runs in the group plus how many of its
    own wait before it; the earliest turn runs first, and among equal turns the one that came
    first. A visitor's own events keep their order (a page's chained events stay in step)."""
    address = address or (lambda event: visitor_address(event.request))
    seen = Counter()
    turns = []
    for position, event in enumerate(line):
        who = address(event)
        seen[who] += 1
        turns.append((running[(who, group)] + seen[who], position))
    return [line[position] for _, position in sorted(turns)]


def take_turns(demo) -> None:
    """Each group's lanes go round the visitors (turn_order) instead of first come, first served:
    a visitor who queued sixteen sweeps holds at most its turn of the lanes, and another
    visitor's maps request runs as soon as a lane is free, not after the sixteen."""
    queue = demo._queue
    pick = queue.get_events

    def get_events_in_turn():
        running = Counter((visitor_address(event.request), event.fn.concurrency_id)
                          for job in list(queue.active_jobs) if job for event in job)
        for group, line in queue.event_queue_per_concurrency_id.items():
            if len(line.queue) > 1:
                line.queue[:] = turn_order(line.queue, running, group)
        return pick()

    queue.get_events = get_events_in_turn


def visitor_address(request) -> str:
    """The client address a request came from. On a Space, the right-most entry of
    X-Forwarded-For: the Spaces proxy appends the address it saw, so whatever a client writes
    into the header itself stands to its left. Elsewhere the socket's peer, as uvicorn gives it
    (which takes X-Forwarded-For only from a proxy on this host: FORWARDED_ALLOW_IPS)."""
    if request is None:
        return "unknown"
    if os.environ.get("SPACE_ID", "").strip():
        forwarded = ",".join(request.headers.getlist("x-forwarded-for"))
        appended = forwarded.rsplit(",", 1)[-1].strip()
        if appended:
            return appended
    client = getattr(request, "client", None)
    return getattr(client, "host", None) or "unknown"


def expire_states(demo, ttl_s: float = STATE_TTL_S) -> int:
    """Give every gr.State of ``demo`` gradio's own time_to_live (at most ``ttl_s``); how many."""
    import gradio as gr

    states = [block for block in demo.blocks.values() if isinstance(block, gr.State)]
    for state in states:
        state.time_to_live = min(state.time_to_live, ttl_s)
    return len(states)


def forget_idle_sessions(holder, idle_s: float = SESSION_IDLE_S, now=None) -> int:
    """Drop the sessions of gradio's state holder not used for ``idle_s``; how many went."""
    import datetime

    now = now or datetime.datetime.now()
    with holder.lock:
        idle = [session for session, used in list(holder.time_last_used.items())
                if (now - used).total_seconds() > idle_s]
        for session in idle:
            holder.session_data.pop(session, None)
            holder.time_last_used.pop(session, None)
    for session in idle:
        upload_sweep.sweep(session)                 # and the files its events read
    return len(idle)


def expire_idle_sessions(demo, idle_s: float = SESSION_IDLE_S, every_s: float = SESSION_SWEEP_S) -> threading.Thread:
    """Forget idle sessions every ``every_s`` in a background thread (after launch)."""
    def sweep():
        while True:
            time.sleep(every_s)
            holder = getattr(demo, "state_holder", None)
            if holder is not None:
                forget_idle_sessions(holder, idle_s)

    thread = threading.Thread(target=sweep, name="session-expiry", daemon=True)
    thread.start()
    return thread


def _page_lang(request) -> str:
    """The language of the page an event comes from: its address (lang=) is the join's Referer."""
    try:
        query = parse_qs(urlsplit(request.headers.get("referer", "")).query)
        return normal_lang((query.get("lang") or ["en"])[0])
    except Exception:
        return "en"


def remove_exports_on_sigterm() -> None:
    """On SIGTERM (a Space or docker stopping the app) remove the export folder first, then
    stop as on Ctrl-C, so that gradio closes its server; atexit alone never runs on SIGTERM."""
    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signum, frame):
        from . import downloads
        downloads._remove_export_root()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)


def visitor_left(request):
    """A function that turns true once gradio has let go of ``request``'s event: its client
    disconnected (gradio marks the running event not alive) or cancelled it (gradio cancels
    the task that runs it), or, behind PublicGuard, no client reads its result (``unread``).
    Gradio itself notices the first two only when a generator next yields, and a plain handler
    never: the work's loops ask this at every step instead.

    The event is the running job whose body came with this very request. Outside a queued
    request (scripts, tests calling a handler) it never turns true."""
    fastapi_request = getattr(request, "request", None) if request is not None else None
    app = getattr(fastapi_request, "app", None)
    get_blocks = getattr(app, "get_blocks", None)
    event_queue = getattr(get_blocks(), "_queue", None) if callable(get_blocks) else None
    if event_queue is None:
        return lambda: False

    def mine():
        for job in list(getattr(event_queue, "active_jobs", ()) or ()):
            for event in job or ():
                if getattr(getattr(event, "data", None), "request", None) is fastapi_request:
                    return event
        return None

    event = mine()
    if event is None:               # not a queued event (an unqueued route): nothing to watch
        return lambda: False
    # /cancel cancels the asyncio task that runs the event (named after the event's id); a
    # plain handler's thread runs on regardless, so the task's state is what tells.
    try:
        tasks = list(getattr(event_queue, "_asyncio_tasks", ()) or ())
    except RuntimeError:            # the set changed while copied: go without the task
        tasks = []
    task = next((t for t in tasks if t.get_name().endswith(f"<gradio-sep>{event._id}")), None)

    readers = getattr(fastapi_request, "scope", {}).get(READERS_SCOPE_KEY)

    def left() -> bool:
        if not event.alive:
            return True
        if task is not None and (task.done() or task.cancelling() > 0):
            return True
        return readers is not None and unread(event, readers)
    return left


def unread(event, readers: Readers, grace_s: float = READER_GRACE_S) -> bool:
    """Whether nobody reads ``event``'s result: no stream open for its session or for itself,
    and none since it joined ``grace_s`` ago (a client opens its stream right after joining)."""
    return (time.monotonic() - event.enqueue_time > grace_s
            and not readers.reading(event.session_hash, event._id))


def skip_unread_events(demo) -> None:
    """Run no event whose result nobody reads: one that waited in the queue while its client
    went (or never opened its stream) is answered "stopped" without being run."""
    original = demo.process_api

    async def process_api(*args, **kwargs):
        import gradio as gr

        if visitor_left(kwargs.get("request"))():
            raise gr.Error(say("common.toast_stopped", _page_lang(getattr(kwargs.get("request"), "request", None))),
                           print_exception=False)
        return await original(*args, **kwargs)
    demo.process_api = process_api
