"""`trainlint check --fix` through the installed command: bytes written, exit codes, and
the files it must not touch."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, UPDATE
from trainlint import fix
from trainlint.engine.run import lint
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


def test_git_applies_the_diff_and_gets_what_fix_writes(tmp_path: Path) -> None:
    """The diff of files fixed up to a last line with no line break holds git's marker
    after that line (the next file's header ran on after it, and `git apply` refused the
    patch); so does that of a file of `\\r` line breaks, one line to git; and a name that
    is not UTF-8 is quoted as git writes it."""
    git = shutil.which("git") or pytest.skip("git is not installed")
    text = (GOLDEN / "finetune.yaml").read_text().rstrip("\n")  # its last lines are fixed
    files = {"a.yaml": text, os.fsdecode(b"b\xff.yaml"): text, "cr.yaml": text.replace("\n", "\r")}
    patched, fixed = tmp_path / "patched", tmp_path / "fixed"
    for folder in (patched, fixed):
        folder.mkdir()
        for name, content in files.items():
            try:
                (folder / name).write_bytes(content.encode())
            except OSError:
                pytest.skip("the file system takes only UTF-8 names")
    patch = tmp_path / "fix.patch"
    with patch.open("wb") as out:
        subprocess.run([TRAINLINT, "check", "--isolated", "--diff", "."], cwd=patched,
                       stdout=out, timeout=120, check=False)
    assert patch.read_bytes().count(b"\n\\ No newline at end of file\n") == 4
    assert b'\n--- "a/b\\377.yaml"\n+++ "b/b\\377.yaml"\n' in patch.read_bytes()
    subprocess.run([git, "init", "-q"], cwd=patched, check=True)
    applied = subprocess.run([git, "apply", str(patch)], cwd=patched, capture_output=True,
                             text=True, check=False)
    assert applied.returncode == 0, applied.stderr
    run("--fix", ".", cwd=fixed)
    for name, content in files.items():
        assert (patched / name).read_bytes() == (fixed / name).read_bytes() != content.encode()


def test_stdin_prints_the_fixed_document(manifest: Path) -> None:
    result = run("--fix", "-", "--stdin-filename", "finetune.yaml", cwd=manifest.parent,
                 stdin=manifest.read_text())
    assert result.stdout == (GOLDEN / "finetune.fixed.yaml").read_text()
    assert "TL308" in result.stderr  # the report goes to stderr


def test_stdin_whose_fixes_are_refused_prints_what_came_in(tmp_path: Path) -> None:
    """A filter's output replaces the file: a fix refused (a file that cannot be read
    exactly) must give back the text as it came, never nothing."""
    text = ("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: a}\n"
            "spec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n"
            '    command: ["torchrun train.py"]\n---\nkind: [\n')
    result = run("--fix", "--unsafe-fixes", "-", cwd=tmp_path, stdin=text)
    assert "not fixed" in result.stderr
    assert result.stdout == text


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


def test_json_files_are_never_rewritten_as_yaml(tmp_path: Path) -> None:
    """An edit round-trips a document as YAML: a JSON file came out with unquoted keys on
    one line, which `kubectl` reads as JSON and refuses."""
    path = tmp_path / "runtime.json"
    runtime = ROOT / "examples" / "finetune-broken" / "runtime.yaml"
    text = json.dumps(yaml.safe_load(runtime.read_text()), indent=2) + "\n"
    path.write_text(text)
    result = run("--fix", path.name, cwd=tmp_path)
    assert path.read_text() == text
    assert result.stderr.startswith(
        "runtime.json: not fixed: it is written in flow style (JSON), and an edit would write "
        "its objects as YAML, which a JSON reader refuses: fix it by hand\n")
    assert result.returncode == 1


@pytest.mark.parametrize("before", ["# a runtime\n", "%YAML 1.1\n---\n", "--- !!map\n",
                                    "kind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\n---\n"])
def test_a_document_in_flow_style_anywhere_is_not_rewritten(tmp_path: Path, before: str) -> None:
    runtime = ROOT / "examples" / "finetune-broken" / "runtime.yaml"
    text = before + json.dumps(yaml.safe_load(runtime.read_text())) + "\n"
    path = tmp_path / "runtime.yaml"
    path.write_text(text)
    result = run("--fix", path.name, cwd=tmp_path)
    assert path.read_text() == text
    assert "runtime.yaml: not fixed: it is written in flow style (JSON)" in result.stderr


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
        fix.write(manifest, original, b"replaced: true\n")
    assert manifest.read_bytes() == original
    assert sorted(path.name for path in manifest.parent.iterdir()) == ["finetune.yaml"]


def test_changed_on_disk_is_not_overwritten(manifest: Path) -> None:
    read = manifest.read_bytes()
    manifest.write_bytes(read + b"# edited meanwhile\n")
    with pytest.raises(fix.Unfixable, match="changed on disk"):
        fix.write(manifest, read, b"replaced: true\n")
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


def test_a_fix_at_a_documents_end_keeps_the_next_document(tmp_path: Path) -> None:
    """A fix that rewrites the last lines of one document leaves the next one as written:
    each document is round-tripped alone (dumped with the whole file, the comment-only
    document after it became `--- null`)."""
    head = ("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: sft}\n"
            "spec:\n  runtimeRef: {name: torch-distributed}\n")
    rest = "---\n# kept as written\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
    path = tmp_path / "job.yaml"
    path.write_text(head + "  podTemplateOverrides:\n    - targetJobs: [{name: node}]\n" + rest)
    result = run("--fix", "--unsafe-fixes", "--trainer-version", "2.2", path.name, cwd=tmp_path)
    assert "Fixed 1 problem." in result.stderr, result.stderr
    assert path.read_text() == head + (
        "  runtimePatches:\n    - manager: trainlint.dev/migrated\n      trainingRuntimeSpec:\n"
        "        template:\n          spec:\n            replicatedJobs:\n"
        "              - name: node\n") + rest


# --- what `--fix` must never do: lose an edit, change a file's owner, mode, links or
# line endings, write outside the tree, or take unbounded time ---

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


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_owner_and_group_are_kept(manifest: Path) -> None:
    os.chown(manifest, 1000, 1000)
    run("--fix", manifest.name, cwd=manifest.parent)
    assert manifest.read_bytes() == (GOLDEN / "finetune.fixed.yaml").read_bytes()
    assert (manifest.stat().st_uid, manifest.stat().st_gid) == (1000, 1000)


def test_a_read_only_file_is_refused(manifest: Path) -> None:
    """Made read-only on purpose, it is not replaced (replacing needs only the folder's
    permission, and root may write anything)."""
    manifest.chmod(0o444)
    before = manifest.read_bytes()
    result = run("--fix", manifest.name, cwd=manifest.parent)
    assert manifest.read_bytes() == before
    assert stat.S_IMODE(manifest.stat().st_mode) == 0o444
    assert "finetune.yaml: not written: it is read-only (mode 0444): make it writable first" in (
        result.stderr
    )
    assert result.returncode == 1
    assert " TL401 " in result.stdout  # what the file still holds is reported


def test_a_hard_linked_file_is_refused(manifest: Path) -> None:
    """Replacing it would leave the other name with the old text, split from this one."""
    other = manifest.parent / "other.yaml"
    os.link(manifest, other)
    before = manifest.read_bytes()
    result = run("--fix", manifest.name, cwd=manifest.parent)
    assert manifest.read_bytes() == other.read_bytes() == before
    assert manifest.stat().st_ino == other.stat().st_ino
    assert "finetune.yaml: not written: it has 2 hard links, which replacing it would split" in (
        result.stderr
    )


def test_a_link_out_of_the_tree_is_written_only_when_asked(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "finetune.yaml"
    outside.parent.mkdir()
    shutil.copyfile(GOLDEN / "finetune.yaml", outside)
    tree = tmp_path / "repo"
    tree.mkdir()
    (tree / "linked.yaml").symlink_to(outside)
    before = outside.read_bytes()
    refused = run("--fix", ".", cwd=tree)
    assert outside.read_bytes() == before
    assert (
        "linked.yaml: not written: it is a symbolic link to a file outside the folders "
        "checked (`--write-outside-tree` writes it)"
    ) in refused.stderr
    assert refused.returncode == 1
    diff = run("--diff", ".", cwd=tree)
    assert (diff.returncode, diff.stdout) == (2, "")  # its text is not shown either
    run("--fix", "--write-outside-tree", ".", cwd=tree)
    assert outside.read_bytes() == (GOLDEN / "finetune.fixed.yaml").read_bytes()
    assert (tree / "linked.yaml").is_symlink()


#: Another process, an editor: told by the kernel (inotify) the moment `--fix` creates
#: its temporary file beside the manifest, it stops the fixing process (it would
#: otherwise often be done before this one is scheduled), saves the manifest, in place or
#: by renaming a new file over it, and lets the fix go on: the edit lands after the fix
#: checked the file, before it is replaced.
EDITOR = """\
import ctypes, os, signal, struct, sys
folder, name, how = sys.argv[1:]
libc = ctypes.CDLL(None, use_errno=True)
watch = libc.inotify_init1(0)
assert watch >= 0 and libc.inotify_add_watch(watch, folder.encode(), 0x100) >= 0  # IN_CREATE
print("ready", flush=True)
fixing = int(sys.stdin.readline())
created = False
while not created:
    events = os.read(watch, 65536)
    while events:
        size = struct.unpack_from("iIII", events)[3]
        created |= events[16 : 16 + size].rstrip(b"\\0").decode().startswith("." + name + ".")
        events = events[16 + size :]
def signal_fix(number):
    try:
        os.kill(fixing, number)
    except ProcessLookupError:  # the fix ended before this woke up: the edit comes after it
        pass
signal_fix(signal.SIGSTOP)
try:
    edit = b"# edited by someone else while it was being fixed\\n"
    if how == "in-place":
        with open(os.path.join(folder, name), "wb") as file:
            file.write(edit)
    else:
        with open(os.path.join(folder, "saved.tmp"), "wb") as file:
            file.write(edit)
        os.replace(os.path.join(folder, "saved.tmp"), os.path.join(folder, name))
finally:
    signal_fix(signal.SIGCONT)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the editor uses inotify")
@pytest.mark.parametrize("how", ["in-place", "renamed"])
def test_an_edit_made_while_the_fix_is_written_is_never_lost(manifest: Path, how: str) -> None:
    """A real editor in another process saves the file (in place, or by renaming a new
    file over it) while the fix is writing: after the fix's check, before its rename. The
    fix replaces the file by an atomic exchange and checks what it replaced: the edit is
    put back (it was lost every time)."""
    caught = 0
    for attempt in range(10):  # three at least, until the edit lands in the window once
        if attempt >= 3 and caught:
            break
        shutil.copyfile(GOLDEN / "finetune.yaml", manifest)
        editor = subprocess.Popen(
            [sys.executable, "-c", EDITOR, str(manifest.parent), manifest.name, how],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        try:
            assert editor.stdin is not None and editor.stdout is not None
            assert editor.stdout.readline() == "ready\n"
            fixing = subprocess.Popen(
                [TRAINLINT, "check", "--isolated", "--fix", manifest.name],
                cwd=manifest.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
            editor.stdin.write(f"{fixing.pid}\n")
            editor.stdin.close()
            _, stderr = fixing.communicate(timeout=120)
            assert editor.wait(timeout=60) == 0
        finally:
            editor.kill()
        edited = b"# edited by someone else while it was being fixed\n"
        assert manifest.read_bytes() == edited, stderr
        assert sorted(path.name for path in manifest.parent.iterdir()) == ["finetune.yaml"]
        # Stopped after its exchange (a slow wake-up), the fix was written and then edited.
        caught += "finetune.yaml: not written: the file changed on disk while" in stderr
    assert caught  # the edit landed in the window at least once


def test_without_an_atomic_exchange_the_file_is_rechecked_before_the_rename(
    manifest: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the system cannot exchange names, the last check is made just before the
    rename, and the file is replaced whole, its mode kept."""
    monkeypatch.setattr(fix, "_exchange_call", lambda: None)
    manifest.chmod(0o640)
    original = manifest.read_bytes()
    fix.write(manifest, original, b"replaced: true\n")
    assert manifest.read_bytes() == b"replaced: true\n"
    assert stat.S_IMODE(manifest.stat().st_mode) == 0o640
    with pytest.raises(fix.Unfixable, match="changed on disk"):
        fix.write(manifest, original, b"again: true\n")
