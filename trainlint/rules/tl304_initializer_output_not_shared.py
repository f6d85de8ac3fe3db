from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from trainlint.document import Manifest, dig, mapping, mappings
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import INITIALIZERS, Container, Job
from trainlint.render.trainer import named, rendered, trainer_of
from trainlint.rule import rule


def _lasting(pod_spec: dict[str, Any], templates: set[str], mount_names: set[str]) -> set[str]:
    """What outlives the initializer pod among the mounted volumes: `pvc:<claim>` or
    `template:<name>`."""
    return {claim for name in mount_names if (claim := _claim(pod_spec, templates, name))}


def _claim(pod_spec: dict[str, Any], templates: set[str], name: str) -> str | None:
    """What a volume of a pod is, when it outlives the pod: `pvc:<claim>` or
    `template:<name>`."""
    volume = named(pod_spec.get("volumes"), name)
    claim = dig(volume[1], "persistentVolumeClaim", "claimName") if volume else None
    if isinstance(claim, str):
        return f"pvc:{claim}"
    return f"template:{name}" if volume is None and name in templates else None


def _mounted(container: dict[str, Any]) -> set[str]:
    return {str(mount.get("name")) for _, mount in mappings(container.get("volumeMounts"))}


#: Where Trainer's initializer images download, whatever the URI (`pkg/initializers/utils`,
#: the same in v2.0-v2.3): a constant, with no variable to move it.
_DOWNLOADS = {"dataset-initializer": "/workspace/dataset", "model-initializer": "/workspace/model"}
_TRAINER_IMAGE = re.compile(r"(?:.*/)?(dataset-initializer|model-initializer)(?:[:@].*)?")


class _Mount(NamedTuple):
    number: int
    path: str
    name: str
    #: The folder of the volume it shows, `""` for its root; with `subPathExpr`, the
    #: part before its first variable, the folder shown being somewhere inside.
    folder: str
    exact: bool


def _mounts(container: dict[str, Any]) -> list[_Mount]:
    found = []
    for number, mount in mappings(container.get("volumeMounts")):
        path, name = mount.get("mountPath"), mount.get("name")
        if not isinstance(path, str) or not path.startswith("/") or not isinstance(name, str):
            continue
        expression, sub = mount.get("subPathExpr"), mount.get("subPath")
        if isinstance(expression, str) and expression:
            folder = _folder(posixpath.dirname(expression.partition("$(")[0] + "x"))
            found.append(_Mount(number, posixpath.normpath(path), name, folder, False))
        else:
            folder = _folder(sub if isinstance(sub, str) else "")
            found.append(_Mount(number, posixpath.normpath(path), name, folder, True))
    return found


def _folder(path: str) -> str:
    normal = posixpath.normpath(path.strip("/")) if path.strip("/") else ""
    return "" if normal == "." else normal


def _covering(mounts: list[_Mount], path: str) -> _Mount | None:
    """The mount a path of the container is on: the deepest whose path holds it."""
    holding = [mount for mount in mounts
               if path == mount.path or path.startswith(mount.path.rstrip("/") + "/")]
    return max(holding, key=lambda mount: len(mount.path), default=None)


def _read_at(
    trainer: Job, download: str, templates: set[str], claim: str
) -> tuple[str, str] | None:
    """The container of the trainer job whose command or env names the download's path,
    with the folder of the claim it finds there (the evidence of where it reads)."""
    named_path = re.compile(rf"(?<![\w./-]){re.escape(download)}(?![\w.-])")
    for container in trainer.containers():
        texts = [text for key in ("command", "args") for text, _ in container.strings(key)]
        texts += [str(item.get("value")) for _, item in container.env.values()]
        if not any(named_path.search(text) for text in texts):
            continue
        mount = _covering(_mounts(container.body), download)
        if mount is not None and mount.exact and _claim(
                trainer.pod_spec, templates, mount.name) == claim:
            return container.name, _folder(
                posixpath.join(mount.folder, posixpath.relpath(download, mount.path)))
    return None


def _within(folder: str, outer: str) -> bool:
    return not outer or folder == outer or folder.startswith(outer + "/")


def _serves_a_cache(container: dict[str, Any]) -> bool:
    """The data-cache initializer starts a cache service the trainer streams from."""
    env = mappings(container.get("env"))
    return any(variable.get("name") == "CACHE_IMAGE" for _, variable in env)


@rule(
    "TL304", "initializer-output-not-shared",
    kinds=RUNTIME_KINDS, severity=Severity.WARNING,
    remediation=(
        "Mount one PVC (or volumeClaimPolicies template) in the initializer and the trainer."
    ),
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a dataset or model initializer whose container writes to no persistent volume
    (PVC or `volumeClaimPolicies` template) that the trainer job also mounts: an
    `emptyDir`, or no volume at all. The data-cache initializer (recognised by its
    `CACHE_IMAGE` variable) serves the dataset over the network and is left alone.

    Trainer's own initializer images always download into `/workspace/dataset` and
    `/workspace/model`: for those, it also flags a download onto no volume of the pod,
    one into a folder of the shared volume that the trainer job does not mount (the
    initializer writes at the volume's root, the trainer mounts its `dataset` folder), and
    one the trainer looks for elsewhere: its command or env names the download's path
    (`/workspace/model`), which in its pod is another folder of the volume (the
    initializer mounts the volume's root at `/workspace/model`, the trainer at
    `/workspace`).

    ## Why is this bad?
    The initializer runs in its own pod. What it downloads onto a pod-local volume is
    gone when it completes, so the trainer starts without the dataset or the model and
    fails, or trains on whatever the image contains.

    ## When it stays silent
    On the data-cache initializer (it serves the dataset over the network), when an
    initializer writes to a PVC the trainer job mounts (in an init container too, which
    may copy the download to local disk), and on runtimes without a
    trainer job. On where an image other than Trainer's writes (its own code decides),
    and when a `subPathExpr` in either pod may name the download's folder.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainingRuntime
    metadata:
      name: torch-with-init
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs:
            - name: dataset-initializer
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer
                spec:
                  template:
                    spec:
                      containers:
                        - name: dataset-initializer
                          image: ghcr.io/kubeflow/trainer/dataset-initializer
            - name: node
              dependsOn:
                - name: dataset-initializer
                  status: Complete
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainingRuntime
    metadata:
      name: torch-with-init
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          volumeClaimPolicies:
            - templates:
                - metadata:
                    name: initializer
                  spec:
                    accessModes: [ReadWriteOnce]
                    resources:
                      requests:
                        storage: 20Gi
          replicatedJobs:
            - name: dataset-initializer
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer
                spec:
                  template:
                    spec:
                      containers:
                        - name: dataset-initializer
                          image: ghcr.io/kubeflow/trainer/dataset-initializer
                          volumeMounts:
                            - name: initializer
                              mountPath: /workspace
            - name: node
              dependsOn:
                - name: dataset-initializer
                  status: Complete
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                          volumeMounts:
                            - name: initializer
                              mountPath: /workspace
    ```
    """
    render = rendered(runtime, ctx)
    trainer = trainer_of(render)
    if trainer is None:
        return
    spec = render.jobset.get("spec")
    templates = {
        name for _, policy in mappings(mapping(spec).get("volumeClaimPolicies"))
        for _, template in mappings(policy.get("templates"))
        for name in [dig(template, "metadata", "name")] if isinstance(name, str)
    }
    # Init containers too: one may copy the download to where the trainer reads it.
    shared = _lasting(trainer.pod_spec, templates, trainer.mounted())
    for job in render.jobs:
        kind = job.ancestor if job.ancestor in INITIALIZERS else job.name
        if kind not in INITIALIZERS or job is trainer:
            continue
        container = job.container(str(kind))
        if container is None or _serves_a_cache(container.body):
            continue
        if _lasting(job.pod_spec, templates, _mounted(container.body)) & shared:
            yield from _download_unseen(container, trainer, templates)
            continue
        yield Problem(
            container.origin().path,
            f"the `{kind}` container writes to no persistent volume that trainer job "
            f"`{trainer.name}` also mounts: what it downloads is lost with its pod, so "
            "the trainer never sees it",
        )


def _download_unseen(container: Container, trainer: Job, templates: set[str]) -> Iterator[Problem]:
    """Where an initializer of Trainer's image downloads, when the trainer job does not
    mount that folder of the volume: on no volume at all, or beside what it mounts."""
    image = container.body.get("image")
    match = _TRAINER_IMAGE.fullmatch(image) if isinstance(image, str) else None
    if match is None:
        return  # another image: where it writes is its own
    download = _DOWNLOADS[match.group(1)]
    writes = f"the `{container.name}` container downloads into `{download}` (where " \
        f"Trainer's `{match.group(1)}` image writes)"
    mount = _covering(_mounts(container.body), download)
    if mount is None:
        yield Problem(container.origin().path, f"{writes}, which is on no volume of its pod: "
                      "what it downloads is lost with its pod, so the trainer never sees it")
        return
    claim = _claim(container.job.pod_spec, templates, mount.name)
    if not mount.exact or claim is None:
        return
    folder = _folder(posixpath.join(mount.folder, posixpath.relpath(download, mount.path)))
    seen = [other for theirs in trainer.every_container() for other in _mounts(theirs.body)
            if _claim(trainer.pod_spec, templates, other.name) == claim]
    read = _read_at(trainer, download, templates, claim)
    if read is not None and read[1] != folder:
        name, found = read
        inside = (f"inside {f'folder `{folder}`' if folder else 'the root'} where the "
                  f"download is: it finds the download only if what is downloaded has a "
                  "folder of that name" if _within(found, folder) else
                  "where nothing is downloaded: it never finds the download")
        yield Problem(container.origin("volumeMounts", mount.number).path, (
            f"{writes}, {f'folder `{folder}`' if folder else 'the root'} of volume "
            f"`{mount.name}`; container `{name}` of trainer job `{trainer.name}` reads "
            f"`{download}`, which is folder `{found}` of it, {inside}"))
        return
    if not seen or any(_within(folder, other.folder) for other in seen):
        return  # no such volume there (the check above says so), or it may be seen
    place = f"folder `{folder}`" if folder else "the root"
    shown = ", ".join(sorted({
        f"`{other.folder or '/'}{'' if other.exact else '/...'}` at `{other.path}`"
        for other in seen
    }))
    head = f"{writes}, {place} of volume `{mount.name}`; trainer job `{trainer.name}` mounts"
    if all(_within(other.folder, folder) for other in seen):
        message = (f"{head} only folders inside it ({shown}): it finds the download only if "
                   "what is downloaded has folders of those names")
    else:
        message = f"{head} only {shown} of that volume: it never finds the download"
    yield Problem(container.origin("volumeMounts", mount.number).path, message)
