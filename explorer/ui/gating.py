"""Chains that stop in the browser: the page's load fires every tab's first draw, and only the
open tab's should reach the server."""

from __future__ import annotations


def only_on(dependency, wanted: str, which):
    """A step after ``dependency`` that lets its chain go on only where ``which`` (a hidden
    box the page's restore filled: the open tab) holds ``wanted``. It runs in the browser,
    and a script that throws stops gradio's chain there (neither ``then`` nor ``success`` steps
    after it are sent): a page opened on one tab sends nothing for the others."""
    return dependency.then(None, which, None,
                           js=f"(which) => {{ if (which !== {wanted!r}) {{ throw new Error('another tab'); }} }}")
