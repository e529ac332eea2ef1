"""What several test modules share, in one place: a test module imports from here, never from
another test module. Fixtures live in tests/conftest.py.

- ``helpers.words``: the checks every Chinese screen passes (no English word but names and units);
- ``helpers.page``: what the browser tests wait on and watch on a page;
- ``helpers.server``: a running app's port, its API called over plain HTTP, a slowed training;
- ``helpers.models``: tiny random models saved here, and the packaged SmolLM2 where it is installed.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]          # the repository
