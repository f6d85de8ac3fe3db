"""Whether a trainer looks for its master at the host the controller injects.

The torch, JAX and XGBoost plugins give every node the same rendezvous host,
`<trainjob>-node-0-0.<trainjob>`, which exists only when the trainer job is named `node`
and the JobSet's network publishes pod hostnames. Whether a wrong host matters depends on
what the trainer runs: torchrun reads it (`PET_MASTER_ADDR`) even on one node, and nodes
of a multi-node job have no other master to find; a single process that starts no
launcher (`llamafactory-cli train` on one GPU, `python train.py`) never asks.
"""

from __future__ import annotations

from typing import NamedTuple

from trainlint.document import Manifest
from trainlint.lookups import Lookups
from trainlint.render import Render, script
from trainlint.render.trainer import RENDEZVOUS_FRAMEWORKS, framework, rendered, trainer_of
from trainlint.render.tree import Origin


class Seeker(NamedTuple):
    """What shows the trainer looking for the injected host, for messages (`torchrun
    reads it from PET_MASTER_ADDR`), and the key that makes it so."""

    why: str
    at: Origin


def seeker(render: Render, plugin: str) -> Seeker | None:
    """What shows the trainer of `render` (a `plugin` runtime's) looking for its master at
    the injected host; None when nothing does, or torchrun is given its own master."""
    job = trainer_of(render)
    if job is None:
        return None
    container = job.container("node")
    found = script.read(container) if container is not None else None
    if plugin == "torch" and found is not None:
        if script.own_rendezvous(found):
            return None  # `--master_addr`, `--rdzv_endpoint`: the injected host is unused
        launcher = script.torchrun(found)
        if launcher is not None:
            return Seeker(f"`{launcher[0]}` reads it from `PET_MASTER_ADDR`", launcher[1])
    if job.pods > 1:
        return Seeker(f"its {job.pods} nodes have no other master to find", job.pods_at)
    return None


def runtime_of(manifest: Manifest, ctx: Lookups) -> tuple[Manifest, str] | None:
    """The runtime whose rendezvous a trainer object's findings are about (the object
    itself, or a TrainJob's runtime), with its plugin; None when it has no injected host."""
    runtime = ctx.runtime_for(manifest) if manifest.kind == "TrainJob" else manifest
    plugin = framework(runtime) if runtime is not None else None
    if runtime is None or plugin not in RENDEZVOUS_FRAMEWORKS:
        return None
    return runtime, plugin


def seeker_in(manifest: Manifest, runtime: Manifest, plugin: str, ctx: Lookups) -> Seeker | None:
    """What a finding on `manifest` about its runtime's rendezvous host rests on: the
    runtime's own command or count, on the runtime; on a TrainJob, its own, when the
    runtime alone has none (else the runtime's finding says it for all its TrainJobs)."""
    found = seeker(rendered(manifest, ctx), plugin)
    if found is None or found.at.manifest is not manifest:
        return None
    if manifest is not runtime and seeker(rendered(runtime, ctx), plugin) is not None:
        return None
    return found
