"""`trainlint audit`: what is already in the cluster, checked with the cluster as context.

Each TrainJob, TrainingRuntime and ClusterTrainingRuntime listed becomes a document of its
own, as `kubectl get -o yaml` would show it (no `status`, no `managedFields`), named
`cluster/NAMESPACE/KIND/NAME.yaml` (`cluster/KIND/NAME.yaml` when cluster-scoped), so every
output format can point at the key at fault. The claims, storage classes and priority
classes listed are context: looked up, never reported on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from trainlint.document import Loaded, Manifest, mapping
from trainlint.finding import ObjectRef
from trainlint.kinds import CLUSTER_SCOPED, TRAINER_KINDS, object_kind
from trainlint.loader import load


@dataclass(frozen=True)
class Audit:
    """A listing split into what is checked and what is context."""

    inputs: list[Loaded]
    context: list[Manifest]
    #: Every object checked, for the reports' `pass` results.
    checked: list[ObjectRef]


def split(listed: Iterable[Manifest]) -> Audit:
    """The Trainer objects as documents to check, in a stable order; the rest as context."""
    import yaml

    inputs, context = [], []
    for manifest in sorted(listed, key=lambda item: (item.kind, item.namespace, item.name)):
        if object_kind(manifest) not in TRAINER_KINDS:
            context.append(manifest)
            continue
        body = {key: value for key, value in manifest.body.items() if key != "status"}
        metadata = {key: value for key, value in mapping(body.get("metadata")).items()
                    if key != "managedFields"}
        text = yaml.safe_dump({**body, "metadata": metadata}, sort_keys=False, width=1 << 16)
        inputs.append(load(text, document_name(manifest)))
    checked = [ObjectRef.of(manifest) for item in inputs for manifest in item.manifests]
    return Audit(inputs, context, checked)


def document_name(manifest: Manifest) -> str:
    kind = manifest.kind.lower()
    if manifest.kind in CLUSTER_SCOPED:
        return f"cluster/{kind}/{manifest.name}.yaml"
    return f"cluster/{manifest.namespace}/{kind}/{manifest.name}.yaml"
