"""The CRDs' validation rules as trainlint ships them: trimmed from the upstream CRDs, then
compiled for the CEL engine (`trainlint.model.validations`).

Two steps, both run by hand after an upstream release:

- `python -m trainlint.model.crd DIR` trims the CRDs of each release (`DIR/<tag>/
  trainer.kubeflow.org_*.yaml`, the files of kubeflow/trainer's `manifests/base/crds/` at the
  commits of `SOURCES`) into `crds/<release>.json`: the schema on the way to each
  `x-kubernetes-validations` rule and the whole schema under it (what pruning, defaulting and
  list equality need), and on the way to each keyed list with its keys' fields (what
  `trainlint.model.list_keys` needs), without descriptions. The upstream commit and paths
  are recorded in each file (Apache-2.0, as the CRDs are).
- `python -m trainlint.model` compiles the JSON files into `validations.pickle`: the schema
  nodes and every rule parsed once, so that checking never builds the CEL parser (about
  80 ms). A test keeps the pickle equal to a fresh compile.
"""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path
from typing import Any

from trainlint.model.crd_rules import (
    COMPILED,
    CRDS,
    ITEMS,
    Compiled,
    CrdRule,
    Form,
    Node,
    Reads,
)
from trainlint.model.node import by_release
from trainlint.release import RELEASES, TrainerVersion, format_version

REPOSITORY = "kubeflow/trainer"
CRD_FOLDER = "manifests/base/crds"
#: The upstream commit of each release's CRDs.
SOURCES: dict[TrainerVersion, tuple[str, str]] = {
    (2, 0): ("v2.0.0", "117ad23a73d1df59ecb4998a761dab9e62e527db"),
    (2, 1): ("v2.1.0", "73c9bece741ce17d2124abda3ec6bfcf5b5b8e87"),
    (2, 2): ("v2.2.0", "dc7656ad878916f526cd401f30a347574cd47877"),
    (2, 3): ("v2.3.0", "658725bdae5c7e3a0854d93ac6ff492e109a22ab"),
}
FILES = {
    "TrainJob": "trainer.kubeflow.org_trainjobs.yaml",
    "TrainingRuntime": "trainer.kubeflow.org_trainingruntimes.yaml",
    "ClusterTrainingRuntime": "trainer.kubeflow.org_clustertrainingruntimes.yaml",
}
#: The schema keywords the engine reads; the rest (descriptions, formats, bounds) is dropped.
KEPT = frozenset({
    "type", "default", "nullable", "x-kubernetes-validations", "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys", "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
})
VALIDATIONS = "x-kubernetes-validations"
LIST_TYPE = "x-kubernetes-list-type"
#: The list types whose items the API server keys (`trainlint.model.list_keys`).
KEYED = frozenset({"map", "set"})


def _children(schema: dict[str, Any]) -> list[dict[str, Any]]:
    found = list(schema.get("properties", {}).values())
    found += [schema[key] for key in ("items", "additionalProperties")
              if isinstance(schema.get(key), dict)]
    return found


def _needed(schema: dict[str, Any]) -> bool:
    """Whether a rule or a keyed list is at or below `schema`."""
    return (VALIDATIONS in schema or schema.get(LIST_TYPE) in KEYED
            or any(_needed(child) for child in _children(schema)))


def _whole(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema under a rule: every field (unknown ones are pruned before a rule runs)."""
    kept = {key: value for key, value in schema.items() if key in KEPT}
    if "properties" in schema:
        kept["properties"] = {name: _whole(child) for name, child in schema["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            kept[key] = _whole(schema[key])
    return kept


def trim(schema: dict[str, Any], keys: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The schema on the way to each rule, and all of it under each rule; on the way to
    each keyed list, and the fields of its `keys` (their defaults stand in for a key an
    item leaves out)."""
    if VALIDATIONS in schema:
        return _whole(schema)
    kept = {key: value for key, value in schema.items() if key in KEPT}
    properties = {name: trim(child) for name, child in schema.get("properties", {}).items()
                  if name in keys or _needed(child)}
    if properties:
        kept["properties"] = properties
    items = schema.get("items")
    if isinstance(items, dict) and (schema.get(LIST_TYPE) in KEYED or _needed(items)):
        kept["items"] = trim(items, frozenset(schema.get("x-kubernetes-list-map-keys", ())))
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict) and _needed(extra):
        kept["additionalProperties"] = trim(extra)
    return kept


def trimmed_release(folder: Path, release: TrainerVersion) -> dict[str, Any]:
    """One release's `crds/<release>.json`, from the upstream CRD files in `folder`."""
    import yaml

    tag, commit = SOURCES[release]
    kinds: dict[str, Any] = {}
    for kind, name in FILES.items():
        crd = yaml.load((folder / name).read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
        (version,) = crd["spec"]["versions"]  # v1alpha1, the only version served
        entry = {
            "path": f"{CRD_FOLDER}/{name}",
            "version": version["name"],
            "statusSubresource": "status" in version.get("subresources", {}),
            "schema": trim(version["schema"]["openAPIV3Schema"]),
        }
        same = next((other for other, known in kinds.items()
                     if {**known, "path": ""} == {**entry, "path": ""}), None)
        kinds[kind] = {"path": entry["path"], "sameAs": same} if same else entry
    return {
        "release": format_version(release),
        "source": {"repository": REPOSITORY, "tag": tag, "commit": commit},
        "license": "Apache-2.0",
        "kinds": kinds,
    }


def shipped(release: TrainerVersion) -> dict[str, Any]:
    """The shipped `crds/<release>.json`."""
    data: dict[str, Any] = json.loads(
        (CRDS / f"{format_version(release)}.json").read_text(encoding="utf-8")
    )
    return data


def schemas(release: TrainerVersion) -> dict[str, tuple[dict[str, Any], bool]]:
    """Kind → (trimmed schema, whether status is a subresource), as shipped."""
    kinds = shipped(release)["kinds"]
    resolved = {kind: kinds[entry["sameAs"]] if "sameAs" in entry else entry
                for kind, entry in kinds.items()}
    return {kind: (entry["schema"], entry["statusSubresource"])
            for kind, entry in resolved.items()}


class _Compiler:
    """Turns shipped schemas into `Node`s, parsing each distinct rule text once."""

    def __init__(self) -> None:
        import celpy

        limit = sys.getrecursionlimit()
        self._environment = celpy.Environment()
        sys.setrecursionlimit(limit)  # celpy raises it for itself: the loader counts on ours
        self.programs: list[bytes] = []
        self.forms: list[Form] = []
        self._rules: dict[tuple[str, str, bool], CrdRule] = {}
        self._nodes: dict[str, Node] = {}

    def node(self, schema: dict[str, Any]) -> Node:
        key = json.dumps(schema, sort_keys=True)
        if key not in self._nodes:  # equal subtrees (TR and CTR, releases) are shared
            self._nodes[key] = self._build(schema)
        return self._nodes[key]

    def _build(self, schema: dict[str, Any]) -> Node:
        properties = {name: self.node(child)
                      for name, child in schema.get("properties", {}).items()}
        items = self.node(schema["items"]) if isinstance(schema.get("items"), dict) else None
        extra = schema.get("additionalProperties")
        return Node(
            properties=properties if "properties" in schema else None,
            items=items,
            additional=self.node(extra) if isinstance(extra, dict) else None,
            type=schema.get("type", ""),
            list_type=schema.get("x-kubernetes-list-type", "atomic"),
            map_keys=tuple(schema.get("x-kubernetes-list-map-keys", ())),
            int_or_string=bool(schema.get("x-kubernetes-int-or-string")),
            preserve_unknown=bool(schema.get("x-kubernetes-preserve-unknown-fields")),
            nullable=bool(schema.get("nullable")),
            embedded=bool(schema.get("x-kubernetes-embedded-resource")),
            default=(schema["default"],) if "default" in schema else (),
            rules=tuple(self._rule(entry) for entry in schema.get(VALIDATIONS, ())),
        )

    def _rule(self, entry: dict[str, Any]) -> CrdRule:
        unsupported = set(entry) - {"rule", "message"}
        if unsupported:  # messageExpression, reason, fieldPath, optionalOldSelf
            raise ValueError(f"rule {entry['rule']!r} uses {sorted(unsupported)}")
        expression, message = entry["rule"], entry.get("message", "")
        ast = self._environment.compile(expression)
        transition = "oldSelf" in _identifiers(ast)
        key = (expression, message, transition)
        if key not in self._rules:
            self.programs.append(pickle.dumps(ast, protocol=pickle.HIGHEST_PROTOCOL))
            self.forms.append(form(ast))
            found = reads(ast)
            self._rules[key] = CrdRule(
                expression, message, transition, len(self.programs) - 1, found, anchor(found),
            )
        return self._rules[key]


def form(tree: Any) -> Form:
    """A parsed program (or one node of it) as plain tuples: `trainlint.model.plain` reads
    them without importing lark (40 ms) or cel-python."""
    import lark

    if isinstance(tree, lark.Token):
        return tree.type, str(tree.value)
    return str(tree.data), tuple(form(child) for child in tree.children)


def _identifiers(ast: Any) -> set[str]:
    import lark

    return {str(token) for token in ast.scan_values(
        lambda value: isinstance(value, lark.Token) and value.type == "IDENT")}


#: The macros whose first argument names a variable bound to each item of the receiver.
ITERATING = frozenset({"all", "exists", "exists_one", "filter", "map"})


def reads(ast: Any) -> Reads | None:
    """What of `self` a rule reads: a tree of the fields it selects (`ITEMS`: every item
    of a list, or value of a map; None: the value there, whole), or None when it reads
    `self` whole (`self == oldSelf`). What this analysis does not follow counts as read
    whole, so the projection it allows can only keep too much."""
    found: Reads = {}
    return None if _read(ast, {"self": ()}, found) else found


def _read(tree: Any, bound: dict[str, tuple[str, ...]], found: Reads) -> bool:
    """Record into `found` what `tree` reads of the bound names; True when it reads
    `self` whole."""
    import lark

    if not isinstance(tree, lark.Tree):
        return False
    path = _chain(tree, bound)
    if path is not None:
        return _record(found, path)
    if tree.data == "member_dot_arg":
        receiver, method = tree.children[0], str(tree.children[1])
        arguments = tree.children[2] if len(tree.children) > 2 else None
        expressions = list(arguments.children) if isinstance(arguments, lark.Tree) else []
        path = _chain(receiver, bound)
        variable = _variable(expressions[0]) if expressions else None
        if path is not None and method in ITERATING and variable is not None:
            inner = {**bound, variable: (*path, ITEMS)}
            # every part is read (no short cut): each records what it reads
            wholes = [_read(part, inner, found) for part in expressions[1:]]
            _touch(found, (*path, ITEMS))  # iterating needs every item, if nothing of it
            return any(wholes)
    wholes = [_read(child, bound, found) for child in tree.children]
    return any(wholes)


def _chain(tree: Any, bound: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    """The path that `self.a.b` (or `x.dependsOn`, `x` bound by a macro) denotes: an
    expression that starts at a bound name and only selects fields."""
    import lark

    fields: list[str] = []
    while isinstance(tree, lark.Tree):
        if tree.data == "member_dot":
            fields.append(str(tree.children[1]))
            tree = tree.children[0]
        elif tree.data in ("member", "primary") and len(tree.children) == 1:
            tree = tree.children[0]
        elif tree.data == "ident":
            name = str(tree.children[0])
            return (*bound[name], *reversed(fields)) if name in bound else None
        else:
            return None
    return None


def _variable(tree: Any) -> str | None:
    """The name an expression is made of alone (a macro's variable)."""
    import lark

    tokens = list(tree.scan_values(lambda value: isinstance(value, lark.Token)))
    return str(tokens[0]) if len(tokens) == 1 and tokens[0].type == "IDENT" else None


def _record(found: Reads, path: tuple[str, ...]) -> bool:
    """Mark the value at `path` read whole; True when that is `self`."""
    if not path:
        return True
    parent = _touch(found, path[:-1])
    if parent is not None:
        parent[path[-1]] = None
    return False


def _touch(found: Reads, path: tuple[str, ...]) -> Reads | None:
    """The tree at `path`, made where missing; None when a value on the way is read whole."""
    node = found
    for step in path:
        if step in node and node[step] is None:
            return None
        child = node.setdefault(step, {})
        assert child is not None
        node = child
    return node


def anchor(found: Reads | None) -> tuple[str, ...]:
    """The path every field the rule reads starts with (`("metadata", "name")` for the
    name rules of the root): findings point there."""
    path: list[str] = []
    tree = found
    while tree is not None and len(tree) == 1:
        ((step, tree),) = tree.items()
        if step == ITEMS:
            break
        path.append(step)
    return tuple(path)


def compile_all() -> Compiled:
    """Every release's rules, compiled (what `COMPILED` holds)."""
    compiler = _Compiler()
    roots = {
        (kind, release): (compiler.node(schema), status)
        for release in RELEASES
        for kind, (schema, status) in schemas(release).items()
    }
    return Compiled(roots, tuple(compiler.programs), tuple(compiler.forms))


def dump(compiled: Compiled) -> bytes:
    """The bytes of `COMPILED`: each release's roots in a section of its own
    (`trainlint.model.node.by_release`), then every program and form."""
    return pickle.dumps((by_release(compiled.roots), compiled.programs, compiled.forms),
                        protocol=pickle.HIGHEST_PROTOCOL)


def write_compiled() -> None:
    COMPILED.write_bytes(dump(compile_all()))
    print(f"wrote {COMPILED}")


def main(folder: Path) -> None:
    """Trim the upstream CRDs under `folder` (one folder per tag) into `crds/`."""
    for release, (tag, _) in SOURCES.items():
        target = CRDS / f"{format_version(release)}.json"
        data = trimmed_release(folder / tag, release)
        target.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n",
                          encoding="utf-8")
        print(f"wrote {target}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m trainlint.model.crd CRD_FOLDER  (holding one folder per tag)")
    main(Path(sys.argv[1]))
