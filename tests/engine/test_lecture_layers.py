"""The lecture's imports only point down: a chapter's record < its math < its view < its figures
< the deck export and the UI. Read from the source (every import, also those inside
functions), so a lazy import that runs upward fails here too."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXPLORER = ROOT / "explorer"

RECORD, ENGINE, VIEWS, FIGURES, TOP = range(5)
NAMES = {RECORD: "record", ENGINE: "engine math", VIEWS: "views", FIGURES: "figures", TOP: "export and UI"}
# Third-party packages a record (read while the page is built, before the engine) may not import.
HEAVY = ("torch", "numpy", "plotly", "gradio")


def layer(module: str) -> int | None:
    """The layer of an explorer module, or None where the lecture's order says nothing."""
    parts = module.split(".")
    if parts[:2] == ["explorer", "lecture"]:
        if len(parts) == 2 or parts[2] in ("record", "chapters", "text", "mathml"):
            return RECORD
        if parts[2] in ("memo", "threads"):
            return ENGINE
        if parts[2].startswith("ch"):
            # formulas: the article's formulas as MathML, plain data like the record
            return {None: RECORD, "formulas": RECORD, "maths": ENGINE, "view": VIEWS, "figures": FIGURES}.get(
                parts[3] if len(parts) > 3 else None)
        return None
    if parts[:2] == ["explorer", "catalog"]:
        return RECORD
    if len(parts) > 1 and parts[1] in ("diagnostics", "maps", "measure", "sources", "checks"):
        return ENGINE
    if len(parts) > 1 and parts[1] in ("views", "figures"):
        return VIEWS if parts[1] == "views" else FIGURES
    if len(parts) > 1 and parts[1] in ("deck_export", "ui", "__main__"):
        return TOP
    return None


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imports(path: Path) -> list[tuple[str, int]]:
    """(module, line) of every import in ``path``, relative ones resolved."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.append((sub if is_module(sub) else target, node.lineno))
    return out


def lecture_files() -> list[Path]:
    return sorted([*(EXPLORER / "lecture").rglob("*.py"), *(EXPLORER / "views").glob("lecture*.py"),
                   *(EXPLORER / "figures").glob("lecture*.py"), EXPLORER / "deck_export.py"])


def test_the_layers_are_read_right():
    assert layer("explorer.lecture.ch2_associativity") == RECORD
    assert layer("explorer.lecture.ch2_associativity.formulas") == RECORD
    assert layer("explorer.lecture.ch2_associativity.maths") == ENGINE
    assert layer("explorer.lecture.ch2_associativity.view") == VIEWS
    assert layer("explorer.lecture.ch2_associativity.figures") == FIGURES
    assert layer("explorer.deck_export") == TOP
    found = dict(imports(EXPLORER / "lecture" / "ch5_closing_the_gap" / "view.py"))
    assert {"explorer.lecture.ch5_closing_the_gap.maths", "explorer.lecture.view_common", "explorer.maps"} <= set(found)


def test_every_chapter_has_its_record_formulas_math_view_and_figures():
    chapters = sorted(p for p in (EXPLORER / "lecture").iterdir() if p.is_dir() and p.name.startswith("ch"))
    assert [p.name[:3] for p in chapters] == [f"ch{i}" for i in range(7)]
    for folder in chapters:
        assert {p.name for p in folder.glob("*.py")} == {"__init__.py", "formulas.py", "maths.py", "view.py",
                                                         "figures.py"}, folder


def test_imports_only_point_down():
    upward = []
    for path in lecture_files():
        source = module_name(path)
        own = layer(source)
        if own is None:
            continue
        for target, line in imports(path):
            if own == RECORD and target.split(".")[0] in HEAVY:
                upward.append(f"{path.relative_to(ROOT)}:{line} a record imports {target}")
            theirs = layer(target) if target.startswith("explorer.") else None
            if theirs is not None and theirs > own:
                upward.append(f"{path.relative_to(ROOT)}:{line} ({NAMES[own]}) imports {target} ({NAMES[theirs]})")
    assert not upward, "\n".join(upward)
