"""Checking on several processes: the same findings as one, whatever the processes meet."""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import ROOT
from trainlint import loader
from trainlint.cli import _read
from trainlint.config.settings import Settings
from trainlint.document import Loaded
from trainlint.engine.run import Run, lint
from trainlint.loader import Spread
from trainlint.run import check as checking
from trainlint.run import parallel

UNRELATED = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n"
#: Copies of the examples in the long files of these tests.
COPIES = 50


def test_several_processes_give_the_same_findings(tmp_path: Path) -> None:
    """Enough files to start workers; the output must not depend on --jobs."""
    examples = sorted((ROOT / "examples").rglob("*.yaml"))
    for number in range(parallel.MIN_INPUTS + 20):
        source = examples[number % len(examples)]
        text = source.read_text().replace("namespace: llm-sft", f"namespace: team-{number}")
        (tmp_path / f"{number:03d}-{source.name}").write_text(text)
    outputs = []
    for jobs in ("1", "2", "3"):
        result = subprocess.run(
            [shutil.which("trainlint") or "trainlint", "check", "--no-cache", "--jobs", jobs,
             "--output-format", "json", str(tmp_path)],
            capture_output=True, text=True, check=False,
        )
        assert result.returncode == 1, result.stderr
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    assert len(json.loads(outputs[0])) > parallel.MIN_INPUTS


@given(st.integers(min_value=0, max_value=200_000), st.integers(min_value=2, max_value=64))
def test_chunks_cover_every_input_once_in_order(count: int, jobs: int) -> None:
    chunks = parallel._chunks(count, jobs)
    assert [index for chunk in chunks for index in chunk] == list(range(count))
    assert len(chunks) <= parallel.MAX_CHUNKS
    sizes = [len(chunk) for chunk in chunks]
    assert sizes == sorted(sizes, reverse=True)  # large first
    assert all(size >= parallel.MIN_CHUNK for size in sizes[:-1])


def test_every_process_takes_chunks_and_results_keep_their_order(tmp_path: Path) -> None:
    """Every process, the parent too, takes a share of the items, and each result lands
    at its item's place. Each process's first item waits until all three have one, so a
    process that forks late, or a parent busy importing the rules, still gets its share
    instead of finding the queue already empty."""
    items = [str(number) for number in range(parallel.MIN_INPUTS)]

    def work(item: str, _: Spread | None) -> tuple[str, int]:
        here = tmp_path / str(os.getpid())
        if not here.exists():
            here.touch()
            deadline = time.monotonic() + 30
            while len(list(tmp_path.iterdir())) < 3 and time.monotonic() < deadline:
                time.sleep(0.01)
        return item, os.getpid()

    results = parallel.read_all(items, work, jobs=3)
    assert [item for item, _ in results] == items
    takers = {pid for _, pid in results}
    assert os.getpid() in takers
    assert len(takers) == 3


def test_a_slow_process_takes_fewer_chunks() -> None:
    """A process that meets slow items does less of the rest: the work is not cut in
    equal shares up front."""
    items = [str(number) for number in range(parallel.MIN_INPUTS * 2)]
    parent = os.getpid()

    def work(_: str, __: Spread | None) -> int:
        time.sleep(0.004 if os.getpid() == parent else 0.001)
        return os.getpid()

    results = parallel.read_all(items, work, jobs=2)
    assert results.count(parent) < len(items) / 3


def test_without_a_temporary_file_one_process_does_it_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers hand their results back through temporary files; where none can be
    made (a read-only container), the parent reads and checks everything itself."""
    names = _files(tmp_path, parallel.MIN_INPUTS + 1)

    def refuse(*_: object, **__: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    loaded = parallel.read_all(names, lambda name, spread: _read(name, spread, "-"), jobs=2)
    assert [item.source.name for item in loaded] == names
    run = Run(loaded, Settings())
    settled = parallel.settle_all(run, range(len(loaded)), jobs=2)
    assert list(settled) == list(range(len(loaded)))


def _files(folder: Path, count: int) -> list[str]:
    names = []
    for number in range(count):
        path = folder / f"{number:03d}.yaml"
        path.write_text(UNRELATED)
        names.append(str(path))
    return names


def test_an_error_in_a_worker_is_raised_in_the_parent(tmp_path: Path) -> None:
    names = _files(tmp_path, parallel.MIN_INPUTS)
    parent = os.getpid()

    def read(name: str, _: Spread | None) -> Loaded:
        if os.getpid() != parent:
            raise ValueError(f"cannot read {Path(name).name}")
        time.sleep(0.001)  # the parent cannot take every chunk before a worker starts
        return _read(name, None, "-")

    with pytest.raises(ValueError, match=r"cannot read \d{3}\.yaml"):
        parallel.read_all(names, read, jobs=2)


def test_a_worker_that_dies_leaves_its_chunks_to_the_parent(tmp_path: Path) -> None:
    """A worker killed on the way (out of memory...) costs time, not findings: what it
    delivered is kept, what it held is done again."""
    names = _files(tmp_path, parallel.MIN_INPUTS * 2)
    first_chunk = len(parallel._chunks(len(names), 2)[0])
    parent = os.getpid()
    done = [0]  # in each process

    def read(name: str, _: Spread | None) -> tuple[Loaded, int]:
        done[0] += 1
        if os.getpid() != parent and done[0] > first_chunk:  # within its second chunk
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.001)
        return _read(name, None, "-"), os.getpid()

    results = parallel.read_all(names, read, jobs=2)
    assert [item.source.name for item, _ in results] == names
    assert {pid for _, pid in results} - {parent}  # the worker's delivered chunks count


def test_a_record_cut_short_is_never_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that dies while writing a record (disk full, killed) leaves part of it:
    the parent must not read it as a record, and does that chunk itself."""
    parent = os.getpid()
    put = parallel._Outbox.put

    def cut_short(outbox: parallel._Outbox, record: object) -> None:
        if os.getpid() == parent:
            put(outbox, record)
            return
        data = pickle.dumps(record, pickle.HIGHEST_PROTOCOL)
        os.write(outbox.file.fileno(), parallel._LENGTH.pack(len(data)) + data[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)

    monkeypatch.setattr(parallel._Outbox, "put", cut_short)

    def work(item: str, _: Spread | None) -> str:
        time.sleep(0.001)
        return item.upper()

    items = [f"item-{number}" for number in range(parallel.MIN_INPUTS)]
    assert parallel.read_all(items, work, jobs=2) == [item.upper() for item in items]


def _copies(count: int) -> list[str]:
    """`count` copies of the examples' documents, in order: copy `k` in namespace
    `team-<k % 4>`, its TrainJob named apart, so TrainJobs of one namespace share a claim
    and a checkpoint directory, and a namespace's first runtime stands for the others."""
    examples = sorted((ROOT / "examples").rglob("*.yaml"))
    documents: list[str] = []
    for number in range(count):
        for path in examples:
            text = path.read_text().replace("namespace: llm-sft-broken", "namespace: llm-sft")
            text = text.replace("namespace: llm-sft", f"namespace: team-{number % 4}")
            text = text.replace("name: sft-llama-1b", f"name: sft-llama-1b-{number}")
            documents.extend(part for part in text.split("---\n") if part.strip())
    return documents


#: Suppressions that land in a late part of a long file: a file-wide one, one on a line,
#: and one that silences nothing (TL090).
_SUPPRESSIONS = (
    "# trainlint: disable-file=TL402\n",
    "# trainlint: disable=TL401\n",
    "# trainlint: disable=TL253\n",
)


def _stream(
    path: Path, documents: list[str], suppressions: tuple[str, ...] = _SUPPRESSIONS
) -> Path:
    texts = list(documents)
    for offset, comment in enumerate(suppressions):  # in the last part, not the first
        place = len(texts) - 1 - 3 * offset
        texts[place] = comment + texts[place]
    path.write_text("---\n".join(texts))
    return path


def _check(*arguments: str) -> tuple[int, str]:
    result = subprocess.run(
        [shutil.which("trainlint") or "trainlint", "check", "--output-format", "concise",
         *arguments],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, result.stdout


def test_a_long_file_is_checked_in_slices_on_every_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One file of many documents: its slices go to every process, and the file's findings
    (suppressions settled over the whole file) are those of one process, and of the file
    read whole."""
    stream = _stream(tmp_path / "stream.yaml", _copies(COPIES))
    monkeypatch.setattr(loader, "SLICED_BYTES", 4096)
    monkeypatch.setattr(loader, "SLICE_BYTES", 4096)
    monkeypatch.setattr(checking, "MIN_BATCH_BYTES", 4096)
    monkeypatch.setattr(checking, "SPREAD_BYTES", 4096)
    read = checking._read
    outputs = []
    for jobs in (1, 2):
        pids = tmp_path / f"pids-{jobs}"

        def recorded(unit: checking.Unit, pids: Path = pids) -> tuple[object, ...]:
            """`_read`, noting each process that reads a slice."""
            assert unit.piece is not None
            with pids.open("a") as out:
                out.write(f"{os.getpid()}\n")
            return read(unit)

        monkeypatch.setattr(checking, "_read", recorded)
        outputs.append(checking.check([str(stream)], lambda _: Settings(), jobs).findings)
        readers = len(set(pids.read_text().split()))  # a second round forks anew
        assert readers == 1 if jobs == 1 else readers >= jobs
    one, two = ([(f.code, f.span, f.message, f.path, f.object) for f in found]
                for found in outputs)
    assert one == two
    whole = lint([_read(str(stream), None, "-")])
    assert one == [(f.code, f.span, f.message, f.path, f.object) for f in whole]
    codes = {code for code, *_ in one}
    # Suppressions settled over the whole file; TL201 reads runtimes and their TrainJobs.
    assert {"TL090", "TL201", "TL202"} <= codes
    assert "TL402" not in codes


def test_a_long_file_gives_the_findings_of_its_documents_in_separate_files(
    tmp_path: Path,
) -> None:
    """The same documents in one file (checked in parts, on two processes) and one per
    file (on one): the same findings, each at the same line of its document (the
    suppressions of a line, not of a file: a file-wide one silences more in one file)."""
    documents = _copies(COPIES)
    stream = _stream(tmp_path / "stream.yaml", documents, _SUPPRESSIONS[1:2])
    apart = tmp_path / "apart"
    apart.mkdir()
    starts: list[int] = []  # the line before each document's first, in the stream
    line = 0
    for number, text in enumerate(stream.read_text().split("---\n")):
        (apart / f"{number:04d}.yaml").write_text(text)
        starts.append(line)
        line += text.count("\n") + 1
    _, streamed = _check("--no-cache", "--jobs", "2", str(stream))
    _, separate = _check("--no-cache", "--jobs", "1", str(apart))

    def moved(message: str, offset: int) -> str:
        """A message that names a line, naming the stream's."""
        return re.sub(r"on line (\d+)", lambda line: f"on line {offset + int(line[1])}", message)

    def placed(output: str) -> list[tuple[int, str]]:
        """Each finding as (line in the stream, the rest of its line)."""
        found = []
        for finding in output.splitlines():
            where, _, rest = finding.partition(": ")
            if not rest:
                continue  # the summary
            name, row, column = where.rsplit(":", 2)
            offset = starts[int(Path(name).stem)] if name.startswith(str(apart)) else 0
            found.append((offset + int(row), f"{column}: {moved(rest, offset)}"))
        return sorted(found)

    assert placed(streamed) == placed(separate)
    assert len(placed(streamed)) > COPIES


def test_a_cached_long_file_is_checked_again_when_what_its_parts_read_changes(
    tmp_path: Path,
) -> None:
    """The parts' look-ups are the file's: a runtime edited in another file makes the
    long file checked again, on two processes as on one, cached or not."""
    documents = _copies(COPIES)
    runtimes = [text for text in documents[:6] if "\nkind: TrainingRuntime" in text]
    others = [text for text in documents if "\nkind: TrainingRuntime" not in text]
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "runtimes.yaml").write_text("---\n".join(runtimes))
    _stream(folder / "stream.yaml", others)
    cache = str(tmp_path / "cache")
    outputs = {}
    for step in ("cold", "warm", "edited"):
        if step == "edited":  # the TrainJobs of the stream lose their runtimes
            (folder / "runtimes.yaml").write_text(UNRELATED)
        outputs[step] = {
            how: _check(*arguments, str(folder))
            for how, arguments in (
                ("uncached", ("--no-cache", "--jobs", "1")),
                ("cached on two", ("--cache-dir", cache, "--jobs", "2")),
            )
        }
        assert outputs[step]["uncached"] == outputs[step]["cached on two"]
    streamed = {step: [line for line in output["uncached"][1].splitlines() if "stream" in line]
                for step, output in outputs.items()}
    assert streamed["edited"] != streamed["warm"] == streamed["cold"]
