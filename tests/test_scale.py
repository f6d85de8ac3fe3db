"""A run's work grows with its objects, not with their pairs: thousands of TrainJobs on one
shared runtime are a monorepo's everyday shape."""

from __future__ import annotations

import weakref
from collections import Counter
from typing import Any

import pytest

from tests.conftest import lint_text
from tests.test_cache import CHECKPOINTED, TRAINJOB, checkpointing
from trainlint.config.settings import Settings
from trainlint.engine.index import RECENT
from trainlint.engine.run import lint
from trainlint.loader import load
from trainlint.render import Render
from trainlint.render.build import render


@pytest.mark.parametrize("jobs", [10, 40])
def test_a_shared_runtime_is_worked_out_once_per_run(
    jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each TrainJob's JobSet is rendered once, shared by all its own rules and by TL307's
    map of where the TrainJobs of the namespace checkpoint, however many TrainJobs share
    its runtime. Comparing each with every other would render 40 × 39 / 2 JobSets."""
    built: list[str] = []
    build = render

    def counted(job: Any, *args: Any) -> Render:
        if job is not None:
            built.append(job.name)
        return build(job, *args)

    monkeypatch.setattr("trainlint.render.trainer.render", counted)
    # Every fourth run reuses the directory of the one before it.
    text = CHECKPOINTED + "".join(
        f"---\n{checkpointing(f'run-{n}', f'/mnt/ckpt/{n - n % 4 // 3}')}" for n in range(jobs)
    )
    findings = [f for f in lint_text(text, Settings(select=("TL3",))) if f.code == "TL307"]
    assert [f.object.name for f in findings if f.object] == [
        f"run-{n}" for n in range(jobs) if n % 4 == 3
    ]
    assert sorted(built) == sorted(f"run-{n}" for n in range(jobs))


#: A runtime whose trainer checkpoints to a fixed directory on its PVC: TL308 asks where
#: every TrainJob that uses it checkpoints.
FIXED = CHECKPOINTED.replace(
    "[{name: node, image: busybox, ",
    "[{name: node, image: busybox, env: [{name: CKPT_DIR, value: /mnt/ckpt/shared}], ",
)


@pytest.mark.parametrize("labelled", [True, False])
@pytest.mark.parametrize("jobs", [1, RECENT * 2])
def test_each_trainjob_is_rendered_once_on_its_runtime(
    jobs: int, labelled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One file per object, the runtime's first: TL308 judges the runtime by where each of
    its TrainJobs checkpoints (the last keeps the runtime's directory), TL307 each
    TrainJob by where the ones before it do, TL201 a runtime with no trainer label by
    what the controller drops of its TrainJobs' settings, all from the TrainJobs' notes,
    and every TrainJob's own rules read its render. Each TrainJob is rendered once on its
    runtime, and no render outlives its object: none is alive when the next is made."""
    built: Counter[str] = Counter()
    alive: list[weakref.ref[Render]] = []
    most = 0
    build = render

    def counted(job: Any, *args: Any) -> Render:
        nonlocal most
        made = build(job, *args)
        built[job.name if job is not None else "(runtime)"] += 1
        if job is not None:
            alive[:] = [ref for ref in alive if ref() is not None]
            alive.append(weakref.ref(made))
            most = max(most, len(alive))
        return made

    monkeypatch.setattr("trainlint.render.trainer.render", counted)
    runtime = FIXED if labelled else FIXED.replace(
        "trainer.kubeflow.org/trainjob-ancestor-step: trainer", "app: train")
    texts = [runtime] + [checkpointing(f"run-{n}", f"/mnt/ckpt/{n}") for n in range(jobs - 1)]
    texts.append(TRAINJOB)  # `sft`, on the runtime's directory
    findings = lint([load(text, f"{number:04d}.yaml") for number, text in enumerate(texts)],
                    Settings(select=("TL201", "TL3")))
    if labelled:
        assert [(f.file, f.code) for f in findings] == [
            ("0000.yaml", "TL308")
        ]
    else:  # the TrainJobs' directories are dropped: they all share the runtime's
        assert sorted((f.file, f.code) for f in findings if f.code in ("TL201", "TL307")) == [
            ("0000.yaml", "TL201"),
            *((f"{number:04d}.yaml", code) for number in range(1, jobs + 1)
              for code in ("TL201", "TL307")[:1 + (number > 1)]),
        ]
    assert built == Counter({"(runtime)": 1, "sft": 1, **{f"run-{n}": 1 for n in range(jobs - 1)}})
    assert most == 1  # no render outlives its object
