"""What a hostile repository can put in a checked folder: named pipes, devices, huge files
and links out of the tree. Each is reported, never hangs the run, never fills memory and
never reaches the report's code frames; the other files are checked."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_cli import CLEAN, ENV
from trainlint.files import MAX_FILE_BYTES, NotRegular, read_bytes

TRAINLINT = shutil.which("trainlint") or "trainlint"
#: Long enough for a slow machine, short enough that a hang fails the test.
TIMEOUT = 60


def check(
    *args: str, cwd: Path, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [TRAINLINT, "check", "--isolated", "--select", "TL0", *args],
        cwd=cwd, input=stdin, capture_output=True, timeout=TIMEOUT, check=False,
        env={**ENV, **(env or {})},
    )
    return subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode(), result.stderr.decode()
    )


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A folder with a FIFO, links to two endless devices, and a clean manifest."""
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "urandom.yaml").symlink_to("/dev/urandom")
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    (tmp_path / "clean.yaml").write_text(CLEAN)
    (tmp_path / "broken.yaml").write_text("kind: Pod\na: [\n")
    return tmp_path


@pytest.mark.parametrize("cache", [[], ["--no-cache"]])
def test_special_files_are_reported_not_opened(hostile: Path, cache: list[str]) -> None:
    """A read of the FIFO would wait for a writer forever, one of the devices would never
    end; they are reported like an unreadable file (as ruff does), and the run goes on."""
    for _ in range(2):  # with the cache: cold, then warm
        result = check(*cache, "--output-format", "concise", ".", cwd=hostile)
        assert result.returncode == 1, result.stderr
        assert result.stdout.splitlines() == [
            "broken.yaml:3:1: TL001 [error] invalid YAML: did not find expected node content "
            "(while parsing a flow node): kubectl and the API server reject this document "
            "[invalid-yaml]",
            "pipe.yaml:1:1: TL001 [error] cannot read the file: it is a named pipe (FIFO), "
            "not a regular file [invalid-yaml]",
            "urandom.yaml:1:1: TL001 [error] cannot read the file: it is a character device, "
            "not a regular file [invalid-yaml]",
            "zero.yaml:1:1: TL001 [error] cannot read the file: it is a character device, "
            "not a regular file [invalid-yaml]",
            "Found 4 problems (4 errors).",
        ]


def test_a_named_fifo_does_not_block(hostile: Path) -> None:
    result = check("--output-format", "concise", "pipe.yaml", "clean.yaml", cwd=hostile)
    assert result.returncode == 1
    assert result.stdout.startswith("pipe.yaml:1:1: TL001 [error] cannot read the file: it is a")


def test_a_file_swapped_for_a_fifo_after_its_stat_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the look before opening and the open, the name may be pointed at a FIFO:
    the open does not wait (a blocking one would hang here) and the look after refuses."""
    regular = tmp_path / "regular.yaml"
    regular.write_text(CLEAN)
    pipe = tmp_path / "pipe.yaml"
    os.mkfifo(pipe)
    looked = regular.stat()
    monkeypatch.setattr(os, "stat", lambda _: looked)  # the look before: a regular file
    with pytest.raises(NotRegular, match="named pipe"):
        read_bytes(pipe)


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    """An input over 32 MiB is not read (checking takes about ten times its size), from
    a folder or from stdin; the other files are checked."""
    with (tmp_path / "huge.yaml").open("wb") as huge:  # sparse: no disk is used
        huge.truncate(MAX_FILE_BYTES + 1)
    (tmp_path / "broken.yaml").write_text("kind: Pod\na: [\n")
    result = check("--output-format", "concise", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines()[1:] == [
        "huge.yaml:1:1: TL003 [error] the file is larger than 32 MiB: it is not read, nor "
        "checked [document-too-complex]",
        "Found 2 problems (2 errors).",
    ]
    piped = check("--output-format", "concise", "-", cwd=tmp_path,
                  stdin=b"#" * (MAX_FILE_BYTES + 1))
    assert piped.stdout.startswith("<stdin>:1:1: TL003 [error] the file is larger than 32 MiB")


def test_the_size_a_file_states_is_not_trusted() -> None:
    """A file of `/proc` says it is empty; it is read to its end all the same."""
    assert Path("/proc/self/status").stat().st_size == 0
    assert b"\nPid:" in read_bytes("/proc/self/status")


def test_code_frames_never_quote_a_file_outside_the_tree(tmp_path: Path) -> None:
    """A link in the checked folder to `/proc/self/environ` (or any secret) is checked,
    but the `full` format shows no code frame for it: the CI log would show the
    environment. Files in the tree keep their frames."""
    tree = tmp_path / "repo"
    tree.mkdir()
    (tree / "environ.yaml").symlink_to("/proc/self/environ")
    outside = tmp_path / "secrets.yaml"
    outside.write_text("kind: Secret\ntoken: s3cr3t-value\n  bad: [\n")
    (tree / "secrets.yaml").symlink_to(outside)
    (tree / "broken.yaml").write_text("kind: Pod\nvisible: b: c\n")
    (tree / "inner.yaml").symlink_to("broken.yaml")  # a link inside the tree is quoted
    marker = "a-value-only-the-environment-holds"
    # (Read as a manifest only where a variable shows an object's key.)
    result = check("--output-format", "full", ".", cwd=tree,
                   env={"MARKER": marker, "SHOWN": "a kind: Pod"})
    assert result.returncode == 1
    assert marker not in result.stdout
    assert "s3cr3t" not in result.stdout
    assert result.stdout.count("2 | visible: b: c") == 2  # broken.yaml and inner.yaml
    # At the first NUL, after the first variable: where it is, not at 1:1.
    assert re.search(r"environ\.yaml:1:\d+: TL001 \[error\] invalid YAML: the character "
                     r"#x0000 is not allowed", result.stdout)
    assert "secrets.yaml:3:6: TL001 [error] invalid YAML: mapping values are not allowed" in (
        result.stdout
    )


def test_a_command_too_deep_for_the_python_parser_is_no_crash(tmp_path: Path) -> None:
    """A runtime whose inline Python nests past what `ast.parse` takes (it raises
    MemoryError, not SyntaxError): its command says nothing, and every file is checked."""
    program = "python - <<PY\n" + "-" * 100_000 + "1\nPY\n"
    deep = CLEAN.replace("name: torch-ckpt", "name: deep").replace(
        "args: [--output_dir, /mnt/ckpt/run, --exit-signal-handler]",
        f"command: [bash, -c, {json.dumps(program)}]",
    )
    assert "<<PY" in deep
    (tmp_path / "deep.yaml").write_text(deep)
    (tmp_path / "clean.yaml").write_text(CLEAN)
    result = subprocess.run(
        [TRAINLINT, "check", "--isolated", "--no-cache", "--output-format", "json", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT, check=False, env=ENV,
    )
    assert result.returncode == 1, result.stderr
    found = sorted((f["file"], f["line"], f["code"]) for f in json.loads(result.stdout))
    # the runtimes' own findings, the deep one's command read for nothing
    assert found == [("clean.yaml", 23, "TL308"), ("clean.yaml", 29, "TL305"),
                     ("deep.yaml", 29, "TL305")]


def test_quantities_and_counts_no_cluster_reads_are_no_crash(tmp_path: Path) -> None:
    """NaN and infinity, a quantity that rounds to a million digits, 5,000 digits, a
    superscript digit: in resources and in the trainer's settings, each is no number,
    and the run ends with the findings of what is still judged."""
    big = "9" * 5000
    (tmp_path / "job.yaml").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\n"
        "kind: TrainJob\n"
        "metadata: {name: odd}\n"
        "spec:\n"
        "  runtimeRef: {name: torch-distributed}\n"
        "  trainer:\n"
        "    numNodes: 2\n"
        f'    args: [--output_dir, /mnt/out, --save_steps, "²", --max_steps, "{big}"]\n'
        "    resourcesPerNode:\n"
        '      requests: {cpu: .nan, memory: "1e999999", nvidia.com/gpu: "²"}\n'
        f'      limits: {{cpu: .inf, memory: "1e999999", nvidia.com/gpu: "{big}"}}\n'
    )
    result = subprocess.run(
        [TRAINLINT, "check", "--isolated", "--no-cache", "--output-format", "json", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT, check=False, env=ENV,
    )
    assert result.returncode == 1, result.stderr
    assert sorted((f["line"], f["code"]) for f in json.loads(result.stdout)) == [
        (8, "TL301"), (10, "TL008"), (10, "TL262")]
