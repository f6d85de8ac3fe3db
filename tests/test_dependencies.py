"""What the code imports is what pyproject.toml declares, and the other way round.

An undeclared import works only while something else installs its distribution
(`annotated_types` came with pydantic) and breaks the day that stops; a declared
dependency nothing uses is a download every user pays for.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path

from tests.conftest import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
#: The distribution each importable top-level module comes from, as installed.
PROVIDERS = importlib.metadata.packages_distributions()


def canonical(name: str) -> str:
    """A distribution name as PEP 503 compares them: `ruamel.yaml` → `ruamel-yaml`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def names(requirements: Iterable[str]) -> set[str]:
    """The distributions of requirement strings (`PyYAML>=6.0` → `pyyaml`)."""
    found = set()
    for requirement in requirements:
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
        assert match, requirement
        found.add(canonical(match[0]))
    return found


EXTRAS = PROJECT["optional-dependencies"]
CORE = names(PROJECT["dependencies"])
#: What the modules behind an extra may use (a subpackage, or the module that imports the
#: extra lazily for one option): the dependencies and that extra.
SUBPACKAGES = {
    "webhook": CORE | names(EXTRAS["serve"]),
    "lsp": CORE | names(EXTRAS["lsp"]),
    "cli.py": CORE | names(EXTRAS["watch"]),  # check --watch
}
TEST = CORE | {name for extra in EXTRAS.values() for name in names(extra)}
#: First-party: the package, and the modules of tests/ and benchmarks/ (the tests import
#: benchmark modules with the folder on sys.path).
LOCAL = {"trainlint", "tests"} | {
    module.stem for folder in ("tests", "benchmarks") for module in (ROOT / folder).glob("*.py")
}


def third_party(path: Path) -> Iterator[str]:
    """Top-level modules `path` imports (at any depth: lazy imports count) or looks up with
    `importlib.util.find_spec`, leaving out the standard library and first-party code."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "find_spec" and node.args
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
        ):
            modules = [node.args[0].value]
        for module in modules:
            top = module.split(".")[0]
            if top not in sys.stdlib_module_names and top not in LOCAL:
                yield top


def sources(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def undeclared(paths: Iterable[Path], allowed_for: dict[str, set[str]]) -> list[str]:
    """`file: module (distribution)` for each import whose distribution is not allowed;
    `allowed_for` maps a path part (`webhook`) to what its files may use, "" to the rest."""
    problems = []
    for path in paths:
        parts = path.relative_to(ROOT).parts
        allowed = next(
            (allowed for part, allowed in allowed_for.items() if part in parts),
            allowed_for[""],
        )
        for module in sorted(set(third_party(path))):
            given = {canonical(name) for name in PROVIDERS.get(module, [])}
            if not given & allowed:
                shown = ", ".join(sorted(given)) or "not installed"
                problems.append(f"{path.relative_to(ROOT)}: {module} ({shown})")
    return problems


def test_the_package_imports_only_what_it_declares() -> None:
    """The webhook may use the `serve` extra, the language server the `lsp` extra, the
    command line the `watch` extra; everything else only the dependencies."""
    assert undeclared(sources("trainlint"), {**SUBPACKAGES, "": CORE}) == []


def test_tests_and_benchmarks_import_only_what_the_test_extra_brings() -> None:
    assert undeclared([*sources("tests"), *sources("benchmarks")], {"": TEST}) == []


def test_every_dependency_is_used() -> None:
    imported = {module for path in sources("trainlint") for module in third_party(path)}
    used = {canonical(name) for module in imported for name in PROVIDERS.get(module, [])}
    assert sorted(set().union(*SUBPACKAGES.values()) - used) == []


def test_the_check_sees_an_undeclared_import() -> None:
    """The checks above would pass on a scan that finds nothing: this one must not."""
    module = ROOT / "trainlint" / "model" / "runtime.py"
    assert "annotated_types" in set(third_party(module))
    without = CORE - {"annotated-types"}
    assert undeclared([module], {"": without}) == [
        "trainlint/model/runtime.py: annotated_types (annotated-types)"
    ]
