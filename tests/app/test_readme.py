"""The README and the docs beside it say what the code does: the README stays a short front
door whose links and pictures all resolve; the limits table (docs/limits-and-hardening.md)
against the constants it names; the engine snippet (docs/api.md) run from outside the
repository on an installed layout; the install metadata (dependencies, Python version,
package data) against requirements.txt and the tree; and no test writes the docs' pictures."""

from __future__ import annotations

import ast
import importlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
README_MAX_LINES = 150            # a front door: what a newcomer needs first, the rest in docs/


def doc(name: str) -> str:
    """The text of docs/<name>."""
    return (DOCS / name).read_text(encoding="utf-8")


def every_page() -> dict[Path, str]:
    """The README and every page in docs/, by path."""
    pages = {ROOT / "README.md": README}
    pages.update({path: path.read_text(encoding="utf-8") for path in sorted(DOCS.glob("*.md"))})
    return pages


def section(title: str, text: str = README) -> str:
    """The text under the heading ``title`` up to the next heading of its level or above."""
    match = re.search(rf"^(#+) {re.escape(title)}\n", text, re.M)
    assert match, f"no section {title!r}"
    level = len(match.group(1))
    rest = text[match.end():]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.M)
    return rest[: end.start()] if end else rest


# ------------------------------------------------------------------------------ limits

def limit_rows() -> list[tuple[str, float, str]]:
    """(what, value, constant) of each row of the Limits table."""
    rows = []
    for line in section("Limits", doc("limits-and-hardening.md")).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[2].startswith("`"):
            continue
        value = float(cells[1].replace(",", ""))
        rows.append((cells[0], value, cells[2].strip("`")))
    return rows


def constant(dotted: str):
    """``explorer.catalog.MAX_TOKENS`` or ``app.DELETE_CACHE[0]``: the value in the code."""
    index = None
    if dotted.endswith("]"):
        dotted, index = dotted[:-1].split("[")
    module, name = dotted.rsplit(".", 1)
    if module == "app":                  # read, not imported: importing app.py sets process-wide state
        tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
        value = next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                     and any(getattr(t, "id", None) == name for t in node.targets))
    else:
        value = getattr(importlib.import_module(module), name)
    return value if index is None else value[int(index)]


def in_readme_units(what: str, value) -> float:
    """The code's value in the unit the README's row names (GB, GiB, MB, MiB or a count)."""
    if isinstance(value, str):                       # gradio's "128mb"
        value = float(re.fullmatch(r"(\d+)\s*mb", value.lower()).group(1)) * 1e6
    for unit, size in ((", GiB", 2 ** 30), (", MiB", 2 ** 20), (", GB", 1e9), (", MB", 1e6)):
        if unit in what:
            return value / size
    return float(value)


def test_the_limits_table_names_every_bound():
    names = {row[2] for row in limit_rows()}
    for expected in ("explorer.catalog.MAX_TOKENS", "explorer.catalog.MAX_HEAD_DIM", "explorer.catalog.MAX_MAP_N",
                     "explorer.sources.sample.MAX_ELEMENTS", "explorer.views.common.MAX_MAP_CELLS",
                     "explorer.measure.cost.LIMIT_BYTES", "explorer.measure.cost.LIMIT_SECONDS", "app.MAX_UPLOAD",
                     "explorer.catalog.MAX_SEED", "app.DELETE_CACHE[0]"):
        assert expected in names, expected


@pytest.mark.parametrize("what, value, name", limit_rows(), ids=[row[2] for row in limit_rows()])
def test_each_stated_limit_is_the_codes(what, value, name, monkeypatch):
    for variable in ("EXPLORER_REQUEST_MEMORY_GB", "EXPLORER_REQUEST_SECONDS", "EXPLORER_SWEEP_BUDGET_S",
                     "EXPLORER_SWEEP_MEMORY_GB"):
        assert variable not in os.environ or name.split(".")[-1] not in ("LIMIT_BYTES", "LIMIT_SECONDS",
                                                                          "TIME_BUDGET_S", "MEMORY_BUDGET"), \
            f"{variable} is set: the defaults cannot be compared"
    assert in_readme_units(what, constant(name)) == pytest.approx(value), (what, name)


def test_limits_in_the_prose_agree_with_the_table():
    """Numbers the prose repeats (hardening, troubleshooting) are the table's."""
    from explorer.catalog import MAX_HEAD_DIM, MAX_MAP_N, MAX_TOKENS
    from explorer.ui.validate import quality_n_limit
    hardening = section("Hardening (public Space)", doc("limits-and-hardening.md"))
    assert f"N = {MAX_MAP_N:,}, d = {MAX_HEAD_DIM:,}" in hardening
    assert f"N = {quality_n_limit():,} with the default 10" in hardening
    assert f"capped at N = {MAX_MAP_N:,}" in section("Troubleshooting", doc("troubleshooting.md"))
    assert f"N ≤ {MAX_TOKENS:,}" in section("Limits", doc("limits-and-hardening.md"))
    for path, text in every_page().items():
        stale = re.findall(r"N ≤ 8192, d ≤ 1024|links never fail|swept hourly", text)
        assert not stale, (path.name, stale)


@pytest.mark.parametrize("path", list(every_page()), ids=lambda p: p.name)
def test_no_paths_or_words_from_outside_the_repository(path):
    text = every_page()[path]
    assert "../" not in text.replace("](../", "")             # no relative paths out of the repo
    assert "shared/" not in text
    assert not re.search(r"\bthe issue\b|\bissue asks\b", text, re.I)


# ------------------------------------------------------------------------ the front door

def test_the_readme_is_a_front_door():
    """Short, the Space's front matter first, one picture of the deck before the commands, one
    line and one picture per tab, and links onward to every page in docs/."""
    lines = README.splitlines()
    assert len(lines) <= README_MAX_LINES, len(lines)
    assert lines[0] == "---" and "app_file: app.py" in lines and "sdk: gradio" in lines
    before_commands = README[: README.index("## Two commands")]
    assert re.search(r"!\[[^\]]*\]\(docs/deck/[^)]+\.png\)", before_commands), "no picture of the deck first"
    rows = [line for line in section("The tabs").splitlines() if line.startswith("| **")]
    assert len(rows) == 6, rows
    for row in rows:
        assert len(re.findall(r"<img src=\"docs/[^\"]+\.png\"", row)) == 1, row
    linked = set(re.findall(r"\]\(docs/([^)#]+\.md)", README))
    assert linked == {path.name for path in DOCS.glob("*.md")}, linked ^ {p.name for p in DOCS.glob("*.md")}


def test_the_readme_says_the_first_start_wait():
    two = section("Two commands")
    assert re.search(r"first start", two) and re.search(r"\d+–\d+ s", two), two


def links(text: str) -> list[str]:
    """Every relative target of a markdown link, a markdown image or an <img src> in ``text``."""
    targets = re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r"<img src=\"([^\"]+)\"", text)
    return [t for t in targets if not re.match(r"[a-z]+:", t)]


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of ``text``."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        found.add(slug)
    return found


@pytest.mark.parametrize("path", list(every_page()), ids=lambda p: p.name)
def test_every_link_and_picture_resolves(path):
    text = every_page()[path]
    for target in links(text):
        file, _, anchor = target.partition("#")
        where = (path.parent / file).resolve() if file else path
        assert where.exists(), f"{path.name}: {target} does not exist"
        assert ROOT in where.parents or where == ROOT, f"{path.name}: {target} leaves the repository"
        if anchor:
            assert anchor in anchors(where.read_text(encoding="utf-8")), f"{path.name}: no heading for {target}"


def test_the_docs_say_how_to_add_a_mechanism():
    text = section("Adding a mechanism", doc("mechanisms.md"))
    assert "explorer/mechanisms/" in text
    assert "explorer/text/en/" in text and "explorer/text/zh/" in text
    for entry in ("names()", "get(name)", "default_params(q, k, seed=0)", "attention_map(q, k, **params)"):
        assert entry in text, entry


# ----------------------------------------------------------------------------- pictures

def test_no_test_writes_the_docs_pictures():
    """The deck walk saves its screenshots in an ignored folder, the one the screenshot
    script copies from; nothing else under tests/ names docs/deck as a place to write."""
    import importlib.util
    deck_walk = ROOT / "tests" / "browser" / "test_deck_browser.py"
    spec = importlib.util.spec_from_file_location("deck_walk_paths", deck_walk)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert DOCS not in module.SHOTS.parents, module.SHOTS
    if shutil.which("git") and (ROOT / ".git").exists():
        ignored = subprocess.run(["git", "check-ignore", "-q", str(module.SHOTS / "x.png")], cwd=ROOT)
        assert ignored.returncode == 0, f"{module.SHOTS} is not ignored by git"
    spec = importlib.util.spec_from_file_location("screenshots", ROOT / "scripts" / "screenshots.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.DECK_SHOTS == module.SHOTS            # the script copies what the walk saved
    assert script.DECK_PICTURES == DOCS / "deck" and script.TAB_PICTURES == DOCS / "screenshots"
    for test in (ROOT / "tests").rglob("test_*.py"):
        source = test.read_text(encoding="utf-8")
        assert not re.search(r"ROOT / \"docs\" / \"deck\"", source), f"{test.name} writes docs/deck/"


def test_every_picture_the_docs_show_is_one_the_script_makes():
    """docs/screenshots/<tab>.png come from the script's tab views; docs/deck/ from the deck walk;
    a figure in docs/ itself from the scripts/figure_*.py that names it."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("screenshots", ROOT / "scripts" / "screenshots.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for path, text in every_page().items():
        for target in links(text):
            if not target.endswith(".png"):
                continue
            where = (path.parent / target).resolve()
            if where.parent == DOCS / "screenshots":
                assert where.stem in script.TABS, f"{path.name}: {target} is not one of the script's tab pictures"
            elif where.parent == DOCS:
                makers = [f for f in (ROOT / "scripts").glob("figure_*.py") if f'"{where.name}"' in f.read_text("utf-8")]
                assert makers, f"{path.name}: {target} is made by no scripts/figure_*.py"
            else:
                assert where.parent == DOCS / "deck", f"{path.name}: {target} is neither a tab nor a deck picture"


# ------------------------------------------------------------------------- install data

def requirement_pins() -> dict:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            name, version = line.split("==")
            pins[name.lower()] = version
    return pins


def test_pyproject_carries_the_pinned_dependencies():
    declared = dict(dep.lower().split("==") for dep in PYPROJECT["project"]["dependencies"])
    assert declared == requirement_pins()
    assert PYPROJECT["project"]["requires-python"] == ">=3.11"
    test_pins = [line.strip() for line in (ROOT / "requirements-test.txt").read_text().splitlines()
                 if line.strip() and not line.startswith(("#", "-"))]
    assert sorted(PYPROJECT["project"]["optional-dependencies"]["test"]) == sorted(test_pins)


def test_every_package_and_asset_ships():
    # setup.py finds the packages (a new folder ships with no line of its own) and maps
    # assets/ in as explorer._assets; pyproject.toml's package-data ships each of their files.
    import ast
    from setuptools import find_packages
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    package_dir = next(ast.literal_eval(node.value) for node in tree.body
                       if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "ASSETS")
    found = set(find_packages(where=str(ROOT), include=["explorer", "explorer.*"]))
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "explorer").rglob("__init__.py")}
    assert on_disk == found, on_disk ^ found
    assert "packages" not in PYPROJECT["tool"]["setuptools"]
    data = PYPROJECT["tool"]["setuptools"]["package-data"]
    for package, folder in package_dir.items():
        shipped = [f for f in (ROOT / folder).iterdir() if f.is_file()]
        assert shipped, folder
        for path in shipped:
            assert any(fnmatch(path.name, pattern) for pattern in data[package]), f"{path} would not ship"
    assert (ROOT / package_dir["explorer._assets.texts"] / "train.txt").exists()


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The package laid out as pip installs it (explorer/ with its assets as explorer/_assets,
    no repository around it), in a folder of its own."""
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(ROOT / "explorer", site / "explorer", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "assets", site / "explorer" / "_assets")
    return site


def run_outside(code: str, site: Path, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(site), OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.slow
def test_the_installed_package_finds_its_assets(installed, tmp_path):
    done = run_outside("import explorer.resources as r, explorer.views.learn as l; "
                       "print(r.assets_dir()); print(len(l.training_texts()), len(l.heldout_texts()))",
                       installed, tmp_path)
    assert done.returncode == 0, done.stderr
    where, counts = done.stdout.strip().splitlines()
    assert Path(where) == installed / "explorer" / "_assets"
    assert all(int(c) > 0 for c in counts.split())


@pytest.mark.slow
def test_the_readme_engine_snippet_runs_outside_the_repository(installed, tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", section("Using the engine as a package", doc("api.md")), re.S)
    assert blocks, "no python snippet in docs/api.md's engine section"
    done = run_outside(blocks[0], installed, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "map_rel_error" in done.stdout
    assert not (tmp_path / "explorer").exists() and ROOT not in tmp_path.parents


@pytest.mark.slow
def test_the_bench_cli_runs_outside_the_repository(installed, tmp_path):
    done = subprocess.run([sys.executable, "-m", "explorer", "bench", "--ns", "64", "128", "--repeats", "1",
                           "--warmup", "0", "--no-sources", "--no-memory", "--methods", "linear_parallel"],
                          cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(installed), OMP_NUM_THREADS="1"),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "log-log slopes over N = 64..128:" in done.stdout


def test_the_two_commands_are_in_the_readme():
    two = section("Two commands")
    assert "bash scripts/install.sh && python app.py" in two
    assert "bash scripts/install_test_deps.sh && python -m pytest" in two
    assert "bash scripts/install_test_deps.sh && python -m pytest" in (ROOT / ".ci" / "run").read_text()
    assert "bash scripts/install_test_deps.sh && python -m pytest" in section("Tests", doc("testing.md"))
    assert "pip install -e ." in section("Install", doc("install.md"))
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
