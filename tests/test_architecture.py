"""The floors of `docs/architecture.md`, checked on the imports the code writes.

Every `import` and `from ... import` of `trainlint/` counts, at module level, inside a
function (lazy) or under `TYPE_CHECKING`: a lazy import hides a circle, it does not
remove one. A module imports only from its own floor or the floors below it, and no
modules import each other, directly or round a longer circle.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "trainlint"

#: The floors, lowest first: a module's floor is that of its longest listed prefix (the
#: package itself, `trainlint`, names only its `__init__`).
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ground", (
        "trainlint.document", "trainlint.loader", "trainlint.files", "trainlint.suggest",
        "trainlint.release", "trainlint.problem", "trainlint.options", "trainlint.errors",
        "trainlint.kinds", "trainlint.lookups", "trainlint.finding", "trainlint.version",
        "trainlint.bundled", "trainlint.memo", "trainlint.patches", "trainlint.digest",
    )),
    ("model", ("trainlint.model",)),
    ("render", ("trainlint.render",)),
    ("engine", (
        "trainlint.rule", "trainlint.suppression", "trainlint.roundtrip", "trainlint.config",
        "trainlint.engine",
    )),
    ("rules", ("trainlint.rules",)),
    ("run", ("trainlint.run",)),
    ("front ends", (
        "trainlint", "trainlint.__main__", "trainlint.report", "trainlint.fix",
        "trainlint.webhook", "trainlint.lsp", "trainlint.cli", "trainlint.docs", "trainlint.audit",
    )),
)


def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


@functools.cache
def syntax(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the tests (0.6 s the package)."""
    return ast.parse(path.read_text(), str(path))


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of the package that `name` imports anywhere in its text."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(syntax(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                # `from trainlint.render import tree` imports a module; `import Render` a name
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {module for module in found if module in known and module != name}


@functools.cache
def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def floor_of(module: str) -> int:
    best, level = "", -1
    for number, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            inside = module.startswith(prefix + ".") and prefix != PACKAGE.name
            if (module == prefix or inside) and len(prefix) > len(best):
                best, level = prefix, number
    return level


def test_the_walk_sees_lazy_and_type_checking_imports() -> None:
    edges = graph()
    assert "trainlint.bundled" in edges["trainlint.engine.index"]  # inside a method
    assert "trainlint.engine.context" in edges["trainlint.rule"]  # under TYPE_CHECKING


def test_every_module_has_a_floor() -> None:
    assert [module for module in modules() if floor_of(module) < 0] == []


@pytest.mark.parametrize("floor", [name for name, _ in FLOORS])
def test_no_floor_imports_from_a_higher_one(floor: str) -> None:
    level = [name for name, _ in FLOORS].index(floor)
    upward = sorted(
        f"{module} -> {target} ({FLOORS[floor_of(target)][0]})"
        for module, targets in graph().items() if floor_of(module) == level
        for target in targets if floor_of(target) > level
    )
    assert upward == []


def test_no_import_circles() -> None:
    edges = graph()
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 while on the walk's path, 2 once done
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(edges[module]):
            if state.get(target) == 1:
                circles.append([*path[path.index(target):], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module)
    assert [" -> ".join(circle) for circle in circles] == []


def test_checks_reach_the_run_only_through_their_context() -> None:
    """Rules, the render and the model look objects up through their context (`Context`,
    or `Lookups` below the engine), which records every look-up a cached run depends on:
    none of them imports the index or the run, or reaches for the context's index."""
    checks = ("trainlint.rules", "trainlint.render", "trainlint.model")
    edges = graph()
    found = []
    for module, path in modules().items():
        if not module.startswith(checks):
            continue
        found += [f"{module} imports {target}" for target in sorted(edges[module])
                  if target.startswith(("trainlint.engine.index", "trainlint.engine.run"))]
        found += [
            f"{module}:{node.lineno} reads `.{node.attr}`"
            for node in ast.walk(syntax(path))
            if isinstance(node, ast.Attribute) and node.attr in ("index", "_index", "memo")
            and isinstance(node.value, ast.Name) and node.value.id in ("ctx", "context")
        ]
    assert found == []
