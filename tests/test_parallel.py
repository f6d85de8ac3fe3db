"""Checking on several processes: the same findings as one, whatever the processes meet."""

from __future__ import annotations

import json
import os
import pickle
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
from trainlint.cli import _read
from trainlint.config.settings import Settings
from trainlint.document import Loaded
from trainlint.engine.run import Run
from trainlint.run import parallel

UNRELATED = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n"


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


def test_every_process_takes_chunks_and_results_keep_their_order() -> None:
    """Items that take time: the workers and the parent share them out, and each result
    lands at its item's place."""
    items = [str(number) for number in range(parallel.MIN_INPUTS)]

    def work(item: str) -> tuple[str, int]:
        time.sleep(0.002)
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

    def work(_: str) -> int:
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
    loaded = parallel.read_all(names, lambda name: _read(name, "-"), jobs=2)
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

    def read(name: str) -> Loaded:
        if os.getpid() != parent:
            raise ValueError(f"cannot read {Path(name).name}")
        time.sleep(0.001)  # the parent cannot take every chunk before a worker starts
        return _read(name, "-")

    with pytest.raises(ValueError, match=r"cannot read \d{3}\.yaml"):
        parallel.read_all(names, read, jobs=2)


def test_a_worker_that_dies_leaves_its_chunks_to_the_parent(tmp_path: Path) -> None:
    """A worker killed on the way (out of memory...) costs time, not findings: what it
    delivered is kept, what it held is done again."""
    names = _files(tmp_path, parallel.MIN_INPUTS * 2)
    first_chunk = len(parallel._chunks(len(names), 2)[0])
    parent = os.getpid()
    done = [0]  # in each process

    def read(name: str) -> tuple[Loaded, int]:
        done[0] += 1
        if os.getpid() != parent and done[0] > first_chunk:  # within its second chunk
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.001)
        return _read(name, "-"), os.getpid()

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

    def work(item: str) -> str:
        time.sleep(0.001)
        return item.upper()

    items = [f"item-{number}" for number in range(parallel.MIN_INPUTS)]
    assert parallel.read_all(items, work, jobs=2) == [item.upper() for item in items]
