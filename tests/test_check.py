"""Checking files where they are read (`trainlint.run.check`): each process reads, checks
and lets go of its files, no document crosses processes, and what each file looked up is
judged against the whole run, so the findings are those of one run over every file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_cache import CHECKPOINTED, LABELLED, MISSING_LABEL, TRAINJOB, checkpointing
from trainlint import loader
from trainlint.config.settings import Settings
from trainlint.digest import blake2b
from trainlint.document import Manifest, Source, StandIn, stand_in_body
from trainlint.engine.index import Index, identify
from trainlint.engine.run import lint
from trainlint.finding import Finding
from trainlint.loader import load
from trainlint.run import check as checking
from trainlint.run import parallel

#: A claim of the namespace the test runtimes mount.
CLAIM = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ckpt, namespace: ml}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"""


def seen(findings: list[Finding]) -> list[tuple[str, int, str, str]]:
    return sorted((Path(f.file).name, f.span.line, f.code, f.message) for f in findings)


def one_run(folder: Path, settings: Settings) -> list[tuple[str, int, str, str]]:
    """What `lint` finds with every file read first, in one process."""
    names = sorted(folder.glob("*.yaml"))
    return seen(lint([load(path.read_text(), str(path)) for path in names], settings))


def repository(folder: Path, copies: int) -> list[str]:
    """`copies` runtimes, each with two TrainJobs (one on the runtime's directory) and a
    claim, named so that the TrainJobs' files come first and the claims' last: every
    look-up reaches a file read after the one that asks."""
    folder.mkdir()
    for number in range(copies):
        runtime = CHECKPOINTED.replace("name: torch-ckpt", f"name: torch-ckpt-{number}")
        (folder / f"b-runtime-{number:03d}.yaml").write_text(runtime)
        for job, directory in (("a", "/mnt/ckpt/run"), ("b", "/mnt/ckpt/x")):
            text = checkpointing(f"{job}-{number}", directory)
            text = text.replace("name: torch-ckpt}", f"name: torch-ckpt-{number}}}")
            (folder / f"a-trainjob-{number:03d}-{job}.yaml").write_text(text)
        claim = CLAIM.replace("ckpt,", f"ckpt-{number},")
        (folder / f"c-claim-{number:03d}.yaml").write_text(claim)
    return sorted(str(path) for path in folder.glob("*.yaml"))


@pytest.mark.parametrize("jobs", [1, 2])
def test_files_read_after_the_ones_that_look_them_up_give_one_run_s_findings(
    tmp_path: Path, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TrainJobs read before their runtimes, runtimes before their claims, in batches of
    a few files on one process or two: what each file looked up before the file it needed
    was read no longer holds in the whole run, so it is checked again, and the findings
    are those of one run that read everything first."""
    monkeypatch.setattr(checking, "BATCH_BYTES", 2048)
    monkeypatch.setattr(checking, "MIN_BATCH_BYTES", 1024)
    monkeypatch.setattr(checking, "MIN_INPUTS", 4)
    monkeypatch.setattr(parallel, "MIN_INPUTS", 4)  # what `worth_it` asks
    monkeypatch.setattr(checking, "PEEK_BYTES", 0)
    names = repository(tmp_path / "repo", 12)
    read: Counter[str] = Counter()
    parse = checking._read

    def counted(unit: checking.Unit) -> tuple[object, ...]:
        read[Path(unit.name).name] += 1
        return parse(unit)

    monkeypatch.setattr(checking, "_read", counted)
    outcome = checking.check(names, lambda _: Settings(), jobs)
    assert seen(outcome.findings) == one_run(tmp_path / "repo", Settings())
    assert {"TL307", "TL308", "TL309"} & {f.code for f in outcome.findings}
    if jobs == 1:  # in one process, only what was read too late is read again
        again = {name for name, count in read.items() if count > 1}
        assert again and all(name.startswith(("a-trainjob", "b-runtime")) for name in again)


def test_no_document_crosses_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers send what the cache keeps of each file, never an object: pickling one
    fails the run."""
    monkeypatch.setattr(checking, "MIN_INPUTS", 4)
    monkeypatch.setattr(parallel, "MIN_INPUTS", 4)  # what `worth_it` asks
    monkeypatch.setattr(checking, "MIN_BATCH_BYTES", 1024)
    names = repository(tmp_path / "repo", 12)

    def refuse(self: Manifest) -> None:
        raise AssertionError(f"{self.describe()} was sent to another process")

    monkeypatch.setattr(Manifest, "__reduce__", refuse)
    monkeypatch.setattr(StandIn, "__reduce__", refuse)
    outcome = checking.check(names, lambda _: Settings(), 2)
    assert seen(outcome.findings) == one_run(tmp_path / "repo", Settings())


def test_a_stand_in_is_fetched_whole_when_a_look_up_needs_it(tmp_path: Path) -> None:
    """The index answers a TrainJob's runtime look-up with the whole runtime, read again
    from its file, though it knew only its stand-in."""
    path = tmp_path / "runtime.yaml"
    path.write_text(LABELLED)
    runtime = load(LABELLED, str(path)).manifests[0]
    shelf = checking.Shelf({})
    index = Index([StandIn.made(stand_in_body(runtime), Source(str(path)), 0, ())],
                  fetch=shelf.fetch)
    job = load(checkpointing("a", "/mnt/ckpt/a"), "job.yaml").manifests[0]
    found = index.runtime_for(job)
    assert found is not None and not isinstance(found, StandIn)
    assert found.body == runtime.body and found.span(("spec",)) == runtime.span(("spec",))


def _long_file(path: Path, copies: int) -> Path:
    """The examples' documents `copies` times over, each copy in a namespace of its own."""
    documents: list[str] = []
    for number in range(copies):
        for example in sorted((ROOT / "examples").rglob("*.yaml")):
            text = example.read_text().replace("namespace: llm-sft", f"namespace: ns-{number}")
            documents.extend(part for part in text.split("---\n") if part.strip())
    path.write_text("---\n".join(documents))
    return path


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_long_file_is_checked_in_slices_as_it_is_whole(
    tmp_path: Path, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long file is read in slices of whole documents, checked where they are read and
    settled over the whole file: its findings are those of the file read whole, and no
    process ever held more than a few slices of it."""
    monkeypatch.setattr(loader, "SLICED_BYTES", 4096)
    monkeypatch.setattr(loader, "SLICE_BYTES", 2048)
    monkeypatch.setattr(checking, "MIN_BATCH_BYTES", 4096)
    monkeypatch.setattr(parallel, "MIN_INPUTS", 4)
    path = _long_file(tmp_path / "stream.yaml", 12)
    held: list[int] = []
    read = checking._read

    def slice_read(unit: checking.Unit) -> tuple[object, ...]:
        assert unit.piece is not None, "a long file is read in slices"
        found = read(unit)
        held.append(len(found[0].source.text))
        return found

    monkeypatch.setattr(checking, "_read", slice_read)
    outcome = checking.check([str(path)], lambda _: Settings(), jobs)
    assert seen(outcome.findings) == one_run(tmp_path, Settings())
    assert len(held) >= 10 and max(held) < 4 * 2048


def _broken_long_file(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A long file cut into small slices, a syntax error in its middle."""
    monkeypatch.setattr(loader, "SLICED_BYTES", 4096)
    monkeypatch.setattr(loader, "SLICE_BYTES", 2048)
    path = _long_file(folder / "stream.yaml", 12)
    text = path.read_text()
    middle = text.index("\n---\n", len(text) // 2)
    path.write_text(text[:middle] + "\n---\nkind: [\n" + text[middle:])
    return path


def test_a_slice_that_stops_has_its_file_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A syntax error in a slice: what libyaml reads before the error depends on the
    whole text, so the file is read whole, and found as a run of one file finds it."""
    path = _broken_long_file(tmp_path, monkeypatch)
    outcome = checking.check([str(path)], lambda _: Settings(), 1)
    assert seen(outcome.findings) == one_run(tmp_path, Settings())
    assert "TL001" in {f.code for f in outcome.findings}


def test_a_file_read_whole_after_a_slice_stopped_is_not_cut_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file a slice stopped in is read whole in the second round, not cut into the
    same slices again (whose join would drop those after the stop): what comes after the
    error libyaml never reads, as in a run of one file, and a suppression written there
    is not judged (TL090 called it unused while the rules read nothing there)."""
    monkeypatch.setattr(loader, "SLICED_BYTES", 64)
    monkeypatch.setattr(loader, "SLICE_BYTES", 1)
    path = tmp_path / "stream.yaml"
    path.write_text(f"{CLAIM}---\napiVersion: v1\nkind: [\n---\n"
                    + CLAIM.replace("storage: 1Gi}}", "storage: 1Gi}}  # trainlint: disable=TL307"))
    whole: list[str] = []
    read = checking._read

    def counted(unit: checking.Unit) -> tuple[object, ...]:
        if unit.piece is None:
            whole.append(unit.name)
        return read(unit)

    monkeypatch.setattr(checking, "_read", counted)
    outcome = checking.check([str(path)], lambda _: Settings(), 1)
    assert whole == [str(path)]
    assert seen(outcome.findings) == one_run(tmp_path, Settings())
    assert [f.code for f in outcome.findings] == ["TL001"]


def test_a_suppression_comment_is_never_cut_from_the_line_it_applies_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suppression comment on its own line applies to the next line that is no comment:
    before a document's `---`, to that line, which may hold the document itself. The file
    is not cut between them, so the comment silences the finding there, as in the file
    read whole (cut there, it would apply to its own line: the finding shown, the comment
    told unused)."""
    monkeypatch.setattr(loader, "SLICED_BYTES", 64)
    monkeypatch.setattr(loader, "SLICE_BYTES", 1)
    flow = ("--- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: x, namespace: "
            "ml}, spec: {accessModes: [ReadWriteOnce], bogus: 1, resources: {requests: "
            "{storage: 1Gi}}}}\n")
    path = tmp_path / "stream.yaml"
    path.write_text(f"{CLAIM}# trainlint: disable=TL006\n\n# why\n{flow}---\n{CLAIM}")
    sliced = loader.slices(str(path), blake2b())
    assert sliced is not None and [piece.documents for piece in sliced.slices] == [0, 2]
    outcome = checking.check([str(path)], lambda _: Settings(), 1)
    assert seen(outcome.findings) == one_run(tmp_path, Settings()) == []


def test_in_a_file_too_long_to_read_whole_a_slice_that_stops_ends_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the limit of a file read whole, the file is not read again: what the slice
    that stopped holds before its error is checked, and nothing after it, as libyaml
    reads no further."""
    monkeypatch.setattr(checking, "MAX_FILE_BYTES", 4096)
    path = _broken_long_file(tmp_path, monkeypatch)
    outcome = checking.check([str(path)], lambda _: Settings(), 1)
    whole = one_run(tmp_path, Settings())
    [error_line] = [line for _, line, code, _ in whole if code == "TL001"]
    assert max(f.span.line for f in outcome.findings) <= error_line < len(
        path.read_text().splitlines())
    assert seen(outcome.findings) == whole


def test_an_index_that_grows_in_order_records_only_what_may_change(tmp_path: Path) -> None:
    """Objects added in the run's order: an object found by its key is the run's for
    good (a later one of that key never takes its place), so only what was not found,
    and what many objects answer, is recorded for the run's end to judge."""
    path = tmp_path / "runtime.yaml"
    path.write_text(LABELLED)
    runtime = load(LABELLED, str(path)).manifests[0]
    index = Index([], fetch=checking.Shelf({}).fetch)
    index.add(StandIn.made(stand_in_body(runtime), Source(str(path)), 0, ()), content="c")
    job = load(checkpointing("a", "/mnt/ckpt/a"), "job.yaml").manifests[0]
    index.lasting, index.looked_up = True, {}
    assert index.runtime_for(job) is not None
    assert index.claim("ml", "ckpt") is None
    assert index.trainjobs_using(runtime) == []
    assert sorted(key.split("\x1f")[0] for key in index.looked_up) == [
        "PersistentVolumeClaim", "users"]
    index.lasting, index.looked_up = False, {}
    index.memo.clear()  # a new object checked
    assert index.runtime_for(job) is not None
    assert [key.split("\x1f")[0] for key in index.looked_up] == ["TrainingRuntime"]


def test_an_input_read_after_the_context_comes_before_it(tmp_path: Path) -> None:
    """The context is indexed before any file is read, yet an input comes before it, as
    in `lint`'s index: the TrainJob finds the runtime of the run (with no trainer label:
    TL201), not the context's runtime of the same name."""
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "runtime.yaml").write_text(MISSING_LABEL)
    (folder / "trainjob.yaml").write_text(TRAINJOB)
    context = tmp_path / "context.yaml"
    context.write_text(LABELLED)
    names = sorted(str(path) for path in folder.glob("*.yaml"))
    outcome = checking.check(names, lambda _: Settings(), 1, context=[str(context)])
    inputs = [load(Path(name).read_text(), name) for name in names]
    expected = lint(inputs, Settings(), context=load(LABELLED, str(context)).manifests)
    assert seen(outcome.findings) == seen(expected)
    assert ("trainjob.yaml", "TL201") in {(Path(f.file).name, f.code) for f in expected}


def test_an_input_added_to_an_index_takes_the_place_of_the_context_s_copy() -> None:
    """Inputs added once the index is made come before its context objects: an input
    runtime takes the place of the context's runtime of its key, and an input TrainJob
    that of the context's older copy of it, which is then none of the runtime's users."""
    runtime = load(LABELLED, "context.yaml").manifests[0]
    copy = load(TRAINJOB, "context.yaml").manifests[0]
    index = Index([], [runtime, copy])
    index.digests.update({id(runtime): "context/0", id(copy): "context/1"})
    assert index.context_users(runtime) == [copy]
    before = index.digest(("users", *Index.key_of(runtime)))
    own = load(MISSING_LABEL, "runtime.yaml").manifests[0]
    job = load(TRAINJOB, "trainjob.yaml").manifests[0]
    index.add(own, content="a")
    index.add(job, content="b")
    index.memo.clear()
    assert index.runtime_for(job) is own
    assert index.runtimes_named("torch-ckpt") == [own]
    assert index.trainjobs_using(runtime) == [job]
    assert index.context_users(runtime) == []
    assert index.digest(("users", *Index.key_of(runtime))) != before


def test_a_context_object_found_in_an_index_in_order_is_recorded(tmp_path: Path) -> None:
    """An index that grows in the run's order keeps an input found by its key for good,
    but not a context object: an input of its key read later takes its place, so the
    look-up is recorded, to be judged at the run's end."""
    runtime = load(LABELLED, "context.yaml").manifests[0]
    job = load(TRAINJOB, "trainjob.yaml").manifests[0]
    index = Index([], [runtime])
    index.digests[id(runtime)] = "context/0"
    index.lasting, index.looked_up = True, {}
    assert index.runtime_for(job) is runtime
    assert [key.split("\x1f")[0] for key in index.looked_up] == ["TrainingRuntime"]


def test_an_object_known_by_its_file_s_digest_is_known_as_by_its_identity() -> None:
    """A stand-in added with its file's digest answers a look-up with the digest that the
    same stand-in added with its identity gives (the cache's, another process's)."""
    runtime = load(LABELLED, "runtime.yaml").manifests[0]
    body = stand_in_body(runtime)
    by_content, by_identity = Index([]), Index([])
    by_content.add(StandIn.made(body, Source("runtime.yaml"), 0, ()), content="abc")
    by_identity.add(StandIn.made(body, Source("runtime.yaml"), 0, ()),
                    identify("abc", runtime))
    key = Index.key_of(runtime)
    assert by_content.digest(key) == by_identity.digest(key)


def test_two_inputs_of_one_key_check_again_only_the_files_that_found_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On two processes, an object a process found by its key may not be the run's when
    another input has that key (a kustomize repository's overlays often repeat a claim):
    the files that found an object of such a key are checked again, not every file."""
    monkeypatch.setattr(checking, "MIN_INPUTS", 4)
    monkeypatch.setattr(parallel, "MIN_INPUTS", 4)  # what `worth_it` asks
    monkeypatch.setattr(checking, "MIN_BATCH_BYTES", 1024)
    folder = tmp_path / "repo"
    folder.mkdir()
    for number in range(40):
        (folder / f"claim-{number:03d}.yaml").write_text(CLAIM.replace("ckpt,", f"c-{number},"))
    for copy in ("a", "z"):  # the same claim twice: the first is the run's
        (folder / f"{copy}-shared.yaml").write_text(CLAIM.replace("ckpt,", "shared,"))
    (folder / "m-runtime.yaml").write_text(CHECKPOINTED.replace("claimName: ckpt",
                                                                "claimName: shared"))
    names = sorted(str(path) for path in folder.glob("*.yaml"))
    rounds: list[list[str]] = []
    spread = checking._Run.spread

    def recorded(self: checking._Run, units: list[checking.Unit],
                 checker: checking._Checker) -> list[checking.Result]:
        rounds.append([Path(unit.name).name for unit in units])
        return spread(self, units, checker)

    monkeypatch.setattr(checking._Run, "spread", recorded)
    outcome = checking.check(names, lambda _: Settings(), 2)
    assert seen(outcome.findings) == one_run(folder, Settings())
    assert (len(rounds[0]), rounds[1]) == (43, ["m-runtime.yaml"])
