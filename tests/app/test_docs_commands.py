"""What the docs tell a newcomer to run, runs: every named endpoint the app exposes is in
docs/api.md, and every ``python …`` / ``bash …`` command of a code block in the README and
docs/ answers ``--help`` and knows each option the docs give it (or is named here as too heavy
to run in a test, with why)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Commands a test does not run even with --help, and why.
TOO_HEAVY = {
    ("bash", "scripts/install.sh"): "installs the pinned packages and converts SmolLM2 (a minute or more); "
                                    "tests/app/test_default_model.py reads what it runs",
    ("bash", "scripts/install_test_deps.sh"): "installs Debian packages as root, then runs scripts/install.sh",
    ("bash", "scripts/install_peers.sh"): "builds a venv of the public peers (torch again, fla-core, performer); "
                                          "test_the_peers_script_is_the_repositorys_own checks it",
}


def test_the_peers_script_is_the_repositorys_own():
    """The benchmark's peers install from a script inside the repository, with the app's own
    torch and numpy pins, and the command's refusal names it."""
    import subprocess

    script = ROOT / "scripts" / "install_peers.sh"
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    text = script.read_text(encoding="utf-8")
    assert "requirements.txt" in text and "performer-pytorch==" in text and "fla-core==" in text
    assert "shared" not in text
    peers = (ROOT / "explorer" / "measure" / "peers.py").read_text(encoding="utf-8")
    assert "scripts/install_peers.sh" in peers and "shared/peers" not in peers


def endpoints() -> set[str]:
    names = set()
    for path in (ROOT / "explorer" / "ui").glob("*.py"):
        names.update(re.findall(r"api_name=\"(\w+)\"", path.read_text(encoding="utf-8")))
    return names


def test_every_named_endpoint_is_in_the_api_docs():
    found = endpoints()
    assert {"maps", "lecture", "probe", "linearize", "generate"} <= found, found
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert not [name for name in sorted(found) if f"`/{name}" not in api]


def doc_commands() -> list[tuple[str, str]]:
    """(document, command) for every python or bash command in a shell code block."""
    out = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
            if lang not in ("", "bash", "sh", "shell", "console"):
                continue
            for line in body.splitlines():
                line = line.split(" #", 1)[0].rstrip().rstrip("\\").strip()
                for command in re.split(r"\s*(?:&&|\|\||;|\|)\s*", line):
                    if re.match(r"^([A-Z_]+=\S+\s+)*(python|bash)\s", command):
                        out.append((path.name, command))
    return out


def program(command: str) -> tuple[tuple[str, ...], list[str]]:
    """(the program: interpreter, script or module and subcommand; the --options the command uses)."""
    words = [w for w in shlex.split(command, posix=True) if not re.match(r"^[A-Z_]+=", w)]
    if words[1] == "-m":
        head = words[:3] + ([words[3]] if len(words) > 3 and words[2] == "explorer"
                            and not words[3].startswith("-") else [])
    else:
        head = words[:2]
    return tuple(head), [w.split("=", 1)[0] for w in words[len(head):] if w.startswith("--")]


def test_the_docs_show_the_run_command_and_the_commands_are_found():
    commands = doc_commands()
    assert ("README.md", "bash scripts/install.sh") in commands and ("README.md", "python app.py") in commands
    assert len({program(c)[0] for _, c in commands}) >= 8


@pytest.mark.slow
def test_every_command_in_the_docs_answers_help_and_knows_its_options():
    programs: dict[tuple, set] = {}
    for _, command in doc_commands():
        head, options = program(command)
        programs.setdefault(head, set()).update(options)
    failures = []
    for head, options in sorted(programs.items()):
        if head in TOO_HEAVY:
            assert (ROOT / head[1]).is_file(), head
            continue
        argv = [sys.executable, *head[1:], "--help"]
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, OMP_NUM_THREADS="1"))
        if done.returncode != 0:
            failures.append((head, done.stderr[-500:]))
            continue
        unknown = sorted(o for o in options if o not in done.stdout)
        if unknown:
            failures.append((head, f"options the docs use that --help does not name: {unknown}"))
    assert not failures, failures
