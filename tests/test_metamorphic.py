"""Findings do not depend on how an object is written, only on what the API server stores.

Metamorphic tests on real manifests (`../shared/corpus/`: Trainer's runtimes and examples of
three releases, the documentation pages of the field corpus): each unit is linted as it
is, then after a change that nothing the API server or the Trainer controller sees (the
YAML written in other styles, as JSON, split or joined, runtimes moved to the context,
unrelated objects and labels added, objects renamed consistently, equal quantities, CRD
defaults written out); its findings, as (code, severity, object, key path), must stay
the same. Positions and file names may move. Documents are read with trainlint's own
loader, so that a value is what kubectl would send.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SHARED, reads_back_plain
from trainlint.config.settings import Settings
from trainlint.engine.run import lint
from trainlint.finding import Finding
from trainlint.loader import load
from trainlint.release import TrainerVersion

CORPUS = SHARED / "corpus"
RUNTIMES = {"TrainingRuntime", "ClusterTrainingRuntime"}
Docs = list[dict[str, Any]]
Files = list[tuple[str, str]]
Unit = list[tuple[str, Docs]]


def _dumper(style: str | None = None, multiline: str | None = None,
            seq_indent: bool = False) -> type[yaml.SafeDumper]:
    class Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

        if seq_indent:
            def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
                super().increase_indent(flow, False)

    def text(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
        chosen = multiline if "\n" in data and multiline else style
        if chosen is None and not reads_back_plain(data):
            chosen = "'"
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=chosen)

    Dumper.add_representer(str, text)
    return Dumper


def dump(docs: Docs, *, sort: bool = False, flow: bool = False, indent: int = 2,
         style: str | None = None, multiline: str | None = None,
         seq_indent: bool = False) -> str:
    return yaml.dump_all(docs, Dumper=_dumper(style, multiline, seq_indent), sort_keys=sort,
                         default_flow_style=flow, indent=indent, width=10**6,
                         allow_unicode=True)


def reversed_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_keys(item) for item in value]
    return value


def _units() -> dict[str, tuple[list[Path], TrainerVersion]]:
    units: dict[str, tuple[list[Path], TrainerVersion]] = {}
    if not CORPUS.is_dir():
        return units
    for tag, version in (("v2.0.0", (2, 0)), ("v2.2.0", (2, 2)), ("v2.3.0", (2, 3))):
        units[f"trainer/{tag}"] = (sorted((CORPUS / "trainer" / tag).glob("*.yaml")), version)
    pages: dict[str, list[Path]] = {}
    for path in sorted((CORPUS / "field").rglob("*.yaml")):
        page = re.sub(r"\.L\d+\.yaml$", "", path.relative_to(CORPUS / "field").as_posix())
        pages.setdefault(page, []).append(path)
    for page, paths in pages.items():
        units[f"field/{page}"] = (paths, (2, 3))
    return units


UNITS = _units()


def _read(paths: list[Path]) -> Unit:
    """Each file's objects as the loader reads them (a List's items one by one)."""
    return [(str(path), [manifest.written for manifest in
                         load(path.read_text(encoding="utf-8"), str(path)).manifests])
            for path in paths]


Key = tuple[str, str, Any, Any]


def key(finding: Finding) -> Key:
    ref = finding.object
    return (finding.code, str(finding.severity),
            (ref.kind, ref.name, ref.namespace) if ref else None, tuple(finding.path))


def findings(files: Files, version: TrainerVersion, context: Files | None = None) -> Counter[Key]:
    settings = Settings(trainer_version=version)
    known = [manifest for name, text in context or [] for manifest in load(text, name).manifests]
    return Counter(key(finding) for finding in
                   lint([load(text, name) for name, text in files], settings, context=known))


# --- transformations ---
#: Each takes the unit's files (name, objects) and gives the files to lint, the context,
#: which findings of the original must stay (all by default), and how a finding of the
#: transformed unit is named in the original's terms.
Result = tuple[Files, Files, Callable[[Key], bool], Callable[[Key], Key]]


def _all(found: Key) -> bool:
    return True


def _same(found: Key) -> Key:
    return found


def _plain(files: Files) -> Result:
    return files, [], _all, _same


def _each(unit: Unit, change: Callable[[dict[str, Any]], None]) -> Files:
    out = []
    for name, docs in unit:
        changed = copy.deepcopy(docs)
        for obj in changed:
            change(obj)
        out.append((name, dump(changed, multiline="|")))
    return out


def _objects_named(rename: Callable[[str, str, str | None], Any]) -> Callable[[Key], Key]:
    """How a finding of the transformed unit names its object in the original's terms."""
    def back(found: Key) -> Key:
        code, severity, ref, path = found
        return code, severity, rename(*ref) if ref else None, path

    return back


def _joined(unit: Unit) -> tuple[str, Docs]:
    return str(Path(unit[0][0]).parent / "joined.yaml"), [d for _, docs in unit for d in docs]

def t_sorted_keys(unit: Unit) -> Result:
    return _plain([(n, dump(d, sort=True)) for n, d in unit])


def t_reversed_keys(unit: Unit) -> Result:
    return _plain([(n, dump([reversed_keys(x) for x in d])) for n, d in unit])


def t_double_quoted_folded(unit: Unit) -> Result:
    return _plain([(n, dump(d, style='"', multiline=">")) for n, d in unit])


def t_single_quoted_literal_indent4(unit: Unit) -> Result:
    return _plain([(n, dump(d, style="'", multiline="|", indent=4, seq_indent=True))
                   for n, d in unit])


def t_flow(unit: Unit) -> Result:
    return _plain([(n, dump(d, flow=True)) for n, d in unit])


def t_json(unit: Unit) -> Result:
    return _plain([(n + ".json", "\n---\n".join(json.dumps(x, indent=2) for x in d))
                   for n, d in unit])


def _commented(text: str) -> str:
    """A comment line before every block key or list item that starts a line (placed from
    the YAML tokens, so never inside a block scalar)."""
    lines = text.split("\n")
    starts: dict[int, int] = {}
    depth = 0
    for token in yaml.scan(text, Loader=yaml.CSafeLoader):
        if isinstance(token, (yaml.FlowMappingStartToken, yaml.FlowSequenceStartToken)):
            depth += 1
        elif isinstance(token, (yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)):
            depth -= 1
        elif depth == 0 and isinstance(token, (yaml.KeyToken, yaml.BlockEntryToken)):
            line, column = token.start_mark.line, token.start_mark.column
            if len(lines[line]) - len(lines[line].lstrip(" ")) == column:
                starts.setdefault(line, column)
    out = []
    for number, line in enumerate(lines):
        if number in starts:
            out.append(" " * starts[number] + "# a comment")
        out.append(line)
    return "\n".join(out)


def t_markers_and_comments(unit: Unit) -> Result:
    return _plain([(n, "# header\n" + _commented(yaml.dump_all(
        d, Dumper=_dumper(multiline="|"), sort_keys=False, width=10**6, allow_unicode=True,
        explicit_start=True, explicit_end=True))) for n, d in unit])


def t_split(unit: Unit) -> Result:
    return _plain([(f"{n}.{i}.yaml", dump([d])) for n, docs in unit for i, d in enumerate(docs)])


def t_join_reversed(unit: Unit) -> Result:
    name, docs = _joined(unit)
    return _plain([(name, dump(list(reversed(docs))))])


def t_kind_list(unit: Unit) -> Result:
    name, docs = _joined(unit)
    return _plain([(name, dump([{"apiVersion": "v1", "kind": "List", "items": docs}]))])


def t_runtimes_to_context(unit: Unit) -> Result:
    name, docs = _joined(unit)
    checked = [d for d in docs if d.get("kind") not in RUNTIMES]
    context = [d for d in docs if d.get("kind") in RUNTIMES]
    return ([(name, dump(checked))], [("/context/runtimes.yaml", dump(context))],
            lambda found: found[2] is None or found[2][0] not in RUNTIMES, _same)


UNRELATED = [
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "zz-unrelated"},
     "data": {"a": "b"}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "zz-unrelated"},
     "spec": {"selector": {"matchLabels": {"app": "zz"}}, "template": {
         "metadata": {"labels": {"app": "zz"}},
         "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                  "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}}}},
]


def t_unrelated_objects(unit: Unit) -> Result:
    files = [(n, dump(d)) for n, d in unit]
    files[0] = (files[0][0], dump(UNRELATED + unit[0][1]))
    return files, [], _all, _same


def t_irrelevant_labels(unit: Unit) -> Result:
    def change(obj: dict[str, Any]) -> None:
        meta = obj.setdefault("metadata", {})
        meta.setdefault("labels", {})["example.com/team"] = "research"
        meta.setdefault("annotations", {})["example.com/note"] = "irrelevant"
    return _plain(_each(unit, change))


def _rot(text: str) -> str:
    return "".join(chr((ord(c) - 97 + 13) % 26 + 97) if "a" <= c <= "z" else c for c in text)


def t_renamed_runtimes(unit: Unit) -> Result:
    """Each runtime of the unit renamed (same length), with every runtimeRef to it."""
    names = {o["metadata"]["name"] for _, docs in unit for o in docs if o.get("kind") in RUNTIMES}
    renamed = {name: _rot(name) for name in names}
    back = {new: old for old, new in renamed.items()}

    def change(obj: dict[str, Any]) -> None:
        if obj.get("kind") in RUNTIMES:
            obj["metadata"]["name"] = renamed[obj["metadata"]["name"]]
        ref = (obj.get("spec") or {}).get("runtimeRef") if obj.get("kind") == "TrainJob" else None
        if isinstance(ref, dict) and ref.get("name") in renamed:
            ref["name"] = renamed[ref["name"]]
    files = _each(unit, change)
    return files, [], _all, _objects_named(
        lambda kind, name, namespace: (kind, back.get(name, name), namespace))


CLUSTER_SCOPED = {"ClusterTrainingRuntime", "ClusterQueue", "ResourceFlavor", "Namespace",
                  "PriorityClass", "WorkloadPriorityClass", "StorageClass", "ClusterRole",
                  "ClusterRoleBinding", "PersistentVolume", "Topology"}


def t_namespace_written_out(unit: Unit) -> Result:
    """An unset namespace written as `default` (where kubectl's context puts the object)."""
    unset = set()

    def change(obj: dict[str, Any]) -> None:
        meta = obj.setdefault("metadata", {})
        if obj.get("kind") not in CLUSTER_SCOPED and not meta.get("namespace"):
            meta["namespace"] = "default"
            unset.add((obj.get("kind"), meta.get("name")))
    files = _each(unit, change)
    return files, [], _all, _objects_named(
        lambda kind, name, namespace: (kind, name, None) if (kind, name) in unset
        and namespace == "default" else (kind, name, namespace))


def t_cluster_runtime_with_namespace(unit: Unit) -> Result:
    """A namespace on a cluster-scoped object is cleared by the API server."""
    def change(obj: dict[str, Any]) -> None:
        if obj.get("kind") == "ClusterTrainingRuntime":
            obj.setdefault("metadata", {}).setdefault("namespace", "zz-elsewhere")
    return _each(unit, change), [], _all, _objects_named(
        lambda kind, name, namespace: (kind, name, None if namespace == "zz-elsewhere"
                                       else namespace))


def _quantities(value: Any, parent: str = "") -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if parent in ("limits", "requests") and not isinstance(v, (dict, list, bool)):
                if isinstance(v, int):
                    value[k] = str(v)
                elif isinstance(v, str) and (m := re.fullmatch(r"(\d+)Gi", v)):
                    value[k] = f"{int(m.group(1)) * 1024}Mi"
            else:
                _quantities(v, str(k))
    elif isinstance(value, list):
        for item in value:
            _quantities(item, parent)


def t_equal_quantities(unit: Unit) -> Result:
    return _plain(_each(unit, _quantities))


def t_crd_defaults(unit: Unit) -> Result:
    def change(obj: dict[str, Any]) -> None:
        spec = obj.get("spec")
        if obj.get("kind") == "TrainJob" and isinstance(spec, dict):
            spec.setdefault("suspend", False)
            spec.setdefault("managedBy", "trainer.kubeflow.org/trainjob-controller")
            ref = spec.get("runtimeRef")
            if isinstance(ref, dict):
                ref.setdefault("apiGroup", "trainer.kubeflow.org")
                ref.setdefault("kind", "ClusterTrainingRuntime")
        if obj.get("kind") in RUNTIMES and isinstance(spec, dict):
            jobs = (((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs")) or []
            for job in jobs:
                if isinstance(job, dict):
                    job.setdefault("replicas", 1)
    return _plain(_each(unit, change))


TRANSFORMS = {name[2:]: fn for name, fn in globals().items() if name.startswith("t_")}


@pytest.mark.parametrize("unit", sorted(UNITS))
def test_findings_do_not_depend_on_how_objects_are_written(unit: str) -> None:
    paths, version = UNITS[unit]
    read = _read(paths)
    original = findings([(str(p), p.read_text(encoding="utf-8")) for p in paths], version)
    failures = []
    for name, transform in TRANSFORMS.items():
        files, context, kept, back = transform(read)
        want = Counter({found: n for found, n in original.items() if kept(found)})
        got = Counter({back(found): n for found, n in findings(files, version, context).items()
                       if not (found[2] and found[2][1] == "zz-unrelated")})
        if got != want:
            failures.append(f"{name}: lost {sorted(want - got)}, gained {sorted(got - want)}")
    assert failures == []


def test_the_corpus_is_there() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is absent: the upstream corpus lives beside the checkout in CI")
    assert len(UNITS) >= 10
