"""One validation path for everything a request or a link sends: the same bounds and the
same words on every endpoint, every control and every link parameter.

- ``check(bound, raw)`` takes a value as a request sends it (JSON: a number, a string, a
  list, anything) and returns it typed, or raises ValueError with one sentence that names
  the parameter and its allowed range: "chapter must be a whole number from 0 to 6; got
  2.5." Nothing is rounded, defaulted or parsed past a size limit.
- ``link(bound, raw, notices, default)`` reads a link parameter (always a string): out of
  range is clamped, garbage falls back to the default, and both say so in ``notices``
  ("Link parameter ch = 99 is outside 0..6; using 6.").
- ``json_object`` reads a JSON object sent as text (the lecture's controls), refusing
  oversized, too deeply nested or non-object input in one sentence.
- ``explorer.ui.gradio_checks.install(blocks)`` puts ``check`` in front of gradio's own
  preprocessing for every input component (and the lecture's request has its own checks,
  ``explorer.ui.lecture_checks``).
- ``link_shape`` clamps a link's random-data N and d to values that run together.

A message never repeats more than ``MAX_ECHO`` characters of what was sent (``shown``).
"""

from __future__ import annotations

import inspect
import json
import logging
import math
import re
import reprlib
from dataclasses import dataclass

from ..catalog import LEARN_MAX_TEXT_CHARS, LEARN_MAX_TEXTS
from ..text import Message, said

log = logging.getLogger("explorer.ui")

MAX_ECHO = 80                 # characters of the user's input a message may repeat
MAX_NUMBER_CHARS = 40         # a number sent as text longer than this is not a number anyone means
MAX_JSON_CHARS = 10_000       # the lecture's controls: a handful of names and numbers
MAX_CHOICE_CHARS = 200        # a free-form choice (the head box) longer than this is refused
MAX_JSON_DEPTH = 32           # Python's json recurses per level; refuse long before its limit
MAX_ARGUMENT_ITEMS = 100_000  # values (list items, object entries) in one request's arguments

_WHOLE = re.compile(r"[+-]?\d+")


# ---------------------------------------------------------------------------------------
# Showing what was sent, briefly
# ---------------------------------------------------------------------------------------

_short = reprlib.Repr()
_short.maxlevel, _short.maxdict, _short.maxlist, _short.maxtuple = 2, 3, 4, 4
_short.maxstring, _short.maxother = MAX_ECHO - 20, MAX_ECHO - 20


def shown(raw) -> str:
    """``raw`` as a message may quote it: at most ``MAX_ECHO`` characters, with the full
    length said when cut. Safe on anything a request can hold (huge integers, 1 MB strings,
    lists nested 100,000 deep)."""
    if isinstance(raw, bool) or raw is None:
        return json.dumps(raw)
    if isinstance(raw, int):
        if raw.bit_length() > 128:
            return f"a {math.floor(raw.bit_length() * math.log10(2)) + 1:,}-digit number"
        return f"{raw:,}" if abs(raw) >= 10_000 else str(raw)
    if isinstance(raw, float):
        return repr(raw)
    if isinstance(raw, str):
        if len(raw) <= MAX_ECHO - 2:
            return repr(raw)
        return repr(raw[:MAX_ECHO - 30]) + f"… ({len(raw):,} characters)"
    try:
        text = _short.repr(raw)
    except Exception:  # a repr that fails: name the type only
        text = f"a {type(raw).__name__}"
    return text if len(text) <= MAX_ECHO else text[:MAX_ECHO - 1] + "…"


def _number(x) -> str:
    """1,234 for whole numbers below 10^15, else four significant figures (1.845e+19)."""
    if isinstance(x, int) and x.bit_length() > 1000:
        return shown(x)
    if abs(x) < 1e15 and float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:.4g}"


# ---------------------------------------------------------------------------------------
# Bounds
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Bound:
    """What one parameter accepts. ``kind``: "int", "float", "bool", "choice" (one of
    ``choices``), "choices" (a list of them), "free" (a short string or whole number, e.g.
    a head box that also takes "mean") or "text". ``optional``: None passes through."""

    name: str
    kind: str
    lo: float | None = None
    hi: float | None = None
    choices: tuple = ()
    optional: bool = False
    max_chars: int | None = None

    def allowed(self) -> Message:
        """What the parameter accepts, as a message ("a whole number from 0 to 6")."""
        if self.kind in ("int", "float"):
            what = "whole" if self.kind == "int" else "number"
            if self.lo is not None and self.hi is not None:
                return Message(f"common.link_{what}_range", lo=_number(self.lo), hi=_number(self.hi))
            if self.lo is not None:
                return Message(f"common.link_{what}_at_least", lo=_number(self.lo))
            if self.hi is not None:
                return Message(f"common.link_{what}_at_most", hi=_number(self.hi))
            return Message(f"common.link_{what}")
        if self.kind == "bool":
            return Message("common.link_true_false")
        if self.kind in ("choice", "choices"):
            names = [str(c) for c in self.choices]
            key = "common.link_one_of" if self.kind == "choice" else "common.link_list_of"
            if len(names) > 16:
                return Message(key + "_many", names=", ".join(names[:16]), count=len(names))
            return Message(key, names=", ".join(names))
        if self.kind == "free":
            return Message("common.link_number_or_word", n=self.max_chars or MAX_CHOICE_CHARS)
        if self.max_chars:
            return Message("common.link_text_at_most", n=f"{self.max_chars:,}")
        return Message("common.link_text")


def refusal(bound: Bound, raw) -> ValueError:
    """The one sentence every refusal reads as."""
    return ValueError(Message("common.refusal_must", name=bound.name, allowed=bound.allowed(), got=shown(raw)))


def check(bound: Bound, raw):
    """``raw`` typed and within ``bound``, or ValueError (see ``refusal``)."""
    if raw is None and bound.optional:
        return None
    kind = bound.kind
    if kind != "text" and isinstance(raw, str):
        _refuse_surrogates(bound.name, raw)
    if kind == "int":
        value = _whole(raw)
    elif kind == "float":
        value = _real(raw)
    elif kind == "bool":
        value = _flag(raw)
    elif kind == "choice":
        value = _choice(raw, bound.choices)
    elif kind == "choices":
        if not isinstance(raw, (list, tuple)) or len(raw) > max(len(bound.choices), 1) * 4:
            raise refusal(bound, raw)
        value = [_choice(x, bound.choices) for x in raw]
        if any(v is _BAD for v in value):
            raise refusal(bound, raw)
        return list(dict.fromkeys(value))
    elif kind == "free":
        value = _free(raw, bound.max_chars or MAX_CHOICE_CHARS)
    else:
        value = raw if isinstance(raw, str) and (bound.max_chars is None or len(raw) <= bound.max_chars) else _BAD
    if value is _BAD:
        raise refusal(bound, raw)
    if kind in ("int", "float") and not _within(value, bound):
        raise refusal(bound, raw)
    return value


_BAD = object()


def surrogates(text: str) -> int:
    """How many lone surrogates ``text`` holds: characters UTF-8 cannot encode, which a JSON
    request can carry ("\\ud800") and no answer can (gradio's encoder fails on them)."""
    try:
        text.encode("utf-8")
        return 0
    except UnicodeEncodeError:
        return sum(1 for ch in text if 0xD800 <= ord(ch) <= 0xDFFF)


def without_surrogates(text: str) -> tuple[str, int]:
    """``text`` with its lone surrogates replaced by U+FFFD, and how many there were."""
    bad = surrogates(text)
    if not bad:
        return text, 0
    return "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text), bad


def _refuse_surrogates(name: str, raw: str) -> None:
    """A value that is not free text (a choice, a number sent as text) is refused whole
    when it holds lone surrogates: no choice or number is spelt with them."""
    bad = surrogates(raw)
    if bad:
        raise ValueError(Message("common.refusal_surrogates", name=name, count=bad))


# ---------------------------------------------------------------------------------------
# A request's arguments as a whole
# ---------------------------------------------------------------------------------------

def check_arguments(values) -> None:
    """Refuse a request's arguments (JSON as it arrived) nested deeper than MAX_JSON_DEPTH or
    holding more than MAX_ARGUMENT_ITEMS values, in one sentence. Walked with a list of its
    own, never by recursion, and left as soon as a bound is passed: a list nested 900 deep
    exhausts Python's recursion in the first function that walks it by calling itself."""
    pending = [(value, 1) for value in values]
    items = 0
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            children = list(value.values())
        elif isinstance(value, (list, tuple)):
            children = value
        else:
            continue
        if depth > MAX_JSON_DEPTH:
            raise ValueError(Message("common.arguments_too_deep", limit=MAX_JSON_DEPTH))
        items += len(children)
        if items > MAX_ARGUMENT_ITEMS:
            raise ValueError(Message("common.arguments_too_many", limit=f"{MAX_ARGUMENT_ITEMS:,}"))
        pending.extend((child, depth + 1) for child in children)


def _whole(raw):
    if isinstance(raw, bool):
        return _BAD
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        return int(raw) if math.isfinite(raw) and raw.is_integer() else _BAD
    if isinstance(raw, str):
        text = raw.strip()
        if not text or len(text) > MAX_NUMBER_CHARS:
            return _BAD
        if _WHOLE.fullmatch(text):
            return int(text)
        try:
            value = float(text)             # "1e3", "12.0"
        except ValueError:
            return _BAD
        return int(value) if math.isfinite(value) and value.is_integer() else _BAD
    return _BAD


def _real(raw):
    if isinstance(raw, bool):
        return _BAD
    if isinstance(raw, int):
        if raw.bit_length() > 1000:
            return _BAD
        raw = float(raw)
    if isinstance(raw, str):
        text = raw.strip()
        if not text or len(text) > MAX_NUMBER_CHARS:
            return _BAD
        try:
            raw = float(text)
        except ValueError:
            return _BAD
    if isinstance(raw, float):
        return raw if math.isfinite(raw) else _BAD
    return _BAD


def _flag(raw):
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str) and raw.strip().lower() in ("true", "false", "1", "0", "yes", "no", "on", "off"):
        return raw.strip().lower() in ("true", "1", "yes", "on")
    return _BAD


def _choice(raw, choices):
    """The choice ``raw`` names: itself, or the choice whose text it is ("2" for 2, 2 for "2")."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        return _BAD
    if isinstance(raw, str) and len(raw) > MAX_CHOICE_CHARS:
        return _BAD
    for choice in choices:
        if type(choice) is type(raw) and choice == raw:
            return choice
    text = str(raw).strip()
    if isinstance(raw, float) and raw.is_integer():
        text = str(int(raw))
    for choice in choices:
        if not isinstance(choice, bool) and str(choice) == text:
            return choice
    return _BAD


def _free(raw, max_chars):
    if isinstance(raw, bool):
        return _BAD
    if isinstance(raw, int):
        return str(raw) if 0 <= raw < 10 ** 9 else _BAD
    if isinstance(raw, str) and len(raw) <= max_chars:
        # A negative number is refused, as by every numeric control (a layer of -1 is).
        return _BAD if _WHOLE.fullmatch(raw.strip()) and raw.strip().startswith("-") else raw
    return _BAD


def _within(value, bound: Bound) -> bool:
    return (bound.lo is None or value >= bound.lo) and (bound.hi is None or value <= bound.hi)


def clamp(value, bound: Bound):
    lo = bound.lo if bound.lo is not None else value
    hi = bound.hi if bound.hi is not None else value
    fixed = min(max(value, lo), hi)
    return type(value)(fixed)


# ---------------------------------------------------------------------------------------
# Links: never refused, clamped or defaulted with a notice
# ---------------------------------------------------------------------------------------

def link(bound: Bound, raw, notices: list | None = None, default=None, key: str | None = None):
    """A link parameter: ``raw`` typed and clamped into ``bound``; ``default`` when it cannot
    be read. What changed is said in ``notices`` in the words every tab uses."""
    tell = notices.append if notices is not None else (lambda message: None)
    key = key or bound.name
    if raw is None:
        return default
    kind = bound.kind
    if kind in ("int", "float"):
        value = _whole(raw) if kind == "int" else _real(raw)
        if value is _BAD:
            tell(Message("common.link_invalid", name=key, raw=shown(raw), allowed=bound.allowed(),
                        using=_using(default)))
            return default
        fixed = clamp(value, bound)
        if fixed != value:
            lo = "" if bound.lo is None else _number(bound.lo)
            hi = "" if bound.hi is None else _number(bound.hi)
            tell(Message("common.link_outside", name=key, value=_number(value), lo=lo, hi=hi, fixed=_number(fixed)))
        return fixed
    try:
        return check(bound, raw)
    except ValueError:
        tell(Message("common.link_invalid", name=key, raw=shown(raw), allowed=bound.allowed(), using=_using(default)))
        return default


def _using(default):
    """What a link falls back to, as its notice names it."""
    return Message("common.link_default") if default is None else shown(default)


# ---------------------------------------------------------------------------------------
# A JSON object sent as text
# ---------------------------------------------------------------------------------------

def json_object(raw, name: str, example: str = '{"n": 4096}') -> dict:
    """``raw`` (a JSON text, or already a dict) as a dict with string keys, or one sentence."""
    if isinstance(raw, dict):
        value = raw
    elif raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    elif not isinstance(raw, str):
        raise ValueError(Message("common.refusal_json", name=name, example=example, got=shown(raw)))
    else:
        if len(raw) > MAX_JSON_CHARS:
            raise ValueError(Message("common.refusal_json_long", name=name, example=example,
                                     most=f"{MAX_JSON_CHARS:,}", chars=f"{len(raw):,}"))
        if _depth(raw) > MAX_JSON_DEPTH:
            raise ValueError(Message("common.refusal_json_deep", name=name, example=example, most=MAX_JSON_DEPTH,
                                     got=shown(raw)))
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            raise ValueError(Message("common.refusal_json", name=name, example=example, got=shown(raw))) from None
    if not isinstance(value, dict):
        raise ValueError(Message("common.refusal_json", name=name, example=example, got=shown(value)))
    return value


def _depth(text: str) -> int:
    """The deepest bracket nesting of a JSON text (strings skipped), without parsing it."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def unknown_controls(given: dict, known, chapter: int) -> None:
    """Refuse control names of ``chapter`` that are not among ``known``, quoting at most
    ``MAX_ECHO`` characters of them."""
    unknown = [key for key in given if key not in known]
    if unknown:
        listed = ", ".join(shown(key) for key in unknown[:3])
        listed = listed if len(listed) <= MAX_ECHO else listed[:MAX_ECHO - 1] + "…"
        if len(unknown) > 3:
            listed = Message("common.listed_and_more", listed=listed, count=len(unknown) - 3)
        raise ValueError(Message("common.refusal_unknown_control", ch=chapter, listed=listed,
                                 known=", ".join(known) or Message("common.no_controls")))


# ---------------------------------------------------------------------------------------
# Random data from a link: N and d that run together
# ---------------------------------------------------------------------------------------

def link_shape(tab: str, n, d, notices: list | None = None, heads: int = 1, seeds=None) -> tuple:
    """(n, d) for random data opened by a link on ``tab``: each within its own bound, N
    within what the tab draws (the N x N tabs: one head of N = 2,048; the quality tab: the N
    its curves can be measured at with the link's number of seeds), and N x d x heads within
    the sample's element cap, so that the view the link opens can be computed. ``n`` or
    ``d`` None (not in the link) stay None."""
    from ..catalog import MAX_HEAD_DIM, MAX_MAP_N, MAX_SAMPLE_ELEMENTS, MAX_TOKENS

    n_max = MAX_MAP_N if tab in ("maps", "quality") else MAX_TOKENS
    if tab == "quality" and n is not None:
        n_max = min(n_max, quality_n_limit(seeds))
    if n is not None:
        n = link(Bound("n", "int", 1, n_max), n, notices, None)
    if d is not None:
        room = MAX_SAMPLE_ELEMENTS // max(1, (n or 1) * heads)
        d = link(Bound("d", "int", 1, min(MAX_HEAD_DIM, max(1, room))), d, notices, None)
    return n, d


def quality_n_limit(seeds=None) -> int:
    """The longest sequence the quality tab measures with ``seeds`` redraws (its default when
    None or unreadable) of every random-feature map, its smallest m grid included."""
    from ..views import quality

    default = inspect.signature(quality.quality_view).parameters["seeds"].default
    seeds = _whole(seeds) if seeds is not None else default
    seeds = default if seeds is _BAD or not 1 <= seeds <= 50 else seeds
    smallest = [m for m in quality.QUALITY_MS if m <= quality.MIN_GRID_TOP] or list(quality.QUALITY_MS[:1])
    per_cell = quality._work(len(quality.random_map_ids()), smallest, seeds, 1, 1)
    return max(1, math.isqrt(int(quality.MAX_QUALITY_WORK // per_cell)))


# ---------------------------------------------------------------------------------------
# Link notices
# ---------------------------------------------------------------------------------------

NO_FILE_IN_LINK = Message("common.link_no_file")


def in_language(notice, lang: str) -> str:
    """A link notice (a message) in ``lang``; text that is not a message is returned as it is."""
    return said(notice, lang)


def waits_for_upload(tab_id: str, args) -> bool:
    """True when a data tab would draw the "file" source with nothing uploaded: an automatic
    draw (a link opening, a tab opening) then waits, and the link's notice says why, instead
    of each draw repeating "no file uploaded". The tab's own button still answers it."""
    from ..catalog import SOURCES

    return (tab_id in ("maps", "quality", "state") and len(args) >= 8 and args[0] == SOURCES[2]
            and not args[7])


# ---------------------------------------------------------------------------------------
# The learn tab: texts of the visitor's own
# ---------------------------------------------------------------------------------------

# The learn tab's bounds are the catalogue's: the check runs before the engine (and torch)
# is imported, with the engine's own numbers.


def learn_texts(raw, name: str) -> list[str] | None:
    """The texts a learn request sends for ``name`` ("train_texts", "heldout_texts"): a
    string with one text a line (the text box) or a list of strings (the API). None when
    nothing is sent (blank: the built-in texts are used); otherwise the non-blank texts,
    at most ``LEARN_MAX_TEXTS`` of at most ``LEARN_MAX_TEXT_CHARS`` characters, or one
    sentence in the page's language. The whole is measured before it is split."""
    if raw is None or (isinstance(raw, str) and not raw.strip()) or (isinstance(raw, (list, tuple)) and not raw):
        return None
    most = LEARN_MAX_TEXTS * (LEARN_MAX_TEXT_CHARS + 1)
    if isinstance(raw, str):
        if len(raw) > most:
            raise ValueError(Message("learn.err_texts_size", name=name, chars=f"{len(raw):,}", most=f"{most:,}",
                                     count=LEARN_MAX_TEXTS, each=f"{LEARN_MAX_TEXT_CHARS:,}"))
        texts = raw.splitlines()
    elif isinstance(raw, (list, tuple)) and len(raw) <= 4 * LEARN_MAX_TEXTS and all(isinstance(t, str) for t in raw):
        texts = list(raw)
    elif isinstance(raw, (list, tuple)) and len(raw) > 4 * LEARN_MAX_TEXTS:
        raise ValueError(Message("learn.err_texts_count", name=name, count=f"{len(raw):,}", most=LEARN_MAX_TEXTS))
    else:
        raise ValueError(Message("learn.err_texts_type", name=name))
    kept = [t.strip() for t in texts if t.strip()]
    if not kept:
        return None
    if len(kept) > LEARN_MAX_TEXTS:
        raise ValueError(Message("learn.err_texts_count", name=name, count=f"{len(kept):,}", most=LEARN_MAX_TEXTS))
    for i, text in enumerate(kept, start=1):
        if len(text) > LEARN_MAX_TEXT_CHARS:
            raise ValueError(Message("learn.err_text_long", name=name, index=i, chars=f"{len(text):,}",
                                     most=f"{LEARN_MAX_TEXT_CHARS:,}"))
    return kept
