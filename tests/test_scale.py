"""A run's work grows with its objects, not with their pairs: thousands of TrainJobs on one
shared runtime are a monorepo's everyday shape."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import lint_text
from tests.test_cache import CHECKPOINTED, checkpointing
from trainlint.config.settings import Settings
from trainlint.render import Render
from trainlint.render.build import render


@pytest.mark.parametrize("jobs", [10, 40])
def test_a_shared_runtime_is_worked_out_once_per_run(
    jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each TrainJob's JobSet is rendered three times at most (once for all its own rules,
    the runtime's look at its TrainJobs, the run-wide map of checkpoint directories),
    however many TrainJobs share its runtime. Comparing each with every other would render
    40 × 39 / 2 JobSets."""
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
    assert len(built) <= 3 * jobs
    assert set(built) == {f"run-{n}" for n in range(jobs)}
