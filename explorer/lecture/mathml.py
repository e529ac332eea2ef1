"""The article's formulas as MathML, which Chromium draws natively (no script, no font, no
network): a few builders that each return one MathML element as a string.

    i("q") i("x", normal=True)     an identifier (italic unless ``normal``: exp, elu, T)
    o("=")                         an operator
    n("1")                         a number
    row(a, b, ...)                 a group
    sub(base, s) sup(base, p) subsup(base, s, p)
    frac(num, den) sqrt(x) paren(x) norm(x)
    fn("exp")                      a function's name, upright
    t(x)                           x transposed: xᵀ
    formula(*parts)                the whole <math display="block"> element

A part given as a plain string is read token by token: a run of digits is a number, a
letter an identifier, anything else an operator, so ``row("1 + s")`` is <mn>1</mn><mo>+</mo>
<mi>s</mi>. Formulas are language-free (symbols and names only): they live in each
chapter's ``formulas`` module, the words around them in the language files.
"""

from __future__ import annotations

import re
from html import escape

_TOKEN = re.compile(r"\d+(?:\.\d+)?|[A-Za-zα-ωΑ-Ω]|\S")


def _tag(name: str, body: str, **attrs) -> str:
    extra = "".join(f' {k.rstrip("_").replace("_", "-")}="{escape(str(v), quote=True)}"' for k, v in attrs.items())
    return f"<{name}{extra}>{body}</{name}>"


def i(name: str, normal: bool = False) -> str:
    return _tag("mi", escape(name), **({"mathvariant": "normal"} if normal and len(name) == 1 else {}))


def o(op: str, **attrs) -> str:
    return _tag("mo", escape(op), **attrs)


def n(num) -> str:
    return _tag("mn", escape(str(num)))


def _part(x) -> str:
    """A part: MathML already (starts with "<"), or plain text read token by token."""
    x = str(x)
    if x.startswith("<"):
        return x
    out = []
    for tok in _TOKEN.findall(x):
        if tok[0].isdigit():
            out.append(n(tok))
        elif tok.isalpha():
            out.append(i(tok))
        else:
            out.append(o(tok))
    return "".join(out) if len(out) != 1 else out[0]


def row(*parts) -> str:
    return _tag("mrow", "".join(_part(p) for p in parts))


def sub(base, s) -> str:
    return _tag("msub", _one(base) + _one(s))


def sup(base, p) -> str:
    return _tag("msup", _one(base) + _one(p))


def subsup(base, s, p) -> str:
    return _tag("msubsup", _one(base) + _one(s) + _one(p))


def frac(num, den) -> str:
    return _tag("mfrac", _one(num) + _one(den))


def sqrt(x) -> str:
    return _tag("msqrt", _part(x))


def fn(name: str) -> str:
    """A function's or an operator's name, upright: exp, elu, softmax, KL, O."""
    return i(name) if len(name) > 1 else i(name, normal=True)


def t(x) -> str:
    """x transposed (v_jᵀ: the T over the subscript, not after it)."""
    x = _one(x)
    if x.startswith("<msub>") and x.endswith("</msub>"):
        return "<msubsup>" + x[len("<msub>"):-len("</msub>")] + i("T", normal=True) + "</msubsup>"
    return sup(x, i("T", normal=True))


def paren(*parts, left: str = "(", right: str = ")") -> str:
    """Brackets around ``parts``: as tall as a fraction inside them, else as the text (a
    superscript inside does not make them grow)."""
    body = "".join(_part(p) for p in parts)
    stretch = {} if "<mfrac" in body else {"stretchy": "false"}
    return row(o(left, **stretch), body, o(right, **stretch))


def norm(*parts) -> str:
    bar = o("‖", stretchy="false", lspace="0", rspace="0")
    return row(bar, *parts, bar)


def total(under, *body) -> str:
    """Σ over ``under`` (written beside the sign, so the line stays short), then ``body``."""
    return row(sub(o("∑"), under), *body)


def space(em: float = 1.0) -> str:
    return f'<mspace width="{em:g}em"></mspace>'


def formula(*parts, label: str = "") -> str:
    """One formula: a display-style <math> element. ``label``: what a screen reader says
    (the formula as plain text), optional."""
    attrs = {"display": "block"}      # an HTML page puts <math> in MathML's namespace itself
    if label:
        attrs["aria-label"] = label
    return _tag("math", row(*parts), **attrs)


def _one(x) -> str:
    """A single element (a script's base or script must be one node)."""
    x = _part(x)
    return x if _single(x) else row(x)


def _single(x: str) -> bool:
    """Whether ``x`` is one element: its first tag closes at its very end."""
    m = re.match(r"<([a-z]+)", x)
    if not m:
        return False
    name, depth, pos = m.group(1), 0, 0
    for tag in re.finditer(r"<(/?)([a-z]+)[^>]*>", x):
        if tag.group(2) == name:
            depth += -1 if tag.group(1) else 1
        if depth == 0:
            pos = tag.end()
            break
    return pos == len(x)


def plain_text(mathml: str) -> str:
    """The formula's characters in reading order (tags dropped): for tests and search."""
    return re.sub(r"<[^>]+>", "", mathml.replace("<msqrt>", "√"))


# ---------------------------------------------------------------------------------------
# The pieces the article's formulas share
# ---------------------------------------------------------------------------------------

def phi(x) -> str:
    """φ(x)."""
    return row(i("φ"), paren(x))


def phi_t(x) -> str:
    """φ(x)ᵀ."""
    return row(i("φ"), t(paren(x)))


def exp(*arg) -> str:
    """exp(arg)."""
    return row(fn("exp"), paren(*arg))


def big_o(*arg) -> str:
    """O(arg)."""
    return row(fn("O"), paren(*arg))


def dot() -> str:
    """The dot of q·k, closely spaced."""
    return o("·", lspace="0.1em", rspace="0.1em")


def slash() -> str:
    """A fraction's slash on one line, closely spaced."""
    return o("/", lspace="0.05em", rspace="0.05em")


def scaled_logit(q="q", k="k") -> str:
    """q·k/√d, the softmax logit, on one line (it sits inside exp)."""
    return row(q, dot(), k, slash(), sqrt("d"))


def over(num, den) -> str:
    """num/den on one line (inside a bracket or an exponent)."""
    return row(num, slash(), den)


def kl_row() -> str:
    """KL(p_i ‖ p̂_i) = Σ_j p_ij log(p_ij / p̂_ij): a row's distance to softmax."""
    p, ph = sub("p", "i"), sub(_hat("p"), "i")
    pij, phij = sub("p", row("i", "j")), sub(_hat("p"), row("i", "j"))
    bar = o("‖", stretchy="false", lspace="0.2em", rspace="0.2em")
    return row(fn("KL"), paren(p, bar, ph), o("="), total("j", pij, fn("log"), space(0.25), frac(pij, phij)))


def _hat(x) -> str:
    return _tag("mover", _one(x) + o("^"), accent="true")


def hat(x) -> str:
    """x̂."""
    return _hat(x)


def words(template: str, **parts) -> str:
    """A sentence of the language files with formulas in it: "{a} costs {b}" with a and b
    MathML; the words become <mtext>, spaced as the template spaces them."""
    out = []
    for piece in re.split(r"(\{[a-z_]+\})", template):
        if re.fullmatch(r"\{[a-z_]+\}", piece):
            out.append(_part(parts[piece[1:-1]]))
        elif piece:
            out.append(_tag("mtext", escape(piece.replace(" ", "\u00a0"))))
    return row(*out)
