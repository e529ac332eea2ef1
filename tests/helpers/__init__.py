"""What several test modules share, in one place: a test module imports from here, never from
another test module. Fixtures live in tests/conftest.py.

- ``helpers.words``: the checks every Chinese screen passes (no English word but names and units);
- ``helpers.page``: what the browser tests wait on and watch on a page;
- ``helpers.server``: a running app's port, its API called over plain HTTP, a slowed training;
- ``helpers.models``: tiny random models saved here, and the packaged SmolLM2 where it is installed;
- ``helpers.lecture``: a chapter's figures drawn once and said in a language.

``counted_calls`` records which of a module's functions run (a test that a language switch
or a second request measures nothing counts them).
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]          # the repository


def counted_calls(monkeypatch, module, names) -> list:
    """The names of ``module``'s functions ``names`` in the order they are called (each still
    runs as before)."""
    calls = []
    for name in names:
        original = getattr(module, name)
        monkeypatch.setattr(module, name,
                            lambda *a, _name=name, _original=original, **kw: calls.append(_name) or _original(*a, **kw))
    return calls
