"""The CRDs' validation rules as trainlint ships them: trimmed from the upstream CRDs, then
compiled for the CEL engine (`trainlint.model.validations`).

Two steps, both run by hand after an upstream release:

- `python -m trainlint.model.crd DIR` trims the CRDs of each release (`DIR/<tag>/
  trainer.kubeflow.org_*.yaml`, the files of kubeflow/trainer's `manifests/base/crds/` at the
  commits of `SOURCES`) into `crds/<release>.json`: the schema on the way to each
  `x-kubernetes-validations` rule and the whole schema under it (what pruning, defaulting and
  list equality need), without descriptions. The upstream commit and paths are recorded in
  each file (Apache-2.0, as the CRDs are).
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

from trainlint.model.crd_rules import COMPILED, CRDS, Compiled, CrdRule, Node
from trainlint.rule import RELEASES, TrainerVersion, format_version

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


def _children(schema: dict[str, Any]) -> list[dict[str, Any]]:
    found = list(schema.get("properties", {}).values())
    found += [schema[key] for key in ("items", "additionalProperties")
              if isinstance(schema.get(key), dict)]
    return found


def _has_rules(schema: dict[str, Any]) -> bool:
    return VALIDATIONS in schema or any(_has_rules(child) for child in _children(schema))


def _whole(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema under a rule: every field (unknown ones are pruned before a rule runs)."""
    kept = {key: value for key, value in schema.items() if key in KEPT}
    if "properties" in schema:
        kept["properties"] = {name: _whole(child) for name, child in schema["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            kept[key] = _whole(schema[key])
    return kept


def trim(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema on the way to each rule, and all of it under each rule."""
    if VALIDATIONS in schema:
        return _whole(schema)
    kept = {key: value for key, value in schema.items() if key in KEPT}
    properties = {name: trim(child) for name, child in schema.get("properties", {}).items()
                  if _has_rules(child)}
    if properties:
        kept["properties"] = properties
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict) and _has_rules(schema[key]):
            kept[key] = trim(schema[key])
    return kept


def trimmed_release(folder: Path, release: TrainerVersion) -> dict[str, Any]:
    """One release's `crds/<release>.json`, from the upstream CRD files in `folder`."""
    import yaml

    tag, commit = SOURCES[release]
    kinds: dict[str, Any] = {}
    for kind, name in FILES.items():
        crd = yaml.safe_load((folder / name).read_text(encoding="utf-8"))
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
            fields = fields_read(ast)
            self._rules[key] = CrdRule(
                expression, message, transition, len(self.programs) - 1, fields,
                anchor(ast) if fields is not None else (),
            )
        return self._rules[key]


def _identifiers(ast: Any) -> set[str]:
    import lark

    return {str(token) for token in ast.scan_values(
        lambda value: isinstance(value, lark.Token) and value.type == "IDENT")}


def fields_read(ast: Any) -> tuple[str, ...] | None:
    """The fields a rule reads of `self`, when it reads `self` only as `self.<field>`
    (`has(self.x)` included); None when it reads `self` whole (`self == oldSelf`)."""
    import lark

    uses = sum(1 for token in ast.scan_values(lambda value: isinstance(value, lark.Token))
               if token.type == "IDENT" and token == "self")
    selected = [str(tree.children[1]) for tree in ast.iter_subtrees()
                if tree.data == "member_dot" and _is_self(tree.children[0])]
    return tuple(sorted(set(selected))) if selected and len(selected) == uses else None


def anchor(ast: Any) -> tuple[str, ...]:
    """The path that every `self.a.b...` of a rule starts with (call it only for a rule
    that reads `self` through fields alone)."""
    import lark

    chains: list[tuple[str, ...]] = []
    inner: set[int] = set()
    for tree in ast.iter_subtrees_topdown():
        if tree.data != "member_dot" or id(tree) in inner:
            continue
        chain: list[str] = []
        step = tree
        while True:
            chain.append(str(step.children[1]))
            receiver = step.children[0]
            if _is_self(receiver):
                chains.append(tuple(reversed(chain)))
                break
            inside = receiver.children[0] if len(receiver.children) == 1 else None
            if not (isinstance(inside, lark.Tree) and inside.data == "member_dot"):
                break
            inner.add(id(inside))
            step = inside
    common: tuple[str, ...] = chains[0] if chains else ()
    for found in chains[1:]:
        shared = 0
        while shared < min(len(common), len(found)) and common[shared] == found[shared]:
            shared += 1
        common = common[:shared]
    return common


def _is_self(tree: Any) -> bool:
    """`member → primary → ident self`."""
    import lark

    while isinstance(tree, lark.Tree) and tree.data in ("member", "primary", "ident"):
        if tree.data == "ident":
            return str(tree.children[0]) == "self"
        if len(tree.children) != 1:
            return False
        tree = tree.children[0]
    return False


def compile_all() -> Compiled:
    """Every release's rules, compiled (what `COMPILED` holds)."""
    compiler = _Compiler()
    roots = {
        (kind, release): (compiler.node(schema), status)
        for release in RELEASES
        for kind, (schema, status) in schemas(release).items()
    }
    return Compiled(roots, tuple(compiler.programs))


def dump(compiled: Compiled) -> bytes:
    return pickle.dumps(compiled, protocol=pickle.HIGHEST_PROTOCOL)


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
