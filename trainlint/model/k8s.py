"""Kubernetes types (Pod and Job templates, PVCs, StorageClasses...) from kubernetes-validate's
OpenAPI schemas, turned into schema `Node`s so that one walk checks an object end to end.

The schemas are read from the kubernetes-validate package data without importing it (its
import pulls in jsonschema, ~120 ms): the definitions use only `type`, `properties`,
`additionalProperties`, `items`, `required`, `enum`, `$ref` and a `oneOf` for
int-or-string and quantities, which the walker checks directly. Each definition is
converted once per Kubernetes version, when an object first needs it.
"""

from __future__ import annotations

import importlib.util
import json
import mmap
import re
import threading
from functools import cache
from pathlib import Path
from typing import Any

from trainlint.model.node import Node, Type, same_in_every_release

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def _schemas_dir() -> Path:
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("kubernetes-validate is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"


@cache
def versions() -> list[str]:
    """The Kubernetes versions whose schemas are installed, oldest first (`1.33`)."""
    found = {
        str(match[1]) for entry in _schemas_dir().iterdir()
        if (match := re.fullmatch(r"v(\d+\.\d+)\.\d+-local-strict", entry.name))
    }
    return sorted(found, key=lambda text: tuple(int(part) for part in text.split(".")))


@cache
def resolve_version(wanted: str) -> str:
    """The newest installed schema version not newer than `wanted` (as kubernetes-validate
    chooses); ValueError when `wanted` is older than every installed one."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", wanted.strip())
    if not match:
        raise ValueError(f"not a Kubernetes version: {wanted!r} (expected e.g. 1.33)")
    target = (int(match[1]), int(match[2]))
    known = [text for text in versions() if tuple(map(int, text.split("."))) <= target]
    if not known:
        raise ValueError(f"no schemas for Kubernetes {wanted} (oldest: {versions()[0]})")
    return known[-1]


def _definitions_path(version: str) -> Path:
    return _schemas_dir() / f"v{version}.0-local-strict" / "_definitions.json"


@cache
def _definitions(version: str) -> dict[str, Any]:
    with _definitions_path(version).open(encoding="utf-8") as file:
        definitions: dict[str, Any] = json.load(file)["$defs"]
    return definitions


#: A definition's name where the file, written with two spaces of indentation, puts it:
#: at the start of a line of four spaces, the only keys there (names with escapes are
#: left to the whole file).
_NAME_AT = re.compile(rb'\n    "([^"\\]+)": ')
_HEAD = b'{\n  "$defs": {\n'
_DECODER = json.JSONDecoder()


@cache
def _places(version: str) -> tuple[mmap.mmap, dict[str, tuple[int, int]]] | None:
    """A version's file, mapped, and where each definition's value starts and ends in it
    (None when the file is not laid out as expected). Parsing only the definitions a run
    needs (117 for a TrainJob and its runtime, a sixth of the file) instead of all 1.4 MB
    of it takes 8.1 ms of CPU instead of 13.0 (the file read and indexed included; medians
    of 20 fresh processes), for every `check --no-cache one.yaml` and each first run.

    Mapped, the file's pages are read in place: read and decoded whole, the 1.4 MB were
    copied twice, 700 of the run's 4,800 page faults."""
    with _definitions_path(version).open("rb") as file:
        try:
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # empty, or a file system that cannot map it
            return None
    if mapped[:len(_HEAD)] != _HEAD:
        return None
    end = mapped.find(b"\n  }")  # the end of `$defs`, the first key of the outermost object
    places: dict[str, tuple[int, int]] = {}
    name, start = "", 0
    for match in _NAME_AT.finditer(mapped, 0, end):
        if name:
            places[name] = (start, match.start())
        name, start = match[1].decode(), match.end()
    if name:
        places[name] = (start, end)
    return mapped, places


@cache
def _read(version: str, name: str) -> Any:
    """One definition as the file holds it, parsed alone when its place is known."""
    found = _places(version)
    if found is not None and name in found[1]:
        mapped, places = found
        start, stop = places[name]
        return _DECODER.raw_decode(mapped[start:stop].decode())[0]
    return _definitions(version)[name]


#: Definitions earlier runs needed, by Kubernetes version and name (the cache fills it,
#: `trainlint.run.cache`, for the file `definitions_stamp` names): checking objects that
#: need only those never parses the whole file, 1.8 MB of JSON, a tenth of the start-up
#: of `trainlint check one.yaml`, of which a TrainJob reads 2 %.
KNOWN: dict[str, dict[str, Any]] = {}
#: The names of the definitions this process took from the whole file, by version.
READ: dict[str, set[str]] = {}


def definition(version: str, name: str) -> Any:
    """One definition, as the Kubernetes version's file holds it."""
    known = KNOWN.get(version)
    if known is not None and name in known:
        return known[name]
    found = _read(version, name)
    READ.setdefault(version, set()).add(name)
    return found


def definitions_stamp(version: str) -> str | None:
    """What identifies the file of a version's definitions (None: there is none)."""
    try:
        path = _definitions_path(version)
        status = path.stat()
    except (OSError, RuntimeError):
        return None
    return f"{path}:{status.st_size}:{status.st_mtime_ns}"


class Converter:
    """Definitions of one Kubernetes version as Nodes, converted on first use.

    One converter serves every thread (the webhook's workers): a Node is published only
    once it and everything it refers to are filled, so no thread checks an object against
    a half-converted definition."""

    def __init__(self, version: str) -> None:
        self.version = version
        #: Complete Nodes, read without the lock.
        self._nodes: dict[tuple[str, bool], Node] = {}
        #: Nodes being filled (definitions may be recursive), seen only under the lock.
        self._filling: dict[tuple[str, bool], Node] = {}
        self._lock = threading.RLock()

    def definition(self, name: str, embedded: bool) -> Node:
        """The Node of a definition; inside a custom resource (`embedded`), object metadata
        keeps only what the CRD keeps."""
        key = (name, embedded)
        node = self._nodes.get(key)
        if node is not None:
            return node
        if embedded and name == OBJECT_META:
            return same_in_every_release("EmbeddedMeta")
        with self._lock:
            node = self._nodes.get(key) or self._filling.get(key)
            if node is not None:
                return node
            outermost = not self._filling
            node = self._filling[key] = Node("any")  # before filling: it may refer to itself
            try:
                self._fill(node, definition(self.version, name), embedded)
                if outermost:
                    self._nodes.update(self._filling)
            finally:
                if outermost:
                    self._filling.clear()
        return node

    def _convert(self, schema: dict[str, Any], embedded: bool) -> Node:
        if "$ref" in schema:
            return self.definition(schema["$ref"].rsplit("/", 1)[-1], embedded)
        node = Node("any")
        self._fill(node, schema, embedded)
        return node

    def _fill(self, node: Node, schema: dict[str, Any], embedded: bool) -> None:
        if "oneOf" in schema:
            choices = {kind for choice in schema["oneOf"] for kind in _types(choice)}
            node.type = "int-or-string" if "integer" in choices else "quantity"
            node.nullable = "null" in choices
            return
        kinds = _types(schema)
        node.nullable = "null" in kinds
        main = next((kind for kind in kinds if kind != "null"), "any")
        node.type = _TYPES.get(main, "any")
        if "enum" in schema:
            node.enum = tuple(value for value in schema["enum"] if value is not None)
            node.bounded = True
        if node.type == "array":
            node.items = self._convert(schema.get("items") or {}, embedded)
        elif node.type == "object":
            extra = schema.get("additionalProperties")
            properties = schema.get("properties")
            if properties is None and isinstance(extra, dict):
                node.type, node.items = "map", self._convert(extra, embedded)
                return
            node.fields = {
                key: self._convert(value, embedded) for key, value in (properties or {}).items()
            }
            node.open = extra is not False
            node.required = tuple(schema.get("required", ()))


_TYPES: dict[str, Type] = {
    "object": "object", "array": "array", "string": "string", "integer": "integer",
    "number": "number", "boolean": "boolean",
}


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    if kind is None:
        return ["object"] if "properties" in schema else []
    return [kind] if isinstance(kind, str) else list(kind)


@cache
def converter(version: str) -> Converter:
    return Converter(version)
