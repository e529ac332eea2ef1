"""The engine's layers only point down: no module imports one from a layer above its own.

Every import of every module under explorer/ is read from its source (ast: nothing is
imported, so the test is fast and needs no torch), including imports inside functions:
a lazy import that runs upward is still an upward dependency.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "explorer"

# The declared order, lowest first. A module belongs to the layer of its longest matching
# prefix ("explorer.maps" holds explorer.maps and explorer.maps.base); the package itself,
# "explorer", is matched exactly. A module may import its own layer and any layer below.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # Standard library only: checks, small tools, the facts every layer reads, and the words
    # every layer's messages are said in (data read from the language files, no engine).
    ("core", ("explorer.core", "explorer.checks", "explorer.resources", "explorer.memory", "explorer.text")),
    # The catalogue the page is built from before torch loads (data, no math), and the stop
    # signal every long loop asks.
    ("words and catalogue", ("explorer", "explorer.catalog", "explorer.stopping")),
    # The math: feature maps, the attention maps' and states' diagnostics, mechanisms.
    ("math", ("explorer.maps", "explorer.diagnostics", "explorer.mechanisms")),
    # Q, K, V from a model, random data or an upload, and the record of where an export's
    # numbers came from (the model file's hash, versions, settings).
    ("sources", ("explorer.sources", "explorer.provenance")),
    # Metrics, the cost model, benchmarks (the sources' benchmark times the sources).
    ("measure", ("explorer.measure",)),
    # Runs that put maps, models, texts and metrics together: training maps, hybrids, and
    # linearizing a model layer by layer.
    ("experiments", ("explorer.experiments", "explorer.linearize")),
    # One view per tab: plain data for the figures and the UI.
    ("views", ("explorer.views",)),
    # Plotly figures of what the views return.
    ("figures", ("explorer.figures",)),
    # The lecture: each chapter's math, view and figures in its own package, built on the
    # tabs' views and the figures' style; the deck's view and figures beside them.
    ("lecture", ("explorer.lecture",)),
    # Files for download (CSV, arrays), and a Space's folder assembled with the causal model.
    ("export", ("explorer.export", "explorer.deck_export", "explorer.handout", "explorer.space")),
    # The edges: the Gradio UI and the command line.
    ("ui and command line", ("explorer.ui", "explorer.__main__", "explorer.plugins")),
]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int | None:
    """The index of ``module``'s layer in LAYERS, or None when no layer claims it."""
    best, best_length = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            exact_only = prefix == "explorer"
            if module == prefix or (not exact_only and module.startswith(prefix + ".")):
                if len(prefix) > best_length:
                    best, best_length = index, len(prefix)
    return best


@functools.cache
def imported_modules(module: str, path: Path) -> frozenset[str]:
    """Every explorer module that ``module`` imports, at any depth of its code."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - (node.level - 1)])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            # "from explorer import maps" imports the subpackage explorer.maps.
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in MODULES else target)
    return frozenset(name for name in found if name == "explorer" or name.startswith("explorer."))


def upward_imports(modules: dict[str, Path] = MODULES) -> set[tuple[str, str]]:
    edges = set()
    for module, path in modules.items():
        own = layer_of(module)
        for target in imported_modules(module, path):
            theirs = layer_of(target)
            if own is not None and theirs is not None and theirs > own:
                edges.add((module, target))
    return edges


def test_every_module_has_a_layer():
    # A new module (or folder) must be placed in the order before it can be checked.
    assert [module for module in MODULES if layer_of(module) is None] == []


def test_no_import_points_upward():
    found = upward_imports()
    named = [f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})" for a, b in sorted(found)]
    assert named == []


def import_cycles(modules: dict[str, Path] = MODULES) -> list[list[str]]:
    """Every group of modules that import one another, directly or round a loop (the strongly
    connected components of the import graph with more than one module)."""
    edges = {module: sorted(t for t in imported_modules(module, path) if t in modules and t != module)
             for module, path in modules.items()}
    order, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(module):
        order[module] = low[module] = len(order)
        stack.append(module)
        on_stack.add(module)
        for target in edges[module]:
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
                on_stack.discard(group[-1])
            if len(group) > 1:
                groups.append(sorted(group))

    for module in modules:
        if module not in order:
            visit(module)
    return groups


def test_no_import_cycle():
    # Within a layer too: two modules that need each other are one idea split in two, or a
    # shared piece that belongs below both.
    assert import_cycles() == []


def test_an_import_cycle_is_caught(tmp_path):
    files = {"explorer.ui.a": "from .b import f\n", "explorer.ui.b": "def f():\n    from .c import x\n",
             "explorer.ui.c": "from .a import y\n", "explorer.ui.d": "from .a import y\n"}
    modules = {}
    for name, source in files.items():
        modules[name] = tmp_path / f"{name.rpartition('.')[2]}.py"
        modules[name].write_text(source, encoding="utf-8")
    assert import_cycles(modules) == [["explorer.ui.a", "explorer.ui.b", "explorer.ui.c"]]


@pytest.mark.parametrize("source, expected", [
    ("from ..measure import cost\n", {"explorer.measure.cost"}),
    ("from ..measure.cost import BLOCK_ELEMENTS\n", {"explorer.measure.cost"}),
    ("def f():\n    from explorer import views\n", {"explorer.views"}),
    ("import explorer.ui.common as c\n", {"explorer.ui.common"}),
    ("from . import base\nimport torch\n", {"explorer.maps.base"}),
])
def test_imports_are_read_at_any_depth_and_resolved(tmp_path, source, expected):
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    assert imported_modules("explorer.maps.probe", path) == expected


def test_an_upward_import_is_caught(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text("def f():\n    from ..views import common\n    from ..diagnostics import attention\n", encoding="utf-8")
    found = upward_imports({"explorer.maps.probe": path})
    assert found == {("explorer.maps.probe", "explorer.views.common")}      # the same layer is allowed


def test_the_declared_order():
    assert (layer_of("explorer.views.maps") < layer_of("explorer.figures.style") < layer_of("explorer.lecture.view")
            == layer_of("explorer.lecture.ch2_associativity.figures") < layer_of("explorer.deck_export"))
    assert layer_of("explorer.maps.base") == layer_of("explorer.mechanisms.linear.forms") < layer_of("explorer.views.common")
    assert layer_of("explorer.experiments.learning") > layer_of("explorer.measure.metrics") > layer_of("explorer.sources.text")
    assert layer_of("explorer") == 1 and layer_of("explorer.nowhere") is None
