"""Shared helpers: lint text as the CLI would, and find the upstream corpus."""

from __future__ import annotations

import compileall
import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from trainlint.config.settings import Settings
from trainlint.document import decode
from trainlint.engine.run import lint
from trainlint.finding import Finding
from trainlint.loader import load

if TYPE_CHECKING:
    from trainlint.model.crd_rules import Node

ROOT = Path(__file__).resolve().parent.parent
#: The upstream manifests and CRDs, beside the checkout (absent in a bare clone).
SHARED = ROOT.parent / "shared"
UPDATE = os.environ.get("TRAINLINT_UPDATE_FIXTURES") == "1"


def pytest_sessionstart() -> None:
    """The suite starts trainlint in a few hundred processes. An install compiles the
    package to bytecode; an editable checkout may never have (PYTHONDONTWRITEBYTECODE), and
    then each process would compile its 140 modules again (0.4 s): compile them once."""
    compileall.compile_dir(ROOT / "trainlint", quiet=1)


def lint_text(
    text: str, settings: Settings | None = None, name: str = "case.yaml"
) -> list[Finding]:
    return lint([load(text, name)], settings)


def lint_files(*paths: Path, settings: Settings | None = None) -> list[Finding]:
    loaded = []
    for path in paths:
        text, problems = decode(path.read_bytes(), str(path))
        loaded.append(load(text, str(path), problems))
    return lint(loaded, settings)


def read_yaml(path: Path) -> Any:
    """A YAML file, read with libyaml: about 9x faster than the pure-Python parser of
    `yaml.safe_load`, which cost seconds on the rule cases and the upstream CRDs (a
    megabyte each)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


def shared_or_skip(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the upstream corpus lives beside the checkout in CI")
    return path


def schema_nodes(root: Node) -> Iterator[Node]:
    """Every node of a CRD-rule schema tree, each once (releases and kinds share nodes)."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        todo.extend(child for child in (*(node.properties or {}).values(), node.items,
                                        node.additional) if child is not None)


@functools.cache
def reads_back_plain(text: str) -> bool:
    """Whether `text` written plain, as PyYAML writes it, reads back as that text: PyYAML
    quotes what YAML 1.1 reads otherwise, not `y`, `08` or `1e3`, which kubectl (go-yaml
    v2, as the loader) takes for a boolean and numbers."""
    written = yaml.safe_dump({"k": text}, width=10**6)
    read: object = load(f"kind: K\n{written}", "plain.yaml").manifests[0].written["k"]
    return read == text


class KubectlDumper(yaml.SafeDumper):
    """PyYAML's dumper, quoting a string kubectl would read as something else."""

    def represent_str(self, data: str) -> yaml.ScalarNode:
        style = None if reads_back_plain(data) else "'"
        return self.represent_scalar("tag:yaml.org,2002:str", data, style=style)


KubectlDumper.add_representer(str, KubectlDumper.represent_str)
