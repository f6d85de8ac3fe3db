"""The rules' cross-object passes: findings made of the notes of every object's facts, on
one process or several, fresh or from the cache, settled like any other finding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import lint_text
from tests.test_cache import CHECKPOINTED, checkpointing
from tests.test_rule_cases import _cases, case_settings
from trainlint.config.settings import Settings
from trainlint.document import Source
from trainlint.engine.run import Run, lint
from trainlint.loader import load
from trainlint.run import parallel
from trainlint.run.cache import Cache
from trainlint.run.check import Outcome, check

#: A runtime whose trainer checkpoints to one fixed directory on its claim (TL308).
FIXED = CHECKPOINTED.replace(
    "[{name: node, image: busybox, ",
    "[{name: node, image: busybox, env: [{name: CKPT_DIR, value: /mnt/ckpt/shared}], ",
)
TL3 = Settings(select=("TL3",))


def found(text: str, settings: Settings = TL3) -> list[tuple[int, str]]:
    return [(finding.span.line, finding.code) for finding in lint_text(text, settings)]


def fixed_line(text: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), start=1)
                if "/mnt/ckpt/shared" in line)


def test_a_runtime_is_judged_by_the_notes_of_its_trainjobs() -> None:
    """TL308 reports the runtime's fixed directory unless every TrainJob of the run that
    uses it sets its own: judged across objects, from each TrainJob's note."""
    own = f"{FIXED}---\n{checkpointing('a', '/mnt/ckpt/a')}"
    assert ("TL308" not in {code for _, code in found(own)})
    shared = f"{own}---\n{checkpointing('b', '/mnt/ckpt/shared')}"
    assert [line for line, code in found(shared) if code == "TL308"] == [fixed_line(FIXED)]
    alone = found(FIXED)
    assert [line for line, code in alone if code == "TL308"] == [fixed_line(FIXED)]


@pytest.mark.parametrize("how", ["comment", "annotation"])
def test_a_finding_across_objects_is_suppressed_like_any_other(how: str) -> None:
    """A comment on the runtime's line, or its annotation, silences TL308 made across
    objects, and is then used: TL090 says nothing of it. Where the TrainJobs set their
    own directories, the same suppression silences nothing, and TL090 says so."""
    if how == "comment":
        runtime = FIXED.replace(
            "containers: [", "# trainlint: disable=TL308\n                  containers: [")
    else:
        runtime = FIXED.replace(
            "metadata: {name: torch-ckpt, namespace: ml}",
            "metadata:\n  name: torch-ckpt\n  namespace: ml\n"
            "  annotations: {trainlint.dev/ignore: TL308}")
    settings = Settings(select=("TL3", "TL090"))
    silenced = found(f"{runtime}---\n{checkpointing('b', '/mnt/ckpt/shared')}", settings)
    assert [code for _, code in silenced] == []
    unused = found(f"{runtime}---\n{checkpointing('a', '/mnt/ckpt/a')}", settings)
    assert [code for _, code in unused] == ["TL090"]


def test_a_context_trainjob_tells_its_facts_to_the_runtime_checked() -> None:
    """A TrainJob known only as context (the cluster's, `--context`) counts among a
    runtime's TrainJobs: where it sets its own directory, the runtime is not told it
    shares one; it takes no finding itself."""
    runtime = load(FIXED, "runtime.yaml")
    own = load(checkpointing("a", "/mnt/ckpt/a"), "context.yaml").manifests
    shared = load(checkpointing("b", "/mnt/ckpt/shared"), "context.yaml").manifests
    assert [f.code for f in lint([runtime], TL3, context=own)] == []
    assert [(f.file, f.code) for f in lint([runtime], TL3, context=shared)] == [
        ("runtime.yaml", "TL308")
    ]


def _files(folder: Path, texts: dict[str, str]) -> None:
    folder.mkdir(exist_ok=True)
    for path in folder.glob("*.yaml"):
        path.unlink()
    for name, text in texts.items():
        (folder / name).write_text(text)


def _cached(folder: Path, cache: Path, jobs: int = 1, settings: Settings = TL3) -> Outcome:
    names = sorted(str(path) for path in folder.glob("*.yaml"))
    return check(names, lambda _: settings, jobs, Cache(cache))


def _codes(outcome: Outcome) -> list[tuple[str, int, str]]:
    return [(Path(f.file).name, f.span.line, f.code) for f in outcome.findings]


def test_notes_kept_in_the_cache_follow_the_files_as_they_move(tmp_path: Path) -> None:
    """A cached file's notes are placed where the file is in the run that reads them: a
    file added before them moves every file, and TL307 is still told on the later
    TrainJob, as a cold run tells it."""
    folder = tmp_path / "repo"
    texts = {
        "runtime.yaml": CHECKPOINTED,
        "b.yaml": checkpointing("b", "/mnt/ckpt/same"),
        "c.yaml": checkpointing("c", "/mnt/ckpt/same"),
    }
    _files(folder, texts)
    cold = _cached(folder, tmp_path / "cache")
    assert [(name, code) for name, _, code in _codes(cold)] == [("c.yaml", "TL307")]
    _files(folder, {"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
                    **texts})
    warm = _cached(folder, tmp_path / "cache")
    assert warm.checked == 1  # a.yaml only: the others are served, at new positions
    assert _codes(warm) == _codes(_cached(folder, tmp_path / "fresh"))
    assert [(name, code) for name, _, code in _codes(warm)] == [("c.yaml", "TL307")]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_suppression_of_a_finding_across_objects_holds_from_the_cache(
    tmp_path: Path, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runtime's annotation silences TL308 made across objects, whether the runtime
    is checked (on one process or two), served from the cache while a TrainJob changes,
    or the run is the last one again; and TL090 follows when nothing uses it."""
    monkeypatch.setattr(parallel, "MIN_INPUTS", 2)
    runtime = FIXED.replace(
        "metadata: {name: torch-ckpt, namespace: ml}",
        "metadata:\n  name: torch-ckpt\n  namespace: ml\n"
        "  annotations: {trainlint.dev/ignore: TL308}")
    folder = tmp_path / "repo"
    settings = Settings(select=("TL3", "TL090"))
    steps = [
        ("shared", checkpointing("b", "/mnt/ckpt/shared"), []),
        ("own", checkpointing("b", "/mnt/ckpt/b"), [("runtime.yaml", "TL090")]),
        ("shared again", checkpointing("b", "/mnt/ckpt/shared"), []),
    ]
    unrelated = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
    for _, job, expected in steps:
        _files(folder, {"runtime.yaml": runtime, "trainjob.yaml": job, "x.yaml": unrelated})
        for _ in range(2):  # the runtime served; then the whole run the last one again
            outcome = _cached(folder, tmp_path / "cache", jobs, settings)
            assert [(name, code) for name, _, code in _codes(outcome)] == expected
    # Another run, of the same files but one that nothing looks up: served whole from the
    # cache, the runtime's finding made again from the notes and silenced on its stand-in.
    (folder / "x.yaml").unlink()
    served = _cached(folder, tmp_path / "cache", jobs, settings)
    assert (served.checked, _codes(served)) == (0, [])


def test_what_facts_say_survives_the_cache_and_other_processes() -> None:
    """A fact's value is plain data: as JSON (the cache) and pickled (other processes)
    it reads the same, on every rule case that yields one."""
    told = 0
    for param in _cases():
        code, case = param.values
        text = case.get("fail", case.get("pass"))
        run = Run([load(text, "case.yaml")], case_settings(code, case))
        run.check(0)
        for note in run.notes[0]:
            assert json.loads(json.dumps(note.value)) == note.value, (code, note.value)
            told += 1
    assert told > 100


def test_a_runtime_is_not_judged_by_trainjobs_whose_files_turn_the_rule_off() -> None:
    """A TrainJob whose file's configuration turns TL308 off tells nothing of where it
    writes: the runtime it uses is not told its directory is shared, which the TrainJob
    may well not share."""
    runtime = load(FIXED, "runtimes/runtime.yaml")
    job = load(checkpointing("a", "/mnt/ckpt/a"), "jobs/job.yaml")
    quiet = Settings(select=("TL3",), ignore=("TL308",))

    def settings_for(source: Source) -> Settings:
        return quiet if source.name.startswith("jobs/") else TL3

    assert [f.code for f in lint([runtime, job], settings_for=settings_for)] == []
    assert [f.code for f in lint([runtime], settings_for=settings_for)] == ["TL308"]
