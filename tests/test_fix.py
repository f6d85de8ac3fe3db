"""`trainlint check --fix` through the installed command: bytes written, exit codes, and
the files it must not touch."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, UPDATE
from trainlint import fix
from trainlint.engine import lint
from trainlint.loader import load

TRAINLINT = shutil.which("trainlint") or "trainlint"
GOLDEN = ROOT / "fixtures" / "fix"
FIXED_CODES = ("TL201", "TL202", "TL401", "TL402")


def run(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TRAINLINT, "check", "--isolated", "--output-format", "concise", *args],
        cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120, check=False,
    )


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    path = tmp_path / "finetune.yaml"
    shutil.copyfile(GOLDEN / "finetune.yaml", path)
    return path


def test_fix_matches_golden_and_converges(manifest: Path) -> None:
    result = run("--fix", manifest.name, cwd=manifest.parent)
    expected = GOLDEN / "finetune.fixed.yaml"
    if UPDATE:
        expected.write_bytes(manifest.read_bytes())
    assert manifest.read_bytes() == expected.read_bytes()
    assert result.returncode == 1, result.stderr  # TL308 is left: it has no fix
    assert "Fixed 4 problems." in result.stderr
    assert not any(f" {code} " in result.stdout for code in FIXED_CODES), result.stdout
    again = run("--fix", manifest.name, cwd=manifest.parent)
    assert manifest.read_bytes() == expected.read_bytes()
    assert "Fixed" not in again.stderr


def test_only_fixed_lines_change(manifest: Path) -> None:
    """Other documents, separators, `...`, flow spacing and comments stay byte for byte."""
    original = manifest.read_text().splitlines()
    run("--fix", manifest.name, cwd=manifest.parent)
    fixed = manifest.read_text().splitlines()
    assert fixed[:32] == original[:32]  # header comments, the PVC with `[ ReadWriteMany ]`
    assert "..." in fixed
    assert [line for line in original if line not in fixed] == [
        "                metadata:",
        "                  labels:",
        f"{' ' * 20}trainer.kubeflow.org/trainjob-ancestor-step: trainer   # moved here by mistake",
        "                            env:   # the token is mounted by the platform",
        "                              - name: HF_TOKEN_PATH",
        '                                value: "/secrets/hf/token"',
    ]
    comments = [line.split("#", 1)[1] for line in original if "#" in line]
    assert all(any(comment in line for line in fixed) for comment in comments)


def test_diff_writes_nothing(manifest: Path) -> None:
    before = manifest.read_bytes()
    result = run("--diff", manifest.name, cwd=manifest.parent)
    assert result.returncode == 1
    assert result.stdout.startswith("--- a/finetune.yaml\n+++ b/finetune.yaml\n")
    assert "+              backoffLimit: 0\n" in result.stdout
    assert manifest.read_bytes() == before
    clean = manifest.parent / "clean.yaml"
    shutil.copyfile(GOLDEN / "finetune.fixed.yaml", clean)
    nothing = run("--diff", clean.name, cwd=manifest.parent)
    assert (nothing.returncode, nothing.stdout) == (0, "")


def test_stdin_prints_the_fixed_document(manifest: Path) -> None:
    result = run("--fix", "-", "--stdin-filename", "finetune.yaml", cwd=manifest.parent,
                 stdin=manifest.read_text())
    assert result.stdout == (GOLDEN / "finetune.fixed.yaml").read_text()
    assert "TL308" in result.stderr  # the report goes to stderr


def test_fix_only_and_show_fixes(manifest: Path) -> None:
    result = run("--fix-only", "--show-fixes", manifest.name, cwd=manifest.parent)
    assert result.returncode == 0
    assert result.stdout == ""
    assert "    1 × TL401 (backoff-limit-fights-max-restarts) fixed" in result.stderr


def test_template_files_are_never_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "chart.yaml"
    text = (GOLDEN / "finetune.yaml").read_text()
    text = text.replace("'ghcr.io/example/sft-trainer:1.4.0'", "'{{ .Values.image }}'")
    path.write_text(text)
    result = run("--fix", path.name, cwd=tmp_path)
    assert path.read_text() == text
    assert "chart.yaml: not fixed: it contains template syntax" in result.stderr
    assert result.returncode == 1


def test_unsafe_fix_needs_the_flag(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    text = (
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: sft}\n"
        "spec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n"
        "    env: [{name: LR, value: '0.1'}]\n  podTemplateOverrides:\n"
        "    - targetJobs: [{name: node}]\n      spec:\n        containers:\n"
        "          - name: node\n            env: [{name: LR, value: '0.2'}]\n"
    )
    path.write_text(text)
    safe = run("--fix", "--show-fixes", "--trainer-version", "2.1", path.name, cwd=tmp_path)
    assert path.read_text() == text
    assert "TL202 not fixed: move the variables to `spec.trainer.env` (unsafe: `LR`" in (
        safe.stderr
    )
    assert "TL202 [error] `env`" in safe.stdout  # no [*]: --fix would not apply it
    run("--fix", "--unsafe-fixes", "--trainer-version", "2.1", path.name, cwd=tmp_path)
    assert "env: [{name: LR, value: '0.2'}]\n  podTemplateOverrides:" in path.read_text()


def test_unfixable_config(manifest: Path) -> None:
    (manifest.parent / ".trainlint.toml").write_text('unfixable = ["TL401"]\n')
    result = subprocess.run(
        [TRAINLINT, "check", "--fix", "--output-format", "concise", manifest.name],
        cwd=manifest.parent, capture_output=True, text=True, timeout=120, check=False,
    )
    assert "backoffLimit" not in manifest.read_text()
    assert "TL401 [warning] job `node`" in result.stdout
    assert "Fixed 3 problems." in result.stderr


def test_mode_is_kept(manifest: Path) -> None:
    manifest.chmod(0o640)
    run("--fix", manifest.name, cwd=manifest.parent)
    assert stat.S_IMODE(manifest.stat().st_mode) == 0o640


def test_failed_write_leaves_the_original(
    manifest: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash mid-write (here: fsync fails) leaves the file as it was, and no litter."""
    original = manifest.read_bytes()

    def crash(_: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(OSError, match="No space"):
        fix.write(manifest, original.decode(), "replaced: true\n")
    assert manifest.read_bytes() == original
    assert sorted(path.name for path in manifest.parent.iterdir()) == ["finetune.yaml"]


def test_changed_on_disk_is_not_overwritten(manifest: Path) -> None:
    read = manifest.read_text()
    manifest.write_text(read + "# edited meanwhile\n")
    with pytest.raises(fix.Unfixable, match="changed on disk"):
        fix.write(manifest, read, "replaced: true\n")
    assert manifest.read_text().endswith("# edited meanwhile\n")


def test_merge_keeps_what_the_dump_would_respace() -> None:
    original = ["a: [ 1, 2 ]\n", "b:    c\n", "d: 1\n", "...\n"]
    before = ["a: [1, 2]\n", "b: c\n", "d: 1\n"]
    after = ["a: [1, 2]\n", "b: c\n", "d: 2\n", "e: 3\n"]
    assert fix.merge(original, before, after) == [
        "a: [ 1, 2 ]\n", "b:    c\n", "d: 2\n", "e: 3\n", "...\n",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a:\n  b:\n  - x\n", (2, 0)), ("a:\n    b:\n      - x\n", (4, 2))],
)
def test_indentation(text: str, expected: tuple[int, int]) -> None:
    assert fix.indentation(text) == expected


def test_crlf_and_unparsable_input() -> None:
    text = (GOLDEN / "finetune.yaml").read_text().replace("\n", "\r\n")
    findings = [f for f in lint([load(text, "x")]) if f.fix]
    fixed, applied = fix.apply(text, findings)
    assert applied and "\r\n" in fixed and "\n" not in fixed.replace("\r\n", "")
    with pytest.raises(fix.Unfixable, match="round-trip parser"):
        fix.apply("a: [\n", findings)


# --- what `--fix` must never do: change an untouched byte, or take unbounded time ---

#: The lines of the golden manifest that its fix changes (see `test_only_fixed_lines_change`).
CHANGED_LINES = 6


def bomb(levels: int) -> str:
    """A document of `levels` lists of ten aliases of the list before: 10**levels nodes."""
    rows = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    rows += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]" for n in range(1, levels)]
    return "\n".join(rows) + "\n"


def test_an_alias_bomb_in_another_document_does_not_stall_the_fix(manifest: Path) -> None:
    """The check that the spliced text loads to the fixed data compares each pair of
    shared containers once: `==` walked all 10**12 expansions of the bomb (hours)."""
    manifest.write_text(manifest.read_text() + "---\n" + bomb(12))
    result = run("--diff", manifest.name, cwd=manifest.parent)
    assert result.returncode == 1, result.stderr
    assert "+              backoffLimit: 0\n" in result.stdout
    assert "l11" not in result.stdout  # the bomb is not touched
    assert "TL003" not in result.stderr  # (the report goes to stdout with --diff)


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_line_endings_are_kept_line_by_line(manifest: Path, ending: str) -> None:
    """In a file of mixed endings (here every other line), untouched lines keep their own
    and new lines take the most common one; a file of `\\r` alone keeps `\\r`."""
    lines = manifest.read_text().splitlines(keepends=True)
    if ending == "\r\n":  # mixed: CRLF on even lines, LF on odd ones, CRLF the most
        lines = [line.replace("\n", "\r\n") if n % 2 == 0 else line for n, line in enumerate(lines)]
        lines[1] = lines[1].replace("\n", "\r\n")
    else:
        lines = [line.replace("\n", "\r") for line in lines]
    manifest.write_bytes("".join(lines).encode())
    run("--fix", manifest.name, cwd=manifest.parent)
    fixed = manifest.read_bytes().decode()
    fixed_lines = fixed.splitlines(keepends=True)
    assert len([line for line in lines if line not in fixed_lines]) == CHANGED_LINES
    added = [line for line in fixed_lines if line not in lines]
    assert added and all(line.endswith(ending) and "\n" not in line[:-2] for line in added)
    expected = (GOLDEN / "finetune.fixed.yaml").read_text()
    assert fixed.replace("\r\n", "\n").replace("\r", "\n") == expected


def test_stdin_keeps_its_byte_order_mark(manifest: Path) -> None:
    result = subprocess.run(
        [TRAINLINT, "check", "--isolated", "--fix", "-", "--stdin-filename", "finetune.yaml"],
        cwd=manifest.parent, input=b"\xef\xbb\xbf" + manifest.read_bytes(),
        capture_output=True, timeout=120, check=False,
    )
    assert result.stdout == b"\xef\xbb\xbf" + (GOLDEN / "finetune.fixed.yaml").read_bytes()
