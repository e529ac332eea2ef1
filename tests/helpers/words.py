"""The check every Chinese screen passes: no English word outside names, units and symbols.

``lecture_english_words`` is the lecture's checker; ``english_words`` is the tool tabs' (the
lecture's words kept, with this app's names added, and the text's own tokens aside)."""

from __future__ import annotations

import re

from explorer.text import kept_in_latin

# Words that stay as they are in the Chinese figures: units, symbols and names.
KEPT_WORDS = {"FLOPs", "FLOP", "GFLOP", "ms", "MB", "kB", "GB", "KV", "rel", "softmax", "exp", "elu", "FAVOR",
              "Taylor", "ReLU", "cosFormer", "Hedgehog", "RetNet", "GLA", "orthogonal", "trained", "untrained",
              "IID", "trig", "RFF", "identity", "KL", "max", "min", "median", "sigma", "float", "logit", "logits",
              "DeltaNet", "Gated", "HGRN", "LUNA", "lb", "token", "Delta", "QK", "SmolLM"}


def lecture_english_words(text: str) -> list[str]:
    """The English words of a text, units and names aside (single letters are symbols), and
    tokens of the sentence aside (they are quoted: “suitcase·9”)."""
    text = re.sub(r"<[^>]+>|“[^”]*”", " ", text)
    return [w for w in re.findall(r"[A-Za-z]{2,}", text) if w not in KEPT_WORDS]


# Names of methods, libraries and units the tool tabs show as they are in both languages:
# the words of the terms the Chinese language file keeps in Latin letters.
TOOL_NAMES = {word for term in kept_in_latin() for word in re.findall(r"[A-Za-z]{2,}", term)}
# Words that are part of a name: "all-MiniLM-L6-v2", "torch 2.13.0+cpu"; and the text's own
# tokens as the figures label them ("animal·2", "[CLS]·0", "then the (2)").
NAME_PARTS = re.compile(r"all-MiniLM-L\d+-v\d+|torch \d+\.\d+\.\d+\S*|\b[vL]\d+\b|\S+·\d+")


# Names the state tab keeps in Latin letters in Chinese, beside the lecture's: the models, the
# delta rule's name, a norm's name, and the bracket of the symbol ‖z_t‖ (no word there).
STATE_NAMES = {"HGRN", "DeltaNet", "Gated", "Delta", "Frobenius", "RNN", "diag", "SEP", "CLS", "KiB"}


def chinese_leftovers(text: str) -> list[str]:
    """The state tab's check: English words of a Chinese text, its names and the lecture's aside."""
    return [word for word in lecture_english_words(text) if word not in STATE_NAMES and word not in KEPT_WORDS]


def english_words(text: str) -> list[str]:
    """The English words of a text, names, units and the text's own (quoted) tokens aside."""
    text = re.sub(r"<[^>]+>|“[^”]*”|%\{[^}]*\}", " ", str(text))
    text = NAME_PARTS.sub(" ", text)
    return [w for w in re.findall(r"[A-Za-z]{2,}", text) if w not in KEPT_WORDS and w not in TOOL_NAMES]


def figure_texts(fig) -> list[str]:
    """Every text a plotly figure shows: title and subtitle, axis titles, annotations (panel
    titles), colour bar titles, legend names and tick labels written as text."""
    layout = fig.layout
    out = [layout.title.text or "", (layout.title.subtitle.text or "") if layout.title.subtitle else ""]
    for name in layout:
        if name.startswith(("xaxis", "yaxis")):
            axis = layout[name]
            out.append(axis.title.text or "")
            if axis.ticktext is not None:
                out.extend(str(t) for t in axis.ticktext)
        if name.startswith("coloraxis") and layout[name].colorbar is not None:
            out.append(layout[name].colorbar.title.text or "")
    out.extend(a.text or "" for a in layout.annotations or ())
    for trace in fig.data:
        if getattr(trace, "showlegend", None) is not False and getattr(trace, "name", None):
            out.append(trace.name)
        for key in ("hovertemplate", "hovertext"):
            value = getattr(trace, key, None)
            if isinstance(value, str):
                out.append(re.sub(r"<extra>.*?</extra>", "", value))
            elif value is not None:
                out.extend(str(v) for v in value)
        if trace.type in ("bar", "scatter") and getattr(trace, "x", None) is not None and isinstance(
                next(iter(trace.x), None), str):
            out.extend(trace.x)
        if trace.type == "heatmap" and getattr(trace, "colorbar", None) is not None and trace.colorbar.title:
            out.append(trace.colorbar.title.text or "")
    return [t for t in out if t]
