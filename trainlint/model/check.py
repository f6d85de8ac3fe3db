"""One walk of an object against its schema tree, collecting every schema problem.

The schema rules each report the issues of their own `Flaw` from the same walk:
the result is kept with the object, so the walk runs once per object, not per rule.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import Any, NamedTuple

from trainlint.document import KeyPath, Manifest, dotted, is_count, is_placeholder
from trainlint.kinds import RUNTIME_KINDS, TRAINER_API, TRAINER_KINDS
from trainlint.lookups import Lookups
from trainlint.memo import PerValue
from trainlint.model.k8s import converter, resolve_version
from trainlint.model.node import Node, tree
from trainlint.problem import Problem
from trainlint.release import TrainerVersion, format_version

#: Where a Job's pod failure policy matches pod conditions.
_ON_POD_CONDITIONS = ["podFailurePolicy", "rules", "onPodConditions"]
#: Kubernetes objects of a run that are checked whole: kind → (apiVersion, definition).
CORE_OBJECTS = {
    "PersistentVolumeClaim": ("v1", "io.k8s.api.core.v1.PersistentVolumeClaim"),
    "StorageClass": ("storage.k8s.io/v1", "io.k8s.api.storage.v1.StorageClass"),
}
SCHEMA_KINDS = TRAINER_KINDS | set(CORE_OBJECTS)


class Flaw(StrEnum):
    """What is wrong at a key: each schema rule reports the issues of one flaw."""

    WRONG_TYPE = "wrong-type"
    UNKNOWN_FIELD = "unknown-field"
    OTHER_RELEASE = "other-release"
    INVALID_VALUE = "invalid-value"
    MISSING_REQUIRED = "missing-required"


class Issue(NamedTuple):
    flaw: Flaw
    path: KeyPath
    message: str
    #: What was meant, so a fix can repair it without reading the message: for an unknown
    #: key, the one known name close enough (none when several are as close); for a
    #: misspelt quantity, the quantity it spells.
    match: str | None = None


def root(kind: str, api_version: str, release: TrainerVersion, kubernetes: str) -> Node | None:
    """The schema of an object, or None when trainlint has none for its kind and version."""
    if kind in CORE_OBJECTS:
        wanted, definition = CORE_OBJECTS[kind]
        if api_version != wanted:
            return None
        return converter(resolve_version(kubernetes)).definition(definition, embedded=False)
    if api_version != TRAINER_API:
        return None
    return tree("TrainJob" if kind == "TrainJob" else "TrainingRuntime", release)


#: The issues of one object's walk, shared by the schema rules. A function of the object
#: and the two releases alone, so kept with the object: the TrainJobs of a runtime ask for
#: the runtime's issues too (TL201), and a memo per object checked walked the runtime
#: again for each of them (2,857 of the 12,857 walks of 10,000 files, 0.25 s).
_ISSUES: PerValue[list[Issue]] = PerValue("schema-issues")


def issues(manifest: Manifest, ctx: Lookups) -> list[Issue]:
    """Every schema issue of `manifest` under the context's releases, walked once per
    object and releases: all schema rules ask in turn, and the answer is kept with the
    object (never in a global: the webhook decides requests in several threads at once)."""
    version, kubernetes = ctx.trainer_version, ctx.kubernetes_version

    def walk() -> list[Issue]:
        node = root(manifest.kind, manifest.api_version, version, kubernetes)
        found: list[Issue] = []
        if node is not None:
            walker = _Walker(manifest.kind, version, resolve_version(kubernetes), found)
            walker.walk(manifest.written, node, [], core=manifest.kind in CORE_OBJECTS)
        return found

    return _ISSUES.get(manifest, walk, version, kubernetes)


def embedded_issues(
    value: Any, definition: str, path: KeyPath, below: KeyPath, kind: str, ctx: Lookups
) -> list[Issue]:
    """The schema issues of `value`, held at `path` of a custom resource of `kind`, and
    at `below` inside a Kubernetes type (`definition`) that starts higher up: a part of
    a job template of a rendered JobSet. No issue when `below` leads nowhere in the type."""
    version = resolve_version(ctx.kubernetes_version)
    walker = _Walker(kind, ctx.trainer_version, version, [])
    node: Node | None = walker.converter.definition(definition, embedded=True)
    for key in below:
        if node is not None and node.type == "core":
            node = walker.converter.definition(node.definition, node.embedded)
        if node is None:
            break
        node = node.items if node.type in ("array", "map") else node.fields.get(str(key))
    if node is not None:
        walker.walk(value, node, list(path), core=True)
    return walker.out


def problems(manifest: Manifest, ctx: Lookups, flaw: Flaw) -> Iterator[Problem]:
    """The Problems of one schema rule: the issues of the walk of its flaw."""
    for issue in issues(manifest, ctx):
        if issue.flaw is flaw:
            yield Problem(issue.path, issue.message)


_JSON_TYPES = {
    "object": "object", "map": "object", "array": "array", "string": "string",
    "integer": "integer", "number": "number", "boolean": "boolean",
    "int-or-string": "integer or string", "quantity": "string or number",
}


def json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


#: The Python types (as the loader builds them) that each schema type accepts; `bool` is
#: an `int` in Python, so types are compared exactly.
_FITS: dict[str, tuple[type, ...]] = {
    "object": (dict,), "map": (dict,), "array": (list,),
    "string": (str,), "boolean": (bool,),
    "integer": (int,), "int-or-string": (int, str), "number": (int, float),
    "quantity": (int, float, str),
}


#: Per schema type, the Python types of values that need no walk at all: anything under
#: `any`, and a scalar of the right type where there are no bounds (`Node.bounded`). Most
#: nodes are such scalars; skipping the call for them halves the walk. A quantity written
#: as a string is walked: it must be spelled as one.
_SETTLED: dict[str, tuple[type, ...]] = {
    **{kind: types for kind, types in _FITS.items() if dict not in types and list not in types},
    "quantity": (int, float),
    "any": (str, int, float, bool, type(None), dict, list),
}

#: The `pattern` every CRD gives a Kubernetes quantity (`resource.Quantity`) written as a
#: string: a number, then a binary (`Ki`...`Ei`) or decimal (`m`, `k`...`E`) suffix or an
#: exponent.
_QUANTITY_BODY = (
    r"(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?"
)
QUANTITY_PATTERN = f"^{_QUANTITY_BODY}$"
#: Matched whole (`fullmatch`): Python's `$` would let a final newline through.
_QUANTITY = re.compile(_QUANTITY_BODY)
#: What a quantity is, in words (the API server's message is a regular expression).
QUANTITY_WORDS = (
    "a number with an optional suffix: `Ki`, `Mi`, `Gi`... (powers of 1024) or `m`, `k`, "
    "`M`, `G`... (powers of 1000)"
)
#: A number, then letters: what a misspelt quantity (`4GB`, `4 gi`) is made of.
_NEAR_QUANTITY = re.compile(r"([+-]?[0-9.]+)\s*([A-Za-z]*)")


#: What a TrainJob changes its runtime's pods with (one field each release), and the way
#: from its `spec` to the pod spec it changes (`[]`: an item).
_PATCHED_PODS = {
    "runtimePatches": ("runtimePatches", "[]", "trainingRuntimeSpec", "template", "spec",
                       "replicatedJobs", "[]", "template", "spec", "template", "spec"),
    "podTemplateOverrides": ("podTemplateOverrides", "[]", "spec"),
    "podSpecOverrides": ("podSpecOverrides", "[]"),
}
#: Keys of a TrainJob that another key of it means, by (kind, path, key): a container's
#: `resources` written under `spec.trainer`, whose own name is longer.
_MEANT: dict[tuple[str | int, ...], str] = {
    ("TrainJob", "spec", "trainer", "resources"): "resourcesPerNode",
}
#: The Kubernetes types whose fields, written one floor up (under a TrainJob's
#: `spec.trainer`: a pod's and a container's; in a runtime's JobSet spec: all three),
#: belong in a replicatedJob, with what messages call them and where each goes there.
_POD_PARTS = (("io.k8s.api.batch.v1.JobSpec", "Job"), ("io.k8s.api.core.v1.PodSpec", "pod"),
              ("io.k8s.api.core.v1.Container", "container"))
_IN_JOBS = ("job template (`replicatedJobs[].template.spec`)",
            "pod template (`replicatedJobs[].template.spec.template.spec`)",
            "containers (`replicatedJobs[].template.spec.template.spec.containers[]`)")


def _below(node: Node | None, keys: tuple[str, ...]) -> Node | None:
    """The schema node `keys` lead to from `node` (`[]`: an item), None where none does."""
    for key in keys:
        if node is None:
            return None
        node = node.items if key == "[]" else node.fields.get(key)
    return node


class _Walker:
    def __init__(self, kind: str, release: TrainerVersion, kubernetes: str, out: list[Issue]):
        self.kind = kind
        self.release = release
        self.kubernetes = kubernetes
        self.converter = converter(kubernetes)
        self.out = out

    def schema_name(self, core: bool) -> str:
        if core:
            return f"Kubernetes {self.kubernetes}"
        return f"Trainer {format_version(self.release)}"

    def walk(self, value: Any, node: Node, path: list[str | int], core: bool) -> None:
        if node.type == "core":
            node, core = self.converter.definition(node.definition, node.embedded), True
        kind = node.type
        if kind == "any":
            return
        if value is None:
            # A null list, map or scalar is dropped to the same effect as none written (the
            # `None` of a generator; TL009 says when one is required); a null struct most
            # often stands for `{}` (`torch:`, `emptyDir:`), whose presence means something.
            if not node.nullable and kind == "object":
                self.null(path)
            return
        if type(value) is str and value[:1] == "<" and is_placeholder(value):
            return  # the docs' `<your-namespace>`: a value for the reader to write
        if type(value) not in _FITS[kind]:
            self.wrong_type(value, node, path)
            return
        if kind == "object":
            self.mapping(value, node, path, core)
        elif kind == "array":
            if node.bounded:
                self.limits(len(value), node.min_items, node.max_items, path, "items")
            assert node.items is not None
            self.children(enumerate(value), node.items, path, core)
        elif kind == "map":
            assert node.items is not None
            self.children(value.items(), node.items, path, core)
        else:
            self.scalar(value, node, path)

    def children(
        self, pairs: Iterable[tuple[str | int, Any]], node: Node, path: list[str | int], core: bool
    ) -> None:
        """Walk the items of an array or map, which share one schema `node` (a Kubernetes
        definition is looked up once for all of them: env variables, mounts...)."""
        if node.type == "core":
            node, core = self.converter.definition(node.definition, node.embedded), True
        settled = () if node.bounded else _SETTLED.get(node.type, ())
        for key, item in pairs:
            if type(item) in settled:
                continue
            path.append(key)
            self.walk(item, node, path, core)
            path.pop()

    def mapping(self, value: dict[str, Any], node: Node, path: list[str | int], core: bool) -> None:
        fields = node.fields
        for key, item in value.items():
            child = fields.get(key)
            if child is None:
                if not node.open and item is not None:  # a null unknown key loses nothing
                    self.unknown(key, node, path, core, value)
                continue
            if not child.bounded and type(item) in _SETTLED.get(child.type, ()):
                continue
            path.append(key)
            self.walk(item, child, path, core)
            path.pop()
        # The API server prunes nulls first: a key set to null is as missing as one not written.
        for key in self.required(node, path):
            if value.get(key) is None:
                self.missing(key, path)
        if node.min_properties:  # few schemas set one; counting for all was 40 % of the walk
            self.too_few(value, node, path, node.min_properties)

    def too_few(
        self, value: dict[str, Any], node: Node, path: list[str | int], least: int
    ) -> None:
        """A mapping with fewer properties than its schema's `minProperties`, counted as
        the API server counts them."""
        # The API server prunes nulls and unknown keys before validating: what is left is
        # what the schema knows.
        written = [key for key, item in value.items() if item is not None]
        kept = [key for key in written if node.open or key in node.fields]
        if len(kept) < least:
            state, advice = (
                ("holds only unknown fields: once they are pruned it is empty, and",
                 "move them where the schema has them")
                if written and not kept else ("is empty:", "fill it in or remove it")
            )
            self.add(Flaw.INVALID_VALUE, path,
                     f"`{self.where(path)}` {state} the API server rejects the "
                     f"{self.kind} (`should have at least {least} properties`); "
                     f"{advice}")

    # --- findings ---

    def add(
        self, flaw: Flaw, path: list[str | int], message: str, match: str | None = None
    ) -> None:
        self.out.append(Issue(flaw, tuple(path), message, match))

    def where(self, path: list[str | int]) -> str:
        return dotted(tuple(path)) or "the object"

    def null(self, path: list[str | int]) -> None:
        """A struct with nothing after its key (`torch:`): the writer most likely meant it
        set with no fields, which the null is not."""
        advice = "remove it or give it a value"
        if path and isinstance(path[-1], str):
            advice = f"write `{path[-1]}: {{}}` to set it with no fields, or remove it"
        self.add(Flaw.WRONG_TYPE, path,
                 f"`{self.where(path)}` is null: the API server drops it as if "
                 f"it were not written; {advice}")

    def pruned(self) -> str:
        """What becomes of a field no schema knows: the API server's default field
        validation (`Warn`, what SDKs and GitOps tools get) prunes it; `kubectl` asks for
        `Strict` by default, and the whole object is refused."""
        return (f"the API server prunes it with only a warning (`kubectl`, strict by "
                f"default, has the {self.kind} refused)")

    def wrong_type(self, value: Any, node: Node, path: list[str | int]) -> None:
        expected, found = _JSON_TYPES[node.type], json_type(value)
        advice = f"write it as {'an' if expected[0] in 'aeiou' else 'a'} {expected}"
        if isinstance(value, str) and node.type in ("integer", "number", "boolean"):
            advice = "write it without quotes" if _parses(value, node.type) else advice
        if node.note:
            advice = node.note
        self.add(Flaw.WRONG_TYPE, path, f"`{self.where(path)}` must be of type {expected}, not "
                 f"{found}: the API server rejects the {self.kind}; {advice}")

    def unknown(
        self, key: str, node: Node, path: list[str | int], core: bool, value: dict[str, Any]
    ) -> None:
        where = self.where(path)
        released = node.elsewhere.get(key)
        defaulted = self.defaulted(value, node, path)
        if released is not None:
            advice = released.advice(self.release) or (
                "remove it, or check which Trainer release the cluster runs (`trainer-version`)"
            )
            self.add(Flaw.OTHER_RELEASE, [*path, key],
                     f"`{key}` in `{where}` exists in Trainer {released.describe()}, not in "
                     f"{format_version(self.release)}: {self.pruned()}, so it has no "
                     f"effect{defaulted}; {advice}")
            return
        message = (f"unknown field `{key}` in `{where}` ({self.schema_name(core)} schema): "
                   f"{self.pruned()}, so it has no effect{defaulted}; ")
        meant = _MEANT.get((self.kind, *path, key))
        belongs = self.belongs(key, path) if meant is None else None
        if belongs is not None:
            self.add(Flaw.UNKNOWN_FIELD, [*path, key], message + belongs)
            return
        found = [meant] if meant else close_matches(key, [*node.fields, *node.elsewhere])
        guess = found[0] if found else None
        if guess is None:
            message += "remove it or fix its name"
        else:
            message += f"did you mean `{guess}`?"
            other = node.elsewhere.get(guess)
            if other is not None:
                message += f" (it exists in Trainer {other.describe()}"
                advice = other.advice(self.release)
                message += f"; {advice})" if advice else ")"
        self.add(Flaw.UNKNOWN_FIELD, [*path, key], message, found[0] if len(found) == 1 else None)

    def defaulted(self, value: dict[str, Any], node: Node, path: list[str | int]) -> str:
        """`, and <path>, left with no field, takes its defaults (...)` where the API server
        prunes every key written in `value` and the schema defaults some of its fields
        (Volcano's `networkTopology`: `mode: hard`): what was written to set them is gone,
        and the defaults decide. Nothing for an object the API server rejects anyway (it
        requires a field, or a number of them)."""
        defaults = {name: child.default for name, child in node.fields.items()
                    if child.default is not None}
        if not defaults or node.required or node.min_properties or any(
                key in node.fields and item is not None for key, item in value.items()):
            return ""
        shown = ", ".join(f"`{name}: {_scalar(default)}`" for name, default in defaults.items())
        return f", and `{self.where(path)}`, left with no field, takes its defaults ({shown})"

    def belongs(self, key: str, path: list[str | int]) -> str | None:
        """Where a key unknown here is a field, the advice for it: a runtime's `spec` key
        written in a TrainJob's (`podGroupPolicy`), a pod's or a container's under a
        TrainJob's `spec.trainer` (`nodeSelector`, `volumeMounts`; the release's patch
        field named only where it takes the key) or directly in a runtime's JobSet spec
        (`hostIPC`)."""
        if self.kind == "TrainJob" and path == ["spec"]:
            runtime = tree("TrainingRuntime", self.release).fields.get("spec")
            if runtime is None or key not in runtime.fields:
                return None
            return ("it is a field of a runtime's `spec`: set it in the TrainingRuntime or "
                    "ClusterTrainingRuntime")
        if self.kind == "TrainJob" and path == ["spec", "trainer"]:
            spec = tree("TrainJob", self.release).fields["spec"]
            patches = next(name for name in _PATCHED_PODS if name in spec.fields)
            pod = _below(spec, _PATCHED_PODS[patches])
            patched = {"pod": pod, "container": _below(pod, ("containers", "[]"))}
            for definition, what in _POD_PARTS[1:]:
                if key in self.converter.definition(definition, embedded=True).fields:
                    taken = patched[what]
                    also = (f", or for this TrainJob in `spec.{patches}`"
                            if taken is not None and key in taken.fields else "")
                    return f"it is a field of a {what}: set it in the runtime's pod template{also}"
        if self.kind in RUNTIME_KINDS and path == ["spec", "template", "spec"]:
            for (definition, what), where in zip(_POD_PARTS, _IN_JOBS, strict=True):
                if key in self.converter.definition(definition, embedded=True).fields:
                    return (f"it is a field of a {what}: set it in each replicatedJob's "
                            f"{where}")
        return None

    def required(self, node: Node, path: list[str | int]) -> tuple[str, ...]:
        """The keys a mapping must have: its schema's, but for a Job's pod condition
        pattern, whose `status` Trainer's CRDs require up to v2.1 only (v2.2's were made
        from Kubernetes 1.35's types, where Kubernetes defaults it to `True`), whatever
        the cluster's Kubernetes says of a Job."""
        if [part for part in path[-5:] if isinstance(part, str)] != _ON_POD_CONDITIONS:
            return node.required
        return ("type", "status") if self.release < (2, 2) else ("type",)

    def missing(self, key: str, path: list[str | int]) -> None:
        where = self.where(path)
        field = f"{dotted(tuple(path))}.{key}".lstrip(".")
        self.add(Flaw.MISSING_REQUIRED, path,
                 f"`{where}` has no `{key}`: the API server rejects the "
                 f"{self.kind} (`{field}: Required value`); add `{key}`")

    def scalar(self, value: Any, node: Node, path: list[str | int]) -> None:
        if node.type == "quantity":
            if isinstance(value, str) and not _QUANTITY.fullmatch(value):
                self.bad_quantity(value, path)
            return
        if not node.bounded:
            return
        if node.enum is not None and value not in node.enum:
            allowed = ", ".join(f'"{item}"' for item in node.enum)
            guess = suggest(str(value), [str(item) for item in node.enum])
            advice = f"did you mean `{guess}`?" if guess is not None else "use one of them"
            self.add(Flaw.INVALID_VALUE, path,
                     f"`{self.where(path)}` is `{value}`: the API server rejects "
                     f'the {self.kind} (`Unsupported value: "{value}": supported values: '
                     f"{allowed}`); {advice}")
        if isinstance(value, str):
            self.limits(len(value), node.min_length, node.max_length, path, "characters")
        elif is_count(value):
            if node.minimum is not None and value < node.minimum:
                self.add(Flaw.INVALID_VALUE, path,
                         f"`{self.where(path)}` is {value}: the API server rejects "
                         f"the {self.kind} (`should be greater than or equal to {node.minimum}`)"
                         f"; use {node.minimum} or more")
            if node.maximum is not None and value > node.maximum:
                self.add(Flaw.INVALID_VALUE, path,
                         f"`{self.where(path)}` is {value}: the API server rejects "
                         f"the {self.kind} (`should be less than or equal to {node.maximum}`); "
                         f"use {node.maximum} or less")

    def bad_quantity(self, value: str, path: list[str | int]) -> None:
        # A core object's quantity fails to decode before any validation; a CRD's fails
        # its `pattern`: either way the request is rejected.
        guess = quantity_guess(value)
        advice = f"did you mean `{guess}`?" if guess is not None else (
            "write it as one, such as `64Gi` or `500m`")
        self.add(Flaw.INVALID_VALUE, path,
                 f"`{self.where(path)}` is `{value}`, not a Kubernetes quantity "
                 f"({QUANTITY_WORDS}): the API server rejects the {self.kind}; {advice}", guess)

    def limits(
        self, size: int, low: int | None, high: int | None, path: list[str | int], unit: str
    ) -> None:
        if (low is None or size >= low) and (high is None or size <= high):
            return  # most values: no message to word
        where = self.where(path)
        wording = "items" if unit == "items" else "chars long"
        if low is not None and size < low:
            self.add(Flaw.INVALID_VALUE, path,
                     f"`{where}` has {size} {unit}: the API server rejects the "
                     f"{self.kind} (`should have at least {low} {wording}`); give it at least "
                     f"{low}")
        if high is not None and size > high:
            limit = f"must have at most {high} items" if unit == "items" else (
                f"may not be more than {high} bytes")
            self.add(Flaw.INVALID_VALUE, path,
                     f"`{where}` has {size} {unit}: the API server rejects the "
                     f"{self.kind} (`Too many: {size}: {limit}`)" if unit == "items" else
                     f"`{where}` has {size} {unit}: the API server rejects the {self.kind} "
                     f"(`Too long: {limit}`)")


def quantity_guess(text: str) -> str | None:
    """The quantity a misspelt one most likely meant: `4GB` → `4G`, `4GiB` and `4 gi` →
    `4Gi`, `500mb` → `500M` (bytes are counted in whole units, never in thousandths)."""
    found = _NEAR_QUANTITY.fullmatch(text.strip())
    if found is None:
        return None
    number, suffix = found[1], found[2].lower().removesuffix("b")
    if suffix[1:] == "i" and suffix[0] in "kmgtpe":
        suffix = f"{suffix[0].upper()}i"
    elif suffix in ("m", "g", "t", "p", "e"):
        suffix = suffix.upper()
    guess = number + suffix
    return guess if guess != text and _QUANTITY.fullmatch(guess) else None


def _parses(text: str, kind: str) -> bool:
    if kind == "boolean":
        return text.lower() in ("true", "false")
    try:
        float(text) if kind == "number" else int(text)
    except ValueError:
        return False
    return True


def suggest(word: str, candidates: list[str]) -> str | None:
    """The candidate closest to `word` by edit distance, when close enough to be a typo."""
    found = close_matches(word, candidates)
    return found[0] if found else None


def close_matches(word: str, candidates: list[str]) -> list[str]:
    """The candidates closest to `word` (all of them when tied), when close enough to be a
    typo; a candidate equal but for case comes alone."""
    lowered = word.lower()
    limit = max(1, len(word) // 4) + 1
    best, found = limit, []
    for candidate in candidates:
        if candidate.lower() == lowered:
            return [candidate]
        distance = _distance(lowered, candidate.lower(), best + 1)
        if distance < best:
            best, found = distance, [candidate]
        elif distance == best < limit:
            found.append(candidate)
    return found


def _distance(left: str, right: str, bound: int) -> int:
    """Levenshtein distance, or `bound` once it is certain to reach it."""
    if abs(len(left) - len(right)) >= bound:
        return bound
    previous = list(range(len(right) + 1))
    for row, char in enumerate(left, start=1):
        current = [row]
        for column, other in enumerate(right, start=1):
            current.append(min(previous[column] + 1, current[column - 1] + 1,
                               previous[column - 1] + (char != other)))
        if min(current) >= bound:
            return bound
        previous = current
    return previous[-1]


def _scalar(value: Any) -> str:
    """A default as YAML writes it (`hard`, `1`, `false`)."""
    return value if isinstance(value, str) else json.dumps(value)
