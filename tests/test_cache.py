"""The findings cache: reused only while the file, its settings and everything its rules
looked up are unchanged; never trusted when damaged."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import trainlint
from trainlint.config.settings import Settings
from trainlint.engine.run import Run
from trainlint.files import CACHE_MARKERS as MARKERS
from trainlint.loader import load
from trainlint.run import check as checking
from trainlint.run.cache import Cache
from trainlint.run.check import Outcome, check
from trainlint.version import build_fingerprint

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: torch-ckpt, namespace: ml}
spec:
  mlPolicy: {torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels: {LABELS}
            spec:
              template:
                spec:
                  containers: [{name: node, image: busybox}]
"""
TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: sft, namespace: ml}
spec:
  runtimeRef: {kind: TrainingRuntime, name: torch-ckpt}
  trainer: {image: example/trainer:1}
"""
UNRELATED = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n"
MISSING_LABEL = RUNTIME.replace("{LABELS}", "{app: train}")
LABELLED = RUNTIME.replace("{LABELS}", "{trainer.kubeflow.org/trainjob-ancestor-step: trainer}")


def run_cached(folder: Path, cache_dir: Path, settings: Settings | None = None) -> Outcome:
    names = sorted(str(path) for path in folder.glob("*.yaml"))
    chosen = settings or Settings()
    return check(names, lambda _: chosen, 1, Cache(cache_dir))


def codes(outcome: Outcome) -> list[tuple[str, str]]:
    return [(Path(finding.file).name, finding.code) for finding in outcome.findings]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "runtime.yaml").write_text(MISSING_LABEL)
    (folder / "trainjob.yaml").write_text(TRAINJOB)
    (folder / "unrelated.yaml").write_text(UNRELATED)
    return folder


def test_unchanged_files_are_not_checked_again(project: Path, tmp_path: Path) -> None:
    cold = run_cached(project, tmp_path / "cache")
    warm = run_cached(project, tmp_path / "cache")
    assert cold.checked == 3
    assert warm.checked == 0
    assert codes(warm) == codes(cold)
    assert ("trainjob.yaml", "TL201") in codes(cold)
    assert [f.message for f in warm.findings] == [f.message for f in cold.findings]
    assert [f.span for f in warm.findings] == [f.span for f in cold.findings]


def test_unchanged_files_of_another_run_are_the_cache_s_answer_whole(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files none of which changed, checked by an earlier run among others (a hook's run
    on the files of a commit), whose look-ups still find what they found, judged on the
    stand-ins of what the entries provide: served whole, no round of checking set up."""
    cold = run_cached(project, tmp_path / "cache")
    (project / "unrelated.yaml").unlink()  # this run: the runtime and its TrainJob only

    def round_set_up(self: object) -> Outcome:
        raise AssertionError("a round of checking was set up")

    monkeypatch.setattr(checking._Run, "check", round_set_up)
    warm = run_cached(project, tmp_path / "cache")
    assert warm.checked == 0
    assert codes(warm) == [found for found in codes(cold) if found[0] != "unrelated.yaml"]


def test_a_change_elsewhere_rechecks_what_looked_at_it(project: Path, tmp_path: Path) -> None:
    run_cached(project, tmp_path / "cache")
    (project / "runtime.yaml").write_text(LABELLED)  # the TrainJob's TL201 goes away
    after = run_cached(project, tmp_path / "cache")
    assert after.checked == 2  # the runtime, and the TrainJob that looked it up
    assert ("trainjob.yaml", "TL201") not in codes(after)
    assert codes(after) == codes(run_cached(project, tmp_path / "fresh-cache"))


def test_an_object_is_known_by_its_file_s_bytes(project: Path, tmp_path: Path) -> None:
    """Look-ups are judged by the bytes of the files they found objects in, not by a digest
    of every object's data: even a new comment beside the runtime rechecks its TrainJob."""
    run_cached(project, tmp_path / "cache")
    (project / "runtime.yaml").write_text("# reviewed\n" + MISSING_LABEL)
    after = run_cached(project, tmp_path / "cache")
    assert after.checked == 2
    assert ("trainjob.yaml", "TL201") in codes(after)


SCRIPTED = LABELLED.replace(
    "            spec:\n              template:",
    "            spec:\n              backoffLimit: 0\n              template:",
).replace(
    "[{name: node, image: busybox}]",
    "[{name: node, image: busybox, command: [torchrun, /scripts/train.py],\n"
    "                                volumeMounts: [{name: scripts, mountPath: /scripts}]}]\n"
    "                  volumes: [{name: scripts, configMap: {name: train}}]",
)
PROGRAM = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: train, namespace: ml}
data:
  train.py: |
    from transformers import TrainingArguments
    args = TrainingArguments(output_dir="/out", save_strategy="SAVES")
"""


def test_the_program_a_config_map_holds_is_looked_up_in_its_file(tmp_path: Path) -> None:
    """The runtime runs a program of a ConfigMap of another file: whether it saves decides
    TL403 (and TL301), and a change of it rechecks the runtime and its TrainJob."""
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "runtime.yaml").write_text(SCRIPTED)
    (folder / "trainjob.yaml").write_text(TRAINJOB.replace(
        "trainer: {image: example/trainer:1}", "trainer: {env: [{name: OUTPUT_DIR, value: /out}]}"))
    (folder / "program.yaml").write_text(PROGRAM.replace("SAVES", "no"))
    assert codes(run_cached(folder, tmp_path / "cache")) == []
    (folder / "program.yaml").write_text(PROGRAM.replace("SAVES", "steps"))
    after = run_cached(folder, tmp_path / "cache")
    assert after.checked == 3  # the ConfigMap, and the runtime and TrainJob that read it
    assert codes(after) == [("runtime.yaml", "TL403"), ("runtime.yaml", "TL301"),
                            ("trainjob.yaml", "TL301")]
    assert codes(after) == codes(run_cached(folder, tmp_path / "fresh-cache"))


CHECKPOINTED = LABELLED.replace(
    "[{name: node, image: busybox}]",
    "[{name: node, image: busybox, volumeMounts: [{name: ckpt, mountPath: /mnt/ckpt}]}]\n"
    "                  volumes: [{name: ckpt, persistentVolumeClaim: {claimName: ckpt}}]",
)


def checkpointing(name: str, directory: str) -> str:
    return TRAINJOB.replace("name: sft", f"name: {name}").replace(
        "trainer: {image: example/trainer:1}",
        f"trainer: {{env: [{{name: CKPT_DIR, value: {directory}}}]}}",
    )


def test_a_finding_across_trainjobs_follows_the_one_that_changed(tmp_path: Path) -> None:
    """TL307 compares where the TrainJobs of a namespace checkpoint from their notes,
    kept in the cache: when `a` moves to `b`'s directory, only `a` is checked again, and
    `b`, served from the cache, is told it clashes with `a`."""
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "runtime.yaml").write_text(CHECKPOINTED)
    (folder / "a.yaml").write_text(checkpointing("a", "/mnt/ckpt/a"))
    (folder / "b.yaml").write_text(checkpointing("b", "/mnt/ckpt/b"))
    assert "TL307" not in {code for _, code in codes(run_cached(folder, tmp_path / "cache"))}
    (folder / "a.yaml").write_text(checkpointing("a", "/mnt/ckpt/b"))
    after = run_cached(folder, tmp_path / "cache")
    assert after.checked == 1
    assert [name for name, code in codes(after) if code == "TL307"] == ["b.yaml"]
    assert codes(after) == codes(run_cached(folder, tmp_path / "fresh-cache"))


def test_a_namespace_wide_result_depends_on_the_runtimes_its_trainjobs_find(
    tmp_path: Path,
) -> None:
    """TL307 compares the TrainJobs of a namespace whatever their runtimes. When only
    `a`'s runtime changes, to mount the claim `b` writes on, the runtime and `a` (which
    looked it up) are checked again, and `b`, served from the cache, is told."""

    def runtime(name: str, claim: str) -> str:
        return CHECKPOINTED.replace("name: torch-ckpt", f"name: {name}").replace(
            "claimName: ckpt", f"claimName: {claim}"
        )

    def job(name: str, runtime_name: str) -> str:
        return checkpointing(name, "/mnt/ckpt/sft").replace(
            "name: torch-ckpt}", f"name: {runtime_name}}}"
        )

    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "first-runtime.yaml").write_text(runtime("first", "scratch"))
    (folder / "second-runtime.yaml").write_text(runtime("second", "ckpt"))
    (folder / "a.yaml").write_text(job("a", "first"))
    (folder / "b.yaml").write_text(job("b", "second"))
    assert "TL307" not in {code for _, code in codes(run_cached(folder, tmp_path / "cache"))}
    (folder / "first-runtime.yaml").write_text(runtime("first", "ckpt"))
    after = run_cached(folder, tmp_path / "cache")
    assert after.checked == 2  # the runtime, and a that uses it
    assert [name for name, code in codes(after) if code == "TL307"] == ["b.yaml"]
    assert codes(after) == codes(run_cached(folder, tmp_path / "fresh-cache"))


def test_what_a_run_derives_once_is_recorded_for_every_object_that_asks() -> None:
    """`Index.per_run` builds from an empty memo, and records the look-ups of the build
    again for each caller: a cached finding must name everything it was worked out from."""
    text = f"{CHECKPOINTED}---\n{checkpointing('a', '/mnt/ckpt/a')}"
    run = Run([load(text, "run.yaml")], contents={"run.yaml": "digest"})
    index = run.index
    runtime = run.inputs[0].manifests[0]
    index.memo["outer",] = "kept"

    def build() -> list[str]:
        assert index.memo == {}
        return [user.name for user in index.trainjobs_using(runtime)]

    index.looked_up = {}
    assert index.per_run(runtime, ("users",), build) == ["a"]
    first = index.looked_up
    index.looked_up = {}
    assert index.per_run(runtime, ("users",), lambda: pytest.fail("built twice")) == ["a"]
    assert index.looked_up == first
    assert len(first) == 1
    assert index.memo == {("outer",): "kept"}


def test_what_is_derived_for_a_while_is_recorded_for_every_object_and_then_dropped() -> None:
    """`per_run(recent=True)` (a TrainJob's render) records its look-ups for each caller as
    `per_run` does, and keeps only the last `RECENT` results asked for."""
    from trainlint.engine.index import RECENT

    text = f"{CHECKPOINTED}---\n{checkpointing('a', '/mnt/ckpt/a')}"
    run = Run([load(text, "run.yaml")], contents={"run.yaml": "digest"})
    index = run.index
    runtime, job = run.inputs[0].manifests
    index.looked_up = {}
    found = index.per_run(job, ("runtime",), lambda: index.runtime_for(job), recent=True)
    assert found is runtime
    first, index.looked_up = index.looked_up, {}
    again: object = index.per_run(
        job, ("runtime",), lambda: pytest.fail("built twice"), recent=True
    )
    assert again is runtime
    assert index.looked_up == first
    assert len(first) == 1
    for count in range(RECENT + 8):  # asked again on the way: the most recent again
        index.per_run(job, ("other", count), lambda: None, recent=True)
        if count == RECENT - 2:
            index.per_run(job, ("runtime",), lambda: pytest.fail("built twice"), recent=True)
    index.per_run(job, ("runtime",), lambda: pytest.fail("built twice"), recent=True)
    for count in range(RECENT):
        index.per_run(job, ("more", count), lambda: None, recent=True)
    built = []
    index.per_run(job, ("runtime",), lambda: built.append(1), recent=True)
    assert built == [1]  # dropped, so built again


def test_what_was_derived_while_inputs_were_missing_is_derived_again_once_all_are_in() -> None:
    """A run that indexes files as it reads them checks some again on the index of every
    input (`Index.complete`): what a runtime's users were while one was unread is not
    what they are."""
    from trainlint.engine.index import Index

    runtime, first, second = load(
        f"{CHECKPOINTED}---\n{checkpointing('a', '/mnt/ckpt/a')}---\n"
        f"{checkpointing('b', '/mnt/ckpt/b')}", "run.yaml").manifests
    index = Index([], [])
    index.lasting = True
    for manifest in (runtime, first):
        index.add(manifest, "identity")

    def users() -> list[str]:
        return [user.name for user in index.trainjobs_using(runtime)]

    for recent in (False, True):
        assert index.per_run(runtime, ("users",), users, recent=recent) == ["a"]
    index.add(second, "identity")
    index.complete()
    assert not index.lasting
    for recent in (False, True):
        assert index.per_run(runtime, ("users",), users, recent=recent) == ["a", "b"]


def test_a_file_that_is_not_yaml_is_cached_with_its_finding(tmp_path: Path) -> None:
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "broken.yaml").write_text("kind: [\n")
    cold = run_cached(folder, tmp_path / "cache")
    warm = run_cached(folder, tmp_path / "cache")
    assert codes(cold) == codes(warm) == [("broken.yaml", "TL001")]
    assert warm.checked == 0


def test_other_settings_are_not_served_from_the_cache(project: Path, tmp_path: Path) -> None:
    run_cached(project, tmp_path / "cache")
    only = run_cached(project, tmp_path / "cache", Settings(select=("TL4",)))
    assert only.checked == 3
    assert {code for _, code in codes(only)} <= {"TL401", "TL402"}


@pytest.mark.parametrize("damage", [b"\x00garbage", b"[1, 2]", b'{"x": {"content": 1}}'])
def test_a_damaged_cache_is_ignored(project: Path, tmp_path: Path, damage: bytes) -> None:
    cold = run_cached(project, tmp_path / "cache")
    [cache_file] = (tmp_path / "cache").glob("findings-*.json")
    cache_file.write_bytes(damage)
    again = run_cached(project, tmp_path / "cache")
    assert again.checked == 3
    assert codes(again) == codes(cold)
    assert json.loads(cache_file.read_text())  # rewritten whole


@pytest.mark.parametrize("table", [{}, {"TL301": ["x"]}, None])
def test_findings_without_their_rule_texts_are_checked_again(
    project: Path, tmp_path: Path, table: object
) -> None:
    cold = run_cached(project, tmp_path / "cache")
    [cache_file] = (tmp_path / "cache").glob("findings-*.json")
    stored = json.loads(cache_file.read_text())
    cache_file.write_text(json.dumps({**stored, "rules": table}))
    again = run_cached(project, tmp_path / "cache")
    # The TrainJob, whose own findings need them; the runtime's TL201 is made again from
    # the notes of both (which name no rule text), and unrelated.yaml has none to read.
    assert again.checked == 1
    assert [(f.code, f.name, f.remediation) for f in again.findings] == [
        (f.code, f.name, f.remediation) for f in cold.findings
    ]


def test_a_cached_finding_of_no_rule_is_not_kept(project: Path, tmp_path: Path) -> None:
    """A cache file is never trusted to name real rules: one that was tampered with
    cannot make saving fail."""
    run_cached(project, tmp_path / "cache")
    [cache_file] = (tmp_path / "cache").glob("findings-*.json")
    stored = json.loads(cache_file.read_text())
    entry = stored["files"][str(project / "trainjob.yaml")]
    entry["settled"] = [["TL999", *entry["settled"][0][1:]]]
    stored["rules"]["TL999"] = ["no-such-rule", None]
    cache_file.write_text(json.dumps(stored))
    (project / "unrelated.yaml").write_text(UNRELATED + "# edited\n")
    assert run_cached(project, tmp_path / "cache").checked == 1
    after = run_cached(project, tmp_path / "cache")
    assert after.checked == 1  # the tampered entry: its rule has no texts any more
    assert ("trainjob.yaml", "TL201") in codes(after)


@pytest.mark.parametrize(
    "entry",
    [{"provides": 5}, {"dependencies": ["x"]}, {"dependencies": {"x": "y"}},
     {"provides": [[[], "d"]]}],
)
def test_index_entries_of_the_wrong_shape_are_not_used(
    project: Path, tmp_path: Path, entry: dict[str, object]
) -> None:
    """An index entry this build cannot read is not used: what its file provides to the
    index is read again from the file, which is checked again."""
    cold = run_cached(project, tmp_path / "cache")
    [index_file] = (tmp_path / "cache").glob("index-*.json")
    stored = json.loads(index_file.read_text())
    stored["files"][str(project / "trainjob.yaml")].update(entry)
    index_file.write_text(json.dumps(stored))
    (project / "unrelated.yaml").unlink()  # another run: the stored look-ups are judged
    again = run_cached(project, tmp_path / "cache")
    assert again.checked == 1
    assert codes(again) == codes(cold)


def test_the_build_is_told_by_its_files_sizes_and_times() -> None:
    """A source file edited (its time moved) is another build: the cache of the first is
    not used; the same file as it was is the first build again."""
    build_fingerprint.cache_clear()  # worked out once a process: each ask here is anew
    before = build_fingerprint()
    source = Path(trainlint.__file__).with_name("version.py")
    stat = source.stat()
    try:
        os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
        build_fingerprint.cache_clear()
        edited = build_fingerprint()
    finally:
        os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        build_fingerprint.cache_clear()
    assert len({before, edited}) == 2
    assert build_fingerprint() == before


def test_files_of_other_builds_are_removed(project: Path, tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    for name, text in MARKERS.items():  # a folder an earlier run made
        (folder / name).write_text(text)
    (folder / "findings-0000000000000000.json").write_text("{}")
    (folder / "index-0000000000000000.json").write_text("{}")
    (folder / "config-0000000000000000.json").write_text("{}")
    (folder / "notes.txt").write_text("mine")
    run_cached(project, folder)
    cache = Cache(folder)
    left = {path.name for path in folder.iterdir()}
    # This build's definitions and verdicts are there when this process read any.
    ours = {path.name for path in (cache.findings_path, cache.index_path,
                                   cache.definitions_path, cache.verdicts_path)}
    assert left - ours == {"notes.txt", *MARKERS}
    assert {cache.findings_path.name, cache.index_path.name} <= left


@pytest.mark.parametrize("named", [["--cache-dir", "."], ["--cache-dir", ".."], []])
def test_a_folder_of_someone_elses_files_is_never_a_cache(tmp_path: Path, named: list[str]) -> None:
    """A cache folder named back into the project (`cache-dir = "../proj"`, `--cache-dir .`)
    holds the user's files: the run keeps no cache there, says so, and leaves every file
    (`config-prod.json` has the name of a stale cache file) and git's view as they were."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "config-prod.json").write_text("{}")
    (project / "index-v1.json").write_text("{}")
    (project / "job.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    (project / "pyproject.toml").write_text('[tool.trainlint]\ncache-dir = "../proj"\n')
    (tmp_path / "notes.txt").write_text("mine")
    before = {path: path.read_bytes() for path in tmp_path.rglob("*")
              if path.is_file()}
    done = subprocess.run(
        [sys.executable, "-m", "trainlint", "check", "--allow-empty", *named, "job.yaml"],
        cwd=project, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(Path(trainlint.__file__).parent.parent)},
    )
    assert done.returncode == 0, done.stderr
    shown = named[1] if named else "."  # as the working folder sees it
    assert done.stderr == (f"trainlint: `{shown}` holds files trainlint did not write, so no "
                           "cache is kept there: name a folder of its own (`cache-dir`, "
                           "`--cache-dir`)\n")
    assert {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()} == before


def test_git_ignores_the_cache_folder(project: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "--quiet", str(tmp_path)], check=True)
    run_cached(project, tmp_path / "cache")
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path,
        capture_output=True, text=True, check=True,
    ).stdout
    assert "manifests/runtime.yaml" in status
    assert "cache" not in status
    assert (tmp_path / "cache" / "CACHEDIR.TAG").read_text().startswith(
        "Signature: 8a477f597d28d172789f06886806bc55"
    )


def test_a_full_disk_leaves_no_broken_marker(project: Path, tmp_path: Path) -> None:
    """A run that cannot write its cache (here: every file it writes is limited to 16
    bytes, as a nearly full disk would cut it) still reports, and leaves no cut-short
    `.gitignore` (git would then see the cache); the next run writes the markers whole."""
    trainlint = shutil.which("trainlint") or "trainlint"

    def run(limit: int | None) -> subprocess.CompletedProcess[str]:
        def limited() -> None:
            if limit is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        return subprocess.run(
            [trainlint, "check", "--output-format", "concise", "--cache-dir", "cache",
             str(project)],
            capture_output=True, text=True, check=False, cwd=tmp_path, preexec_fn=limited,
        )

    full = run(16)
    assert (full.returncode, full.stderr) == (1, "")
    assert "runtime.yaml:" in full.stdout
    assert not (tmp_path / "cache" / ".gitignore").exists()
    assert run(None).stdout == full.stdout
    for name, text in MARKERS.items():
        assert (tmp_path / "cache" / name).read_text() == text
    (tmp_path / "cache" / ".gitignore").write_text("")  # cut short by an older release
    (project / "unrelated.yaml").write_text(UNRELATED + "# changed\n")  # the cache is written
    run(None)
    assert (tmp_path / "cache" / ".gitignore").read_text() == MARKERS[".gitignore"]


def test_command_line_cache_options(project: Path, tmp_path: Path) -> None:
    trainlint = shutil.which("trainlint") or "trainlint"

    def run(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [trainlint, "check", "--output-format", "concise", *options, str(project)],
            capture_output=True, text=True, check=False, cwd=tmp_path,
        )

    first = run("--cache-dir", "kept")
    second = run("--cache-dir", "kept")
    uncached = run("--no-cache")
    assert first.returncode == second.returncode == uncached.returncode == 1
    assert first.stdout == second.stdout == uncached.stdout
    assert list((tmp_path / "kept").glob("findings-*.json"))
    assert not (tmp_path / ".trainlint_cache").exists()  # --no-cache wrote nothing


def test_which_folders_may_hold_the_cache(tmp_path: Path) -> None:
    """A folder trainlint made (a marker of its own, whole), or none yet; never a folder of
    someone else's files, even one another tool tagged as its cache."""
    from trainlint.files import may_hold_cache

    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / "CACHEDIR.TAG").write_text(MARKERS["CACHEDIR.TAG"])
    (ours / "findings-0000000000000000.json").write_text("{}")
    other = tmp_path / "other"
    other.mkdir()
    (other / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    (other / "v").write_text("another tool's")
    mixed = tmp_path / "mixed"  # trainlint's .gitignore, but another tool's tag
    mixed.mkdir()
    (mixed / ".gitignore").write_text(MARKERS[".gitignore"])
    (mixed / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n# pytest\n")
    (mixed / "index-notes.json").write_text("{}")
    (tmp_path / "empty").mkdir()
    (tmp_path / "a-file").write_text("mine")
    assert may_hold_cache(ours)
    assert may_hold_cache(tmp_path / "missing")
    assert may_hold_cache(tmp_path / "empty")
    assert not may_hold_cache(other)
    assert not may_hold_cache(mixed)
    assert not may_hold_cache(tmp_path / "a-file")
    assert not may_hold_cache(tmp_path)
