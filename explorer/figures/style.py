"""How every figure looks: the normal and the presentation style (projector: large fonts, thick
lines, Okabe & Ito palette, cividis), the shared layout (title, wrapped note, margins that
leave room for both), and small helpers the tab modules share.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from ..text import DEFAULT_LANG, normal_lang, said_throughout, say


OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
PLOTLY_DEFAULT = ("#636EFA", "#EF553B", "#00CC96", "#AB63FA", "#FFA15A", "#19D3F3", "#FF6692", "#B6E880")


@dataclass(frozen=True)
class Style:
    presentation: bool = False

    @property
    def font(self) -> int:
        return 22 if self.presentation else 13

    @property
    def tick_font(self) -> int:
        return 17 if self.presentation else 11

    @property
    def title_font(self) -> int:
        return 28 if self.presentation else 17

    @property
    def line(self) -> float:
        return 5.0 if self.presentation else 2.2

    @property
    def marker(self) -> int:
        return 13 if self.presentation else 7

    @property
    def palette(self) -> tuple:
        return OKABE_ITO if self.presentation else PLOTLY_DEFAULT

    @property
    def sequential(self) -> str:
        return "Cividis" if self.presentation else "Viridis"

    @property
    def diverging(self) -> str:
        # Blue-white-red reads for the common colour-vision deficiencies; red = too much weight.
        return "RdBu_r"

    def colour(self, i: int) -> str:
        return self.palette[i % len(self.palette)]


@functools.lru_cache(maxsize=None)
def _expanded(name: str) -> tuple:
    from _plotly_utils.basevalidators import ColorscaleValidator
    return tuple(tuple(stop) for stop in ColorscaleValidator("colorscale", "layout").validate_coerce(name))


def colorscale(name: str) -> list:
    """A named colour scale as the [position, colour] stops plotly's validation writes:
    for figures built without validation (fast), so that they draw exactly as validated ones."""
    return [list(stop) for stop in _expanded(name)]


def as_style(style) -> Style:
    if isinstance(style, Style):
        return style
    return Style(presentation=bool(style))


# The width a full-width figure gets on a 1280-px screen beside a column of controls: titles,
# subplot titles and cell labels are fitted to it, so they hold on a 1280x720 projector and
# anything wider. ``finish(width=...)`` scales it for figures that get a share of the page.
NOMINAL_WIDTH_PX = 900
CHAR_EM = 0.6                # mean advance of DejaVu Sans, in em, with margin
MODEBAR_PX = 26              # plotly's toolbar (hover, normal mode only): the title starts below it
# Looked up once: ``template="plotly_white"`` by name makes plotly look the name up and rebuild
# the template on every figure; assigning the built object skips the lookup (same figure).
WHITE_TEMPLATE = pio.templates["plotly_white"]


# A projector at 1280x720 in presentation mode: what is left of the window under the tab row, the
# one-line data panel and the notices (figures/* give their main figure this total height there).
PROJECTOR_FIGURE_PX = 500


def finish(fig: go.Figure, style: Style, title: str, height: int, note: str = "", fonts_done: bool = False,
           width=1.0, total: int | None = None, panel_lines: int = 1, then=None) -> go.Figure:
    """``fitted`` (below), keeping the words as they were before fitting (messages: keys and
    values) on the figure, so that ``said_figure`` can say it in another language and fit it
    again: how a title wraps depends on the language's words.

    ``width`` may be a function of the title and note as said (a share that depends on how
    wide their characters run); ``then(fig)`` finishes the fitted figure's layout further
    (margins, a table's row heights from its said cells), after every fitting."""
    layout = fig["layout"] if isinstance(fig, dict) else fig.layout
    annotations = (layout.get("annotations") or []) if isinstance(fig, dict) else \
        [a.to_plotly_json() for a in fig.layout.annotations or ()]
    draft = dict(title=title, note=note, height=height, fonts_done=fonts_done, width=width, total=total,
                 panel_lines=panel_lines, style=style, then=then,
                 annotations=[(a.get("text"), (a.get("font") or {}).get("size")) for a in annotations])
    fig = fitted(fig, style, title, height, note, fonts_done, _width(width, title, note), total, panel_lines)
    if then is not None:
        then(fig)
    fig._draft = draft
    return fig


def _width(width, title: str, note: str) -> float:
    return width(title, note) if callable(width) else width


def said_figure(fig: go.Figure, lang: str) -> go.Figure:
    """A figure whose words are messages, said in ``lang`` and fitted again to their length.
    English is what a figure is built in (a message's text is its English form), so an
    English figure is returned as it is; a figure ``finish`` did not fit is only said."""
    if normal_lang(lang) == DEFAULT_LANG or not isinstance(fig, go.Figure):
        return fig
    # The figure's own properties (not to_dict(), which encodes arrays for the browser): saying
    # copies every dict and list on the way and shares the arrays, which no word is in.
    parts = said_throughout({"data": fig._data, "layout": fig._layout}, lang)
    draft = getattr(fig, "_draft", None)
    if draft is None:
        return go.Figure(data=parts.get("data"), layout=parts.get("layout"), _validate=False)
    layout = parts["layout"]
    layout.pop("title", None)
    for ann, (text, size) in zip(layout.get("annotations") or [], draft["annotations"]):
        ann["text"] = said_throughout(text, lang)
        if size is None:
            (ann.get("font") or {}).pop("size", None)
        else:
            ann.setdefault("font", {})["size"] = size
    title, note = said_throughout(draft["title"], lang), said_throughout(draft["note"], lang)
    said = fitted(parts, draft["style"], title, draft["height"], note, draft["fonts_done"],
                  _width(draft["width"], title, note), draft["total"], draft["panel_lines"])
    if draft.get("then") is not None:
        draft["then"](said)
    said._draft = draft
    return said


def fitted(fig: go.Figure, style: Style, title: str, height: int, note: str = "", fonts_done: bool = False,
           width: float = 1.0, total: int | None = None, panel_lines: int = 1) -> go.Figure:
    """Shared layout: fonts, white template, the title and an optional note as its subtitle.

    Both are pinned to the top of the figure and wrapped to the width a browser gives the
    plot (at least NOMINAL_WIDTH_PX * width), and the top margin is made tall enough for
    them, for the toolbar above the title and for subplot titles (wrapped to their panel),
    so that nothing overlaps at either font size. Log axes label decades (or 1-2-5) at the
    full tick size, and cell labels of heatmaps shrink to fit their cells.

    ``total``: in presentation mode, the whole figure's height in pixels (title and margins
    included), so that the figure fits a projector's window; ``height`` is then ignored.
    ``panel_lines``: how many lines a subplot title below the top row may take (the figure
    leaves room for them between its rows).
    """
    px = NOMINAL_WIDTH_PX * width
    # One-line titles: plotly anchors a multi-line title by its first line, so further lines
    # would run into the plot. What does not fit (the sample, the head) leads the subtitle.
    title_font = style.title_font
    parts = title.split("<br>")
    head, rest = parts[0], parts[1:]
    fits = int((px - 20) / (CHAR_EM * title_font))
    # Widths in Latin character widths (a Chinese character counts as a full em, as wrap counts it).
    for sep, keep in ((" · ", ""), (": ", ":")):       # what follows a separator leads the subtitle
        if _units(head) > fits and sep in head:
            head, tail = head.split(sep, 1)
            head += keep
            rest.insert(0, tail)
    if _units(head) > fits:        # still too long: a smaller title font, down to the body font
        title_font = max(style.font, int((px - 20) / (CHAR_EM * _units(head))))
        fits = int((px - 20) / (CHAR_EM * title_font))
    if _units(head) > fits:        # and then what is left leads the subtitle
        lines = wrap(head, fits)
        head, rest = lines[0], [" ".join(lines[1:])] + rest
    note_font = max(style.font - 2, 11)
    chars = int((px - 20) / (CHAR_EM * note_font))
    note_lines = [line for part in rest for line in wrap(part, chars)]
    note_lines += wrap(note, chars)
    # A figure given as plain parts ({"data": [...], "layout": {...}}, fonts done) is finished
    # as dicts and built once without validation: a grid's validated updates cost more than
    # all its maps' arithmetic. Colour scales in it must be written out (style.colorscale).
    parts = fig if isinstance(fig, dict) else None
    layout_dict = parts["layout"] if parts is not None else None
    extra_panel_lines = fit_panel_titles(layout_dict if parts is not None else fig, style, px, fonts_done, panel_lines)
    annotations = (layout_dict.get("annotations") or []) if parts is not None else \
        [a.to_plotly_json() for a in fig.layout.annotations or ()]
    has_panel_titles = any(_is_panel_title(a) for a in annotations)
    toolbar = 0 if style.presentation else MODEBAR_PX
    top = int(14 + toolbar + title_font * 1.35 + len(note_lines) * note_font * 1.5
              + (style.font * 1.8 if has_panel_titles else style.font * 0.8) + extra_panel_lines * style.font * 1.3)
    title_spec = dict(text=head, font=dict(size=title_font), x=0.01, xanchor="left",
                      yref="container", y=1.0, yanchor="top", pad=dict(t=10 + toolbar))
    if note_lines:
        title_spec["subtitle"] = dict(text="<br>".join(note_lines), font=dict(size=note_font, color="#555"))
    shared = dict(
        font=dict(size=style.font, family="DejaVu Sans, Arial, Noto Sans CJK SC, sans-serif"),
        title=title_spec,
        height=total if (total and style.presentation) else height + top - 80,
        margin=dict(l=90, r=40, t=top, b=70),
        hoverlabel=dict(font=dict(size=style.font)),
        legend=dict(font=dict(size=style.font)),
    )
    if parts is not None:
        layout_dict["template"] = WHITE_TEMPLATE
        _merge(layout_dict, shared)
        fig = go.Figure(data=parts["data"], layout=layout_dict, _validate=False)
    else:
        fig.layout.template = WHITE_TEMPLATE
        fig.update_layout(**shared)
    if not fonts_done:  # builders with many panels set these themselves (the updates are slow)
        fig.update_xaxes(tickfont=dict(size=style.tick_font), title_font=dict(size=style.font))
        fig.update_yaxes(tickfont=dict(size=style.tick_font), title_font=dict(size=style.font))
    tidy_log_axes(fig, style)
    fit_cell_text(fig, px)
    return fig


def _axis_domain(fig: go.Figure, name: str) -> tuple[float, float]:
    axis = fig.layout[name] if name in fig.layout else None
    domain = getattr(axis, "domain", None) if axis is not None else None
    return tuple(domain) if domain else (0.0, 1.0)


def _is_panel_title(ann: dict) -> bool:
    return ann.get("yanchor") == "bottom" and ann.get("yref") == "paper"


def _fits_one_line(text: str, px: float, font: float) -> bool:
    """Whether ``text`` is one line of ``wrap`` at ``font`` px in ``px`` of width."""
    chars = max(8, int(px / (CHAR_EM * font)))
    lines = wrap(text, chars, break_words=False)
    return len(lines) == 1 and _units(lines[0]) <= chars


def fit_panel_titles(fig, style: Style, px: float, fonts_done: bool, panel_lines: int = 1) -> int:
    """Wrap each subplot title to its panel's width (two lines at most, then a smaller
    font): side by side, long titles would run into each other. Returns the extra lines
    the top row's titles now take. ``fig``: a figure, or a plain layout dict (changed in place)."""
    if isinstance(fig, dict):
        x_domains = [tuple(axis.get("domain") or (0.0, 1.0)) for name, axis in fig.items()
                     if name.startswith("xaxis") and isinstance(axis, dict)]
        return _fit_titles(fig.get("annotations") or [], x_domains, style, px, fonts_done, panel_lines)
    x_domains = [_axis_domain(fig, name) for name in fig.layout if name.startswith("xaxis")]
    objects = list(fig.layout.annotations or ())
    plain = [ann.to_plotly_json() for ann in objects]
    extra = _fit_titles(plain, x_domains, style, px, fonts_done, panel_lines)
    for ann, fitted in zip(objects, plain):
        if "font" in fitted and fitted.get("text") is not None and _is_panel_title(fitted):
            ann.text, ann.font.size = fitted["text"], fitted["font"].get("size")
    return extra


def _fit_titles(annotations: list, x_domains: list, style: Style, px: float, fonts_done: bool,
                panel_lines: int) -> int:
    plot_px = px - 130                                        # the margins finish() sets
    extra = 0
    for ann in annotations:
        if not (_is_panel_title(ann) and ann.get("xref") == "paper" and ann.get("text")):
            continue
        font_spec = ann.setdefault("font", {})
        size = style.font if not fonts_done or font_spec.get("size") is None else font_spec["size"]
        near = [d for d in x_domains if d[0] - 1e-6 <= (ann.get("x") or 0) <= d[1] + 1e-6]
        share = min((d[1] - d[0] for d in near), default=1.0)
        text = ann["text"].replace("<br>", " ")
        # A second line grows upwards: fine in the top margin, not into the row above.
        top_row = (ann.get("y") or 0) >= 0.99
        # One line at any font down to the ticks' is a title read whole; only a title too long
        # for that is wrapped, at the largest font that then fits.
        fonts = range(int(size), int(style.tick_font) - 1, -1)
        whole = next((font for font in fonts if _fits_one_line(text, share * plot_px, font)), None)
        for font in ([whole] if whole is not None else fonts):
            chars = max(8, int(share * plot_px / (CHAR_EM * font)))
            lines = wrap(text, chars, break_words=False)      # "(or / thogonal)" reads badly
            if len(lines) <= (2 if top_row else panel_lines) and all(_units(line) <= chars for line in lines):
                break
        if not top_row and panel_lines == 1:
            lines = [text]
        ann["text"], font_spec["size"] = "<br>".join(lines), font
        if top_row:
            extra = max(extra, len(lines) - 1)
    return extra


def _merge(into: dict, update: dict) -> None:
    """``update`` merged into the plain dict ``into`` as update_layout merges (nested dicts key by key)."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def tidy_log_axes(fig: go.Figure, style: Style) -> None:
    """Log axes with labels at full size: decades where the data spans one or more
    (plotly's 2-and-5 minor labels are tiny and crowd), else 1-2-5 values; powers of ten
    written out as such beyond four decades."""
    spans: dict[str, list[float]] = {}
    for trace in fig.data:
        for letter in ("x", "y"):
            values = getattr(trace, letter, None)
            if values is None:
                continue
            ref = getattr(trace, letter + "axis", None) or letter
            name = letter + "axis" + ref[1:]
            try:
                arr = np.asarray([v for v in values if v is not None], dtype=np.float64)
            except (TypeError, ValueError):
                continue
            arr = arr[np.isfinite(arr) & (arr > 0)]
            if arr.size:
                spans.setdefault(name, []).extend([float(arr.min()), float(arr.max())])
    for name, values in spans.items():
        axis = fig.layout[name] if name in fig.layout else None
        if axis is None or axis.type != "log" or axis.tickvals is not None:
            continue
        lo, hi = math.log10(min(values)), math.log10(max(values))
        if axis.dtick is not None:          # set by the figure: only the exponent format
            if hi - lo > 4 or hi > 4 or lo < -3:
                axis.exponentformat = "power"
            continue
        if hi - lo >= 1:
            # A decade a label; on a projector, where plots are short, at most about six labels.
            axis.dtick = max(1, math.ceil((hi - lo) / 6)) if style.presentation else 1
            if hi - lo > 4 or hi > 4 or lo < -3:
                axis.exponentformat = "power"
        else:
            ticks = [m * 10.0 ** e for e in range(math.floor(lo), math.ceil(hi) + 1) for m in (1, 2, 5)]
            ticks = [t for t in ticks if 10 ** lo / 1.01 <= t <= 10 ** hi * 1.01] or [10 ** round(lo)]
            axis.tickmode, axis.tickvals, axis.ticktext = "array", ticks, [f"{t:g}" for t in ticks]


def fit_cell_text(fig: go.Figure, px: float) -> None:
    """Numbers written in heatmap cells shrink to fit their cells ("0.630.670.87" otherwise)."""
    for trace in fig.data:
        if trace.type != "heatmap" or not trace.texttemplate or trace.text is None:
            continue
        z = np.asarray(trace.z if trace.z is not None else [[0]], dtype=object)
        cols = z.shape[1] if z.ndim == 2 else 1
        ref = getattr(trace, "xaxis", None) or "x"
        share = _axis_domain(fig, "xaxis" + ref[1:])
        cell_px = (share[1] - share[0]) * (px - 130 - 90) / max(cols, 1)   # 90: a colour bar
        longest = max((len(str(t)) for row in trace.text for t in row), default=1)
        size = trace.textfont.size or 12
        trace.textfont.size = max(7, min(size, int(0.9 * cell_px / (CHAR_EM * max(longest, 1)))))


# Chinese characters and full-width punctuation: about one em wide (CHAR_EM is a Latin
# character's), and a line may break between any two of them.
_WIDE = "\u3000-\u303f\u3400-\u9fff\uff00-\uffef"
_WIDE_CHAR = re.compile(f"[{_WIDE}]")
_PIECES = re.compile(f"[{_WIDE}]|[^\\s{_WIDE}]+|\\s+")
_NO_LINE_START = set("，。；：、）」』！？%")
WIDE_UNITS = 1.0 / CHAR_EM          # a wide character's width in Latin character widths


def wrap(text: str, width: int, break_words: bool = True) -> list[str]:
    """``text`` in lines of at most ``width`` Latin-character widths: breaks at spaces, and
    (Chinese) between wide characters, which count as 1 / CHAR_EM each; a line never starts
    with closing punctuation."""
    import textwrap
    if not text:
        return []
    # "m = 64" is one unit: a line never ends on "m" or starts with "= 64".
    text = _EQUALS.sub("\\1\u00a0=\u00a0\\2", text)
    if not _WIDE_CHAR.search(text):
        return [line.replace("\u00a0", " ") for line in textwrap.wrap(text, width, break_long_words=break_words)]
    lines, line, size = [], "", 0.0
    for piece in _PIECES.findall(text):
        if piece.isspace():
            if line:
                line, size = line + " ", size + 1
            continue
        length = WIDE_UNITS if _WIDE_CHAR.fullmatch(piece) else len(piece)
        if line.strip() and size + length > width and piece in _NO_LINE_START:
            # Closing punctuation that would run past the edge takes the word before it
            # to the next line ("2,000：" is not split, nor left sticking out).
            last = _PIECES.findall(line)[-1]
            if not last.isspace() and line[:-len(last)].strip():
                lines.append(line[:-len(last)].rstrip())
                line, size = last, _units(last)
        elif line.strip() and size + length > width:
            # Break where a reader pauses (a space, after punctuation, before an opening
            # bracket) when the line has such a place past its first third; else between characters.
            cut = _pause(line)
            if cut and cut >= len(line) // 3:
                line, rest = line[:cut], line[cut:].lstrip()
            else:
                rest = ""
            lines.append(line.rstrip())
            line, size = rest, _units(rest)
        line, size = line + piece, size + length
    if line.strip():
        lines.append(line.rstrip())
    return [line.replace("\u00a0", " ") for line in lines]


_EQUALS = re.compile(r"(\S) = (\S)")
_PAUSE_AFTER = set("，。；：、）」』！？ ")
_PAUSE_BEFORE = set("（「『")


class Wrapped(str):
    """A message that a hover box shows wrapped to ``width`` characters (hover boxes do not
    wrap): lines break where the said words allow, in whichever language they are said."""

    def __new__(cls, message, width: int):
        self = super().__new__(cls, "<br>".join(wrap(str(message), width)))
        self.message, self.width = message, width
        return self

    def say(self, lang: str = DEFAULT_LANG) -> str:
        return "<br>".join(wrap(say(self.message, lang), self.width))

    def __reduce__(self):
        return Wrapped, (self.message, self.width)


def _pause(line: str) -> int:
    """The last place in ``line`` a break reads well at (0: none); the next line never starts
    with closing punctuation."""
    for i in range(len(line), 0, -1):
        after = line[i:].lstrip()[:1]
        if after and after in _NO_LINE_START:
            continue
        if line[i - 1] in _PAUSE_AFTER or (i < len(line) and line[i] in _PAUSE_BEFORE):
            return i
    return 0


def _units(text: str) -> float:
    """``text``'s width in Latin character widths, as ``wrap`` counts it."""
    return sum(WIDE_UNITS if _WIDE_CHAR.fullmatch(c) else 1 for c in text)


def log_ticks(fig: go.Figure, style: Style, axes: str = "y") -> None:
    """On a projector the 2-and-5 minor labels of a log axis crowd out the decades
    (``finish`` now does this for every log axis, in both styles)."""
    if style.presentation:
        (fig.update_yaxes if axes == "y" else fig.update_xaxes)(dtick=1)


def unique_labels(tokens) -> list[str]:
    """Labels made unique by suffixing repeats ("the", "the (2)"), so no two rows merge."""
    seen: dict[str, int] = {}
    out = []
    for tok in tokens:
        tok = str(tok)
        count = seen.get(tok, 0) + 1
        seen[tok] = count
        out.append(tok if count == 1 else f"{tok} ({count})")
    # A suffixed label could collide with a real token; number everything then.
    if len(set(out)) != len(out):
        out = [f"{i}:{tok}" for i, tok in enumerate(tokens)]
    return out


def finite_values(values) -> np.ndarray:
    arrays = [np.asarray(v, dtype=np.float64).ravel() for v in values]
    flat = np.concatenate(arrays) if arrays else np.zeros(0)
    return flat[np.isfinite(flat)]


class UnitBelow(str):
    """A label with its unit on a line of its own ("KL (nats)" -> "KL<br>(nats)"), for a
    colour bar's narrow title; said in a language first, then broken, so it stays a message."""

    def __new__(cls, label):
        self = super().__new__(cls, _unit_below(str(label)))
        self.label = label
        return self

    def say(self, lang: str = DEFAULT_LANG) -> str:
        return _unit_below(str(said_throughout(self.label, lang)))

    def __reduce__(self):
        return UnitBelow, (self.label,)


def _unit_below(text: str) -> str:
    return text.replace(" (", "<br>(").replace("（", "<br>（")


class NamedInEnglish(str):
    """A name the data gives in English ("arrays", "layer 0"), said as ``message`` in other
    languages: a sample's own layer names are English, numbered in Chinese."""

    def __new__(cls, name, message):
        self = super().__new__(cls, str(name))
        self.message = message
        return self

    def say(self, lang: str = DEFAULT_LANG) -> str:
        return str(self) if normal_lang(lang) == DEFAULT_LANG else str(said_throughout(self.message, lang))

    def __reduce__(self):
        return NamedInEnglish, (str(self), self.message)
