"""Every sentence the lecture shows, in English ("en") and Simplified Chinese ("zh"), read from
the language files ``explorer/text/en/lecture.toml`` and ``explorer/text/zh/lecture.toml``
(the same keys and the same placeholders in both; a translator reads them without the code).

The Chinese is written for this app, not translated word for word and not taken from the
article. Keys (the files' tables, joined with "."):

    ch{i}.title / ch{i}.claim            the chapter's heading and its claim (2-4 sentences)
    ch{i}.b{k}.title                     the title of build k of chapter i (one figure each)
    ch{i}.b{k}.claim, ch{i}.b{k}.notes   the build's one short claim and its speaker notes (2-5
                                         lines), templates filled from the numbers the build
                                         computed (``ChapterView.claim_in`` / ``notes_in``); where
                                         a comparison is said, two keys (``claim_better`` /
                                         ``claim_worse``, ...) and the chapter's view picks one
    notes.ch{i}                          the chapter's talking points, one per line (``notes``):
                                         no number of one build, no comparison a build may contradict
    axis.*                               axis labels, shared between figures
    ctl.*, choice.*                      control labels and the readable names of choices
    notice.*                             notices, formatted with the values they name
    legend.*, num.*, note.*, rk.*        legends, printed numbers, notes, the reverse-kernel table
    number.*, number.family.*            labels of the numbers a chapter prints (``number_label``)
    sentence                             the sentence the lecture reads (``default_text``)

``t(key, lang, **values)`` returns the text in ``lang`` (English when the language is not
offered), formatted with ``values``. A missing key is a KeyError: a blank title is a bug.
"""

from __future__ import annotations

from .. import mechanisms
from ..catalog import map_label
from ..text import LANGS, TEXT as _ALL_WORDS, Message, said, say

_AREA = "lecture."        # explorer/text/<lang>/lecture.toml, read by explorer.text with the rest
_WORDS = {lang: {key[len(_AREA):]: by_lang[lang] for key, by_lang in _ALL_WORDS.items() if key.startswith(_AREA)}
          for lang in LANGS}

# The sentence every chapter reads unless the speaker gives another: the data panel's first
# example (assets/examples.txt), so that the panel, the lecture and the tool tabs behind
# "Go deeper" all show the same text. Its pronoun ("it" -> "the animal") is what attention
# has to resolve.
def map_words(map_id: str, lang: str) -> str:
    """The catalogue's map ``map_id`` as the audience reads it in ``lang``."""
    return said(map_label(map_id), lang)


DEFAULT_TEXT = _WORDS["en"]["sentence"]
# The same sentence for a Chinese audience, read by the chapters whose model reads Chinese
# (the packaged causal SmolLM2; the embedded MiniLM turns Chinese into [UNK]).
DEFAULT_TEXT_ZH = _WORDS["zh"]["sentence"]


def default_text(lang: str = "en") -> str:
    """The lecture's own sentence in ``lang`` (English unless "zh")."""
    return DEFAULT_TEXT_ZH if lang == "zh" else DEFAULT_TEXT


def _entries(select) -> dict[str, dict[str, str]]:
    """{key: {lang: text}} of the keys ``select`` keeps (and renames: it returns the name or None)."""
    out: dict[str, dict[str, str]] = {}
    for lang, words in _WORDS.items():
        for key, value in words.items():
            name = select(key)
            if name is not None:
                out.setdefault(name, {})[lang] = value
    return out


_NUMBER, _FAMILY = "number.", "number.family."
# key -> {"en": ..., "zh": ...}: every text but the numbers' labels and the sentence
TEXT: dict[str, dict[str, str]] = _entries(
    lambda key: None if key.startswith(_NUMBER) or key == "sentence" else key)
# Labels of the keys of ``ChapterView.numbers`` that stand alone ("pairs", "flop_ratio").
NUMBER_LABELS: dict[str, dict[str, str]] = _entries(
    lambda key: key[len(_NUMBER):] if key.startswith(_NUMBER) and not key.startswith(_FAMILY) else None)
_FAMILY_LABELS: dict[str, dict[str, str]] = _entries(
    lambda key: key[len(_FAMILY):] if key.startswith(_FAMILY) else None)

def t(key: str, lang: str = "en", **values) -> str:
    """The text of ``key`` in ``lang`` ("en" or "zh"; anything else falls back to English),
    formatted with ``values``."""
    entry = TEXT[key]
    text = entry.get(lang) or entry["en"]
    # Values that say themselves (a model's name, a map's, a number) are said in ``lang``.
    if not values:
        return text
    out = text.format(**{name: said(value, lang) for name, value in values.items()})
    # A count said in 万 or 亿 takes its measure word without a space: "10 万个 token", "100 亿对".
    return _attach_units(out) if lang == "zh" else out


class Words(Message):
    """A lecture text as a message (``words(key, **values)``): its key and values, English as a
    ``str``, and said in another language as ``t`` says it (a count in 万 or 亿 takes its
    measure word without a space). What the lecture's figures write: they are drawn once and
    said in the audience's language at the page (``explorer.figures.style.said_figure``)."""

    def say(self, lang: str = "en") -> str:
        return t(self.key[len(_AREA):], lang, **self.values)


def words(key: str, **values) -> Words:
    """The lecture text ``key`` ("ch0.b1.title", "axis.n") with ``values``, as a message."""
    if key not in TEXT:
        raise KeyError(key)
    return Words(_AREA + key, **values)


def _attach_units(words: str) -> str:
    """Chinese: the space a template puts after a count is dropped where the count ends in 万
    or 亿 and a Chinese character follows ("10 万 个" -> "10 万个")."""
    return "".join(c for i, c in enumerate(words)
                   if not (c == " " and 3 <= i < len(words) - 1 and words[i - 1] in "万亿"
                           and words[i - 2] == " " and words[i - 3].isdigit()
                           and "\u4e00" <= words[i + 1] <= "\u9fff"))


def notes(ch, lang: str = "en") -> list[str]:
    """The speaker's talking points for chapter ``ch`` in ``lang``, one string each."""
    return [line for line in t(f"notes.ch{int(ch)}", lang).split("\n") if line.strip()]


# ---------------------------------------------------------------- the numbers table
# The other keys of ``ChapterView.numbers`` come in families: "<family><count>[<name>]", a count
# (a lag, a layer, the layers kept) and a name in brackets, each where the family has one
# ("median_kl[elu+1]", "recall_early_at_64[gla]", "hgrn2_memory_layer3"). Per family: the
# placeholder its count fills, and what its name is (a map, a decay kind, a roadmap point),
# said in the reader's language. Its label is ``number.family.<family>`` (without the "_"
# before the count).
NUMBER_FAMILIES: dict[str, tuple[str | None, str | None]] = {
    "kernel_rel_error": (None, "map"),
    "mean_kl": (None, "map"),
    "row_entropy": (None, "map"),
    "row_spearman": (None, "map"),
    "luna_mean_kl": (None, "map"),
    "median_kl": (None, "map"),
    "roadmap_kl": (None, "point"),
    "recent_minus_early_at_": ("lag", "kind"),
    "recall_early_at_": ("lag", "kind"),
    "recall_recent_at_": ("lag", "kind"),
    "hgrn2_lower_bound_layer": ("layer", None),
    "hgrn2_memory_layer": ("layer", None),
    "roadmap_recall_early_at_": ("lag", "point"),
    "roadmap_recall_recent_at_": ("lag", "point"),
    "recall_lag_": ("lag", None),
    "hybrid_cosine_k": ("k", None),
    "linearized_ppl_k": ("k", "set"),
    "retrieved_of_": ("pairs", "reader"),
}
_NAMES = {
    "map": lambda name, lang: map_words(name, lang),                # a catalogue id, as the audience reads it
    "kind": lambda name, lang: state_label(name, lang),             # a state update: the state tab's name
    "point": lambda name, lang: road_label(name, lang),             # a roadmap point: what it measured
    "set": lambda name, lang: say("linearize.set_" + name.replace(":", "_"), lang),   # a linearized set
    "reader": lambda name, lang: t(f"legend.retrieval_{name}", lang),   # the retrieval build's readers
}


def _family_parts(key: str) -> tuple[str, dict] | None:
    """(family, {count's placeholder: count, "name": (kind of name, name)}) of a number's key,
    or None when it is of no family."""
    stem, bracket, rest = key.partition("[")
    if bracket and not (rest.endswith("]") and len(rest) > 1):
        return None
    name = rest[:-1] if bracket else None
    family = stem.rstrip("0123456789")
    count = stem[len(family):]
    if family not in NUMBER_FAMILIES:
        return None
    counted, named = NUMBER_FAMILIES[family]
    if (counted is None) != (count == "") or (named is None) != (name is None):
        return None
    if named in ("kind", "point", "reader") and not name.replace("_", "").isalnum():
        return None                      # kinds and roadmap points are identifiers
    parts = {counted: count} if counted else {}
    if named:
        parts["name"] = (named, name)
    return family, parts


def number_label(key: str, lang: str = "en") -> str:
    """A readable label, in ``lang``, for a key of a chapter's ``numbers`` dict
    ("median_kl[elu+1]" -> "median row KL to softmax, elu+1"). An unknown key is a
    KeyError, like ``t``: a raw key in the table is a bug."""
    if key in NUMBER_LABELS:
        entry = NUMBER_LABELS[key]
        return entry.get(lang) or entry["en"]
    found = _family_parts(key)
    if found is None:
        raise KeyError(f"no label for the number {key!r}")
    family, parts = found
    if "name" in parts:
        kind, name = parts["name"]
        parts["name"] = _NAMES[kind](name, lang)
    entry = _FAMILY_LABELS[family.rstrip("_")]
    return (entry.get(lang) or entry["en"]).format(**parts)


def state_label(kind: str, lang: str = "en") -> str:
    """A state update's name ("GLA gates"): the state tab's, so the two never differ."""
    return say(state_message(kind), lang)


def state_message(kind: str) -> Message:
    """``state_label`` as a message, said later."""
    return Message(f"state.kind.{kind}")


def road_label(point: str, lang: str = "en", **values) -> str:
    """The label of a roadmap point by its id ("2024_gla"): in full with its settings when
    ``values`` are given, else the short name the numbers table uses. A state update's point
    is named by its id in the state tab ("retnet"): its words and year are the mechanism's."""
    return said(road_message(point, **values), lang)


def road_message(point: str, **values) -> Message:
    """``road_label`` as a message, said later."""
    if point in mechanisms.state_kinds():
        return state_road_message(point, full=bool(values), **values)
    return words(f"road.{point}", **values) if values else words(f"road.short.{point}")


def state_road_label(kind: str, lang: str = "en", full: bool = True, **values) -> str:
    """A state update's point on the roadmap: its paper's year and name, in full with its
    settings (``gamma``, ``lb``: a template uses those it names) or short."""
    return say(state_road_message(kind, full, **values), lang)


def state_road_message(kind: str, full: bool = True, **values) -> Message:
    """``state_road_label`` as a message, said later."""
    year = dict(mechanisms.state_kind_years())[kind]
    return Message(f"state.{'road' if full else 'road_short'}.{kind}", year=year, **values)


def keys() -> list[str]:
    return list(TEXT)


def notice(key: str, lang: str = "en", **values) -> str:
    """A notice in ``lang``; the same as ``t`` for keys under ``notice.``."""
    if not key.startswith("notice."):
        raise KeyError(f"{key!r} is not a notice")
    return t(key, lang, **values)


REVERSE_KERNEL_ROWS = ("goal", "works", "phi", "cost", "price")


def reverse_kernel_table(lang: str = "en") -> list[list[str]]:
    """Chapter 3's two-column comparison (SVM's kernel trick against linear attention's
    reverse use of it) as rows of text: a header row, then one row per aspect."""
    header = [t("rk.header.aspect", lang), t("rk.header.svm", lang), t("rk.header.linear", lang)]
    return [header] + [[t(f"rk.row.{row}.{col}", lang) for col in ("aspect", "svm", "linear")]
                       for row in REVERSE_KERNEL_ROWS]


class Named(tuple):
    """(name, value) pairs that a claim or note lists, said in the reader's language: each
    name as the audience reads it (a map's, or a roadmap point's short name when ``kind`` is
    "point"), followed by its value where it has one ("elu+1 1.40, Hedgehog (trained) 0.05")."""

    def __new__(cls, pairs, kind: str = "map"):
        named = super().__new__(cls, tuple((str(name), "" if value is None else str(value)) for name, value in pairs))
        named.kind = kind
        return named

    def say(self, lang: str = "en") -> str:
        if not self:
            return t("word.none", lang)
        name = _NAMES[self.kind]
        return ("，" if lang == "zh" else ", ").join(f"{name(label, lang)} {value}".strip() for label, value in self)

    def __str__(self) -> str:
        return self.say("en")
