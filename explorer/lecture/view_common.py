"""What every chapter's view shares: the view itself (``ChapterView``), the head it reads,
the maps it builds once per setting, and the trained Hedgehog and shipped maps that chapters
5 and 6 show. Each chapter's own view is ``explorer.lecture.ch<i>_<name>.view``;
``explorer.lecture.view`` assembles them."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..catalog import map_label, map_specs
from . import text
from .record import EMBEDDED_MODEL, HEAD_DIM
from .memo import memo
from ..views.common import make_feature_map, select_head


@dataclass
class ChapterView:
    ch: int
    controls: dict                 # the effective control values (after clamping), for links
    numbers: dict                  # name -> float, every number the chapter prints
    data: dict                     # plain arrays and labels for the figures
    notices: list = field(default_factory=list)          # English, including the sample's own
    notice_items: list = field(default_factory=list)     # (key, values) of the lecture's notices
    sample_notices: list = field(default_factory=list)   # from the source: messages, said in the reader's language
    seconds: float = 0.0
    # build name -> {"claim": (key, values), "notes": [(key, values), ...]}: what the chapter
    # says on a build, filled from the numbers it computed. A build left out says its
    # ``ch<i>.<build>.claim`` and ``ch<i>.<build>.notes``, which hold no number.
    says: dict = field(default_factory=dict)
    # notice key -> the builds it is about; a notice not listed is about every build.
    notice_builds: dict = field(default_factory=dict)
    # What it read, for the deck's provenance: {"input": provenance.sample_input, "model": (id, path) or None}
    provenance: dict = field(default_factory=dict)

    def notices_in(self, lang: str = "en") -> list[str]:
        """The notices in ``lang``: the lecture's own translated, the source's as they are."""
        def named(values):          # a map's name as the reader's language writes it
            out = {k: text.said(map_label(v), lang) if k == "map" else v for k, v in values.items()}
            if "maps" in values:    # (map, count) pairs, listed in the reader's language
                out["maps"] = ("，" if lang == "zh" else ", ").join(
                    f"{text.said(map_label(name), lang)} {count}" for name, count in values["maps"])
            return out
        return [_notice(key, lang, named(values)) for key, values in self.notice_items] + self._sample_notices(lang)

    def _sample_notices(self, lang: str) -> list[str]:
        from ..text import say
        return [say(notice, lang) for notice in self.sample_notices]

    def claim_in(self, build: str, lang: str = "en") -> str:
        """The one short claim of ``build`` ("b0", ...) in ``lang``, from this view's numbers."""
        key, values = self.says.get(build, {}).get("claim") or (f"ch{self.ch}.{build}.claim", {})
        return text.t(key, lang, **values)

    def notes_in(self, build: str, lang: str = "en") -> list[str]:
        """The speaker's points for ``build`` in ``lang``: its notes, then the notices about it
        (the slide carries none: its fine print is the speaker's)."""
        parts = self.says.get(build, {}).get("notes") or [(f"ch{self.ch}.{build}.notes", {})]
        lines = [line for key, values in parts for line in text.t(key, lang, **values).split("\n") if line.strip()]
        about = [(key, values) for key, values in self.notice_items
                 if build in self.notice_builds.get(key, (build,))]
        return lines + ChapterView(self.ch, {}, {}, {}, notice_items=about).notices_in(lang) + self._sample_notices(lang)


def _notice(key: str, lang: str, values: dict) -> str:
    """A lecture notice, or one of the app's common ones (a layer or head clamped to the model)."""
    if key.startswith("common."):
        from ..text import say
        return say(key, lang, **values)
    return text.notice(key, lang, **values)


# ---------------------------------------------------------------------------------------


def model_of(sample) -> str | None:
    """The model that read ``sample`` (its name as the picker calls it), or None for data."""
    return (getattr(sample, "info", None) or {}).get("model") or None


def head_of(sample, c):
    """(q, k, v, notice items) of the chosen head; a layer or head past the model's last is
    clamped to it (as select_head does) with the app's notice, kept as a (key, values) item
    so that it reads in either language."""
    asked = {"layer": c["layer"], "head": c["head"]}
    q, k, v, layer, head, _ = select_head(sample, c["layer"], c["head"])
    c["layer"], c["head"] = layer, head
    items = []
    for name, used, count in (("layer", layer, sample.n_layers), ("head", head, sample.n_heads)):
        if used != asked[name] and count > 1:
            items.append((f"common.no_{name}", {"asked": asked[name], "last": count - 1, "used": used}))
    return q, k, v, items


def new_view(ch, c, items=()) -> ChapterView:
    return ChapterView(ch=ch, controls=c, numbers={}, data={}, notice_items=list(items))



def trained_hedgehog(sample, c, progress):
    """(map, origin) of the trained Hedgehog for the model's (layer, head): one trained in
    this process (the learn tab, or "train" here, on the model that read the text) first,
    else the one shipped with the app for that model, else (None, None). Trains only when
    the speaker asked (``train``)."""
    if getattr(sample, "model_attentions", None) is None:
        return None, None
    from ..views import learn
    model = None if reads_minilm(sample) else model_of(sample)
    m = c["m"] if c["m"] % 2 == 0 else c["m"] + 1
    cached = learn.cached_result(c["layer"], c["head"], m, c["steps"], model=model)
    if cached is None and c["train"]:
        # The bar without the learn tab's English step messages (the lecture speaks zh too).
        quiet = None if progress is None else (lambda fraction, message="": progress(fraction, ""))
        cached = learn.learn_view(c["layer"], c["head"], m, c["steps"], progress=quiet, model=model)
    if cached is not None:
        return cached.feature_map, "trained here"
    shipped = shipped_map("hedgehog", c["layer"], c["head"], model=model or EMBEDDED_MODEL, head_dim=sample.head_dim)
    return (shipped, "shipped") if shipped is not None else (None, None)


def shipped_map(kind: str, layer: int, head: int, model: str = EMBEDDED_MODEL, head_dim: int = HEAD_DIM):
    """The learned map of ``kind`` ("hedgehog" or "luna") trained for ``model``'s (layer,
    head) that ships with the app, or None (also when its head dimension is not ``head_dim``)."""
    try:
        from ..maps.learned import pretrained
    except ImportError:                     # a build without shipped maps
        return None
    try:
        fmap = pretrained(kind, int(layer), int(head), model=model)
    except (FileNotFoundError, KeyError, ValueError):
        return None
    return fmap if fmap is not None and fmap.head_dim == int(head_dim) else None



def map_memo_key(map_id: str, m, seed) -> tuple:
    """What the catalogue's map ``map_id`` depends on: m only where the user picks it, the seed only
    where it draws something (random features, Hedgehog's extra columns). A seed change then
    recomputes the random maps only."""
    spec = map_specs()[map_id]
    drawn = spec.random or spec.takes_m
    return (map_id, int(m) if spec.takes_m and m is not None else None, int(seed) if drawn else None)


def cached_map(map_id: str, d: int, m, seed: int):
    """The catalogue's map ``map_id``, built once per setting (random maps draw and
    orthogonalise their projection when built)."""
    key = map_memo_key(map_id, m, seed)
    return memo(("map", d, *key), lambda: make_feature_map(map_id, d, key[1], seed)[0])



def reads_minilm(sample) -> bool:
    """Whether the sample's heads are the embedded MiniLM's, the model most shipped maps (and
    the learn tab's training) are for."""
    return (getattr(sample, "model_attentions", None) is not None and sample.head_dim == HEAD_DIM
            and model_of(sample) in (None, EMBEDDED_MODEL))


PRONOUNS = ("it", "它")


def pronoun_index(tokens, fallback: int) -> int:
    """The last token of the default sentence's pronoun ("it", or 它 split into byte pieces,
    "它(1/2)", "它(2/2)"): chapter 1's query and chapter 4's step, where the state has just
    read it, so that both chapters show the same token."""
    words = [re.sub(r"\(\d+/\d+\)$", "", label.rsplit("·", 1)[0]).strip().lower() for label in tokens]
    hits = [i for i, word in enumerate(words) if word in PRONOUNS]
    if not hits:
        return fallback
    end = hits[0]
    while end + 1 in hits:
        end += 1
    return end
