"""The schema tree of every top-level model in every release: what `python -m
trainlint.model` compiles into `trainlint.model.node.COMPILED`."""

from __future__ import annotations

from trainlint.model.common import EmbeddedMeta
from trainlint.model.node import Node
from trainlint.model.runtime import TrainingRuntime
from trainlint.model.schema import tree
from trainlint.model.trainjob import TrainJob
from trainlint.release import RELEASES, TrainerVersion


def compile_trees() -> dict[tuple[str, TrainerVersion], Node]:
    """The tree of every top-level model in every release, as `COMPILED` holds them."""
    return {
        (model.__name__, release): tree(model, release)
        for model in (TrainJob, TrainingRuntime, EmbeddedMeta)
        for release in RELEASES
    }
