from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from trainlint import roundtrip
from trainlint.document import Manifest, dig, holds_placeholder, mapping
from trainlint.engine.context import Context
from trainlint.model.check import SCHEMA_KINDS, Flaw, issues
from trainlint.options import OptionError, RuleOptions
from trainlint.patches import PATCH_JOBS, domain_prefixed_path_errors
from trainlint.problem import Edit, Fix, Problem, Severity
from trainlint.rule import rule

SPEC_OVERRIDES, TEMPLATE_OVERRIDES, PATCHES = (
    "podSpecOverrides", "podTemplateOverrides", "runtimePatches",
)
#: Where a runtime patch lists the jobs it patches.
#: From a patched job's `template` (a Job template) to its pod template.
POD_TEMPLATE = ("spec", "template")
#: The pod metadata that v2.1 overrides apply (the other keys were ignored).
POD_METADATA = frozenset({"labels", "annotations"})


@dataclass(frozen=True)
class MigrationOptions(RuleOptions):
    #: The `manager` of the runtime patch that the fix writes from overrides.
    manager: str = "trainlint.dev/migrated"

    def __post_init__(self) -> None:
        # The fix must not write a patch that the Trainer webhook denies (TL209).
        errors = domain_prefixed_path_errors(self.manager)
        if errors:
            raise OptionError(
                "manager", f"the Trainer webhook denies {self.manager!r} as a runtime patch "
                f"manager ({errors[0]})",
            )


@rule(
    "TL007", "field-from-other-release", kinds=set(SCHEMA_KINDS), severity=Severity.ERROR,
    remediation="Use the field of the release the cluster runs, or set `trainer-version` to it.",
    options=MigrationOptions,
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags fields that exist in another Trainer release but not in the selected one
    (`--trainer-version`), says which releases have them and what replaced them:
    `podSpecOverrides` (v2.0) became `podTemplateOverrides` (v2.1), then `runtimePatches`
    (v2.2); `spec.labels`, `mlPolicy.torch.numProcPerNode` and `elasticPolicy` went away in
    v2.2; `jax`, `xgboost`, `flux`, `volumeClaimPolicies` and `activeDeadlineSeconds`
    arrived in v2.2, `envInjection` in v2.3.

    `--fix` renames `podSpecOverrides` to `podTemplateOverrides` for v2.1, moving each
    entry's pod fields under `spec`. With `--unsafe-fixes`, for v2.2 and later, it rewrites
    `podSpecOverrides` or `podTemplateOverrides` as one `runtimePatches` entry that patches
    the pod template of each target job; not when two entries target the same job (the
    later one won) or when `runtimePatches` is already set.

    ## Why is this bad?
    The Trainer API changed in every minor release, and the API server prunes fields its
    CRD does not know without an error: the overrides, deadline or policy of a manifest
    written for another release are silently dropped (a recent `kubectl`, validating
    strictly, has the object refused instead: the manifest cannot be applied at all).

    ## When it stays silent
    On fields that exist in the selected release, and on fields no release has (TL006).

    ## Options
    `manager`: the `manager` of the runtime patch that the fix writes, a domain-prefixed
    path (see TL209); default `trainlint.dev/migrated`.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      podTemplateOverrides:
        - targetJobs:
            - name: node
          spec:
            nodeSelector:
              gpu: a100
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      runtimePatches:
        - manager: example.com/sft
          trainingRuntimeSpec:
            template:
              spec:
                replicatedJobs:
                  - name: node
                    template:
                      spec:
                        template:
                          spec:
                            nodeSelector:
                              gpu: a100
    ```
    """
    for issue in issues(manifest, ctx):
        if issue.flaw is not Flaw.OTHER_RELEASE:
            continue
        repair = _repair(manifest, issue.path, ctx) if manifest.kind == "TrainJob" else None
        if isinstance(repair, str):
            yield Problem(issue.path, issue.message, remediation=repair)
        else:
            yield Problem(issue.path, issue.message, fix=repair)


def _repair(job: Manifest, path: tuple[str | int, ...], ctx: Context) -> Fix | str | None:
    """The fix of overrides written for an older release, or why there is none (shown as
    the finding's help). Going back to an older release has no fix: its overrides lack
    fields the newer ones have."""
    if path not in (("spec", SPEC_OVERRIDES), ("spec", TEMPLATE_OVERRIDES)):
        return None
    old = str(path[1])
    if ctx.trainer_version == (2, 1) and old == SPEC_OVERRIDES:
        new = TEMPLATE_OVERRIDES
    elif ctx.trainer_version >= (2, 2):
        new = PATCHES
    else:
        return None
    why = _refusal(mapping(job.body.get("spec")), old, new)
    if why:
        return f"not fixed automatically: {why}; move the overrides to `{new}` by hand"
    if new == TEMPLATE_OVERRIDES:
        return Fix(
            f"rename `{old}` to `{new}`, with each entry's pod fields under `spec`", _to_templates
        )
    options: MigrationOptions = ctx.options
    return Fix(
        f"rewrite `{old}` as the `{new}` entry of manager `{options.manager}` (unsafe: the "
        "manager comes from option `manager`, and a patch's containers, volumes and service "
        "account are immutable)",
        _to_patches(old, options.manager),
        safe=False,
    )


def _refusal(spec: dict[str, Any], old: str, new: str) -> str | None:
    """Why the overrides cannot be converted mechanically, if they cannot."""
    if new in spec:
        return f"`{new}` is already set"
    entries = spec[old]
    if holds_placeholder(entries):
        return "they hold a page's placeholders (`<job-name>`), to fill in first"
    allowed = {"targetJobs", *(_pod_fields() if old == SPEC_OVERRIDES else ("metadata", "spec"))}
    unfit = _unfit(entries, old, allowed)
    if unfit or new != PATCHES:
        return unfit
    return _shared_target(entries)


def _to_templates(job: Any) -> None:
    spec = roundtrip.at(job, ("spec",))
    indent, _ = _layout(job, SPEC_OVERRIDES)
    roundtrip.rename(spec, SPEC_OVERRIDES, TEMPLATE_OVERRIDES)
    for entry in spec[TEMPLATE_OVERRIDES]:
        pod = roundtrip.gather(entry, [key for key in entry if key != "targetJobs"], indent)
        if pod:
            roundtrip.place(entry, "spec", pod, None)


def _to_patches(old: str, manager: str) -> Edit:
    def edit(job: Any) -> None:
        spec = roundtrip.at(job, ("spec",))
        if PATCHES in spec:
            raise roundtrip.Stale((PATCHES,))  # another override field was rewritten first
        index = list(spec).index(old)
        indent, item = _layout(job, old)
        # Entry keys sit at column c; a patched job's keys at c + 3 indents + an item step,
        # and its pod template's keys 3 indents further (the pod spec's keys one more).
        deeper = 6 * indent + item
        entries, comment = roundtrip.take(spec, old)
        jobs = roundtrip.new_seq()
        for entry in entries:
            if old == TEMPLATE_OVERRIDES:
                keys = [key for key in ("metadata", "spec") if key in entry]
                template = roundtrip.gather(entry, keys, deeper)
            else:
                keys = [key for key in entry if key != "targetJobs"]
                pod = roundtrip.gather(entry, keys, deeper + indent)
                template = roundtrip.new_map([("spec", pod)] if pod else [])
            for number, target in enumerate(entry["targetJobs"]):
                patched = roundtrip.new_map([("name", target["name"])])
                if template:
                    own = template if number == 0 else copy.deepcopy(template)
                    patched["template"] = roundtrip.nested(POD_TEMPLATE, own)
                jobs.append(patched)
        patch = roundtrip.new_map([("manager", manager)])
        patch.update(roundtrip.nested(PATCH_JOBS, jobs))
        roundtrip.place(
            spec, PATCHES, roundtrip.new_seq([patch]), comment, index=index,
            shift=len(PATCHES) - len(old),
        )

    return edit


def _layout(job: Any, key: str) -> tuple[int, int]:
    """(mapping indent, columns from a list's key to its items' keys) as the file lays out
    `spec.<key>`, from the positions ruamel.yaml recorded; moved comments follow them."""
    spec = job["spec"]
    indent = spec.lc.col - job.lc.key("spec")[1]
    entries = spec[key]
    item = entries[0].lc.col - spec.lc.key(key)[1] if entries else 0
    return max(indent, 0), max(item, 0)


def _pod_fields() -> set[str]:
    """The pod fields of a v2.0 override entry (v2.1 moved them under `spec`)."""
    from pydantic.alias_generators import to_camel

    from trainlint.model.trainjob import PodSpecOverride

    return {to_camel(name) for name in PodSpecOverride.model_fields} - {"targetJobs"}


def _unfit(entries: object, old: str, allowed: set[str]) -> str | None:
    """Why the entries do not have the shape the conversion knows, if they do not."""
    if not isinstance(entries, list):
        return f"`{old}` is not a list"
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            return f"entry {index} is not a mapping"
        stray = next((key for key in entry if key not in allowed), None)
        if stray is not None:
            return f"entry {index} has `{stray}`, which `{old}` does not have"
        metadata = mapping(entry.get("metadata"))
        stray = next((key for key in metadata if key not in POD_METADATA), None)
        if stray is not None:
            return f"entry {index} has `metadata.{stray}`, which `{old}` ignores"
        targets = entry.get("targetJobs")
        names = [dig(target, "name") for target in targets] if isinstance(targets, list) else []
        if not names or not all(isinstance(name, str) for name in names):
            return f"entry {index} does not name its target jobs"
    return None


def _shared_target(entries: list[dict[str, Any]]) -> str | None:
    """A job two entries target: overrides apply in order and the later one wins, but a
    patch holds one entry per job."""
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        for target in entry["targetJobs"]:
            name = target["name"]
            if name in seen:
                return (f"entries {seen[name]} and {index} both target job `{name}` (overrides "
                        "apply in order, the later one winning; a patch holds one entry per job)")
            seen[name] = index
    return None
