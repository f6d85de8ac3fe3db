"""Suppressions written and removed: TL090's safe fix takes an unused code out of its
comment or annotation, and `--add-suppressions` silences every current finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import lint_text
from tests.test_cli import trainlint
from tests.test_suppression import IN_VALUES, ONLY_TL3, RUNTIME, annotate, edit
from trainlint import fix
from trainlint.config.settings import Settings

CLAIM = "persistentVolumeClaim: {claimName: ckpt}"
CLEAN = edit("emptyDir: {}", CLAIM)


def fixed(text: str, settings: Settings = ONLY_TL3) -> str:
    """`text` with the fixes of its TL090 findings applied, as one pass of `--fix` does."""
    unused = [finding for finding in lint_text(text, settings) if finding.code == "TL090"]
    assert unused and all(finding.fix and finding.fix.safe for finding in unused)
    result, applied = fix.apply(text, unused)
    assert applied == unused
    assert not [f for f in lint_text(result, settings) if f.code.startswith("TL09")]
    return result


@pytest.mark.parametrize(
    ("suppressed", "left"),
    [
        # One of two codes is unused: only it goes, the reason stays.
        ("emptyDir: {}  # trainlint: disable=TL302, TL301 -- scratch runs",
         "emptyDir: {}  # trainlint: disable=TL301 -- scratch runs"),
        # Every code is unused: the comment goes, the value stays as written.
        (f"{CLAIM}  # trainlint: disable=TL301,TL302 -- old", CLAIM),
        # A comment of its own after the value's own comment.
        (f"{CLAIM} # keep this  # trainlint: disable=TL301", f"{CLAIM} # keep this"),
    ],
)
def test_an_unused_code_leaves_its_line_comment(suppressed: str, left: str) -> None:
    assert fixed(edit("emptyDir: {}", suppressed)) == edit("emptyDir: {}", left)


def test_a_comment_alone_on_its_line_goes_with_its_line() -> None:
    indent = " " * 22
    text = edit(f"{indent}emptyDir: {{}}\n",
                f"{indent}# trainlint: disable=TL302\n{indent}emptyDir: {{}}\n")
    assert fixed(text) == RUNTIME


def test_a_file_wide_comment_goes_with_its_line() -> None:
    text = "# trainlint: disable-file=rwo-volume-multi-node\n" + CLEAN
    assert fixed(text) == CLEAN


def test_an_annotation_keeps_the_codes_still_used() -> None:
    text = annotate('trainlint.dev/ignore: "TL302=never mounted twice,TL301=scratch"')
    assert fixed(text) == annotate('trainlint.dev/ignore: "TL301=scratch"')


def test_an_annotation_reason_may_hold_commas() -> None:
    """A piece whose code would hold a blank goes on the reason before it: it is neither
    a rule no one knows (TL091) nor left behind when its code goes."""
    text = annotate(
        'trainlint.dev/ignore: "TL302=see ticket 7, its owner=ml,TL301=scratch, smoke runs"')
    assert fixed(text) == annotate('trainlint.dev/ignore: "TL301=scratch, smoke runs"')


def test_an_annotation_that_names_nothing_goes_and_so_do_empty_annotations() -> None:
    text = annotate('trainlint.dev/ignore: "TL302"').replace("emptyDir: {}", CLAIM)
    assert fixed(text) == CLEAN
    kept = annotate('trainlint.dev/ignore: "TL302"\n    team: ml').replace("emptyDir: {}", CLAIM)
    assert fixed(kept) == annotate("team: ml").replace("emptyDir: {}", CLAIM)


def test_fix_removes_unused_suppressions_through_the_command(tmp_path: Path) -> None:
    text = "# trainlint: disable-file=TL302\n" + edit(
        "emptyDir: {}", f"{CLAIM}  # trainlint: disable=TL301,TL402"
    )
    (tmp_path / "runtime.yaml").write_text(text)
    (tmp_path / ".trainlint.toml").write_text('select = ["TL301", "TL302", "TL402", "TL090"]\n')
    result = trainlint("check", "--fix", "--show-fixes", "runtime.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 × TL090 (unused-suppression) fixed" in result.stderr
    assert (tmp_path / "runtime.yaml").read_text() == CLEAN


JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: sft
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodez: 2
    command: ["python", "train.py"]
    imag: "ghcr.io/example/a
      b"
"""


def test_add_suppressions_silences_every_finding_once(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    (tmp_path / "runtime.yaml").write_text(RUNTIME)
    (tmp_path / ".trainlint.toml").write_text('select = ["TL006", "TL301", "TL09"]\n')
    result = trainlint("check", "--add-suppressions", ".", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "Added 3 suppressions.\n")
    assert (tmp_path / "job.yaml").read_text() == JOB.replace(
        "numNodez: 2\n", "numNodez: 2  # trainlint: disable=TL006\n"
    ).replace(  # the line ends inside a quoted string: the comment goes above, indented
        '    imag: "', '    # trainlint: disable=TL006\n    imag: "'
    )
    assert (tmp_path / "runtime.yaml").read_text() == edit(
        "emptyDir: {}", "emptyDir: {}  # trainlint: disable=TL301"
    )
    assert trainlint("check", "--no-cache", ".", cwd=tmp_path).returncode == 0
    again = trainlint("check", "--add-suppressions", ".", cwd=tmp_path)
    assert (again.returncode, again.stderr) == (0, "Added 0 suppressions.\n")


def test_add_suppressions_extends_a_comment_and_keeps_two_codes_on_one_line(
    tmp_path: Path
) -> None:
    text = edit("emptyDir: {}", "emptyDir: {}  # trainlint: disable=TL302")
    (tmp_path / "runtime.yaml").write_text(text)
    (tmp_path / ".trainlint.toml").write_text('select = ["TL301", "TL302"]\n')
    result = trainlint("check", "--add-suppressions", "runtime.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "runtime.yaml").read_text() == edit(
        "emptyDir: {}", "emptyDir: {}  # trainlint: disable=TL302,TL301"
    )


def test_add_suppressions_does_not_combine_with_fixing(tmp_path: Path) -> None:
    (tmp_path / "runtime.yaml").write_text(RUNTIME)
    result = trainlint("check", "--add-suppressions", "--fix", "runtime.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert "--add-suppressions writes files: it does not combine with fixing" in result.stderr
    assert (tmp_path / "runtime.yaml").read_text() == RUNTIME


def test_suppression_text_inside_a_value_is_neither_extended_nor_fixed(tmp_path: Path) -> None:
    """A quoted value that holds `# trainlint: disable=...` gets a comment of its own (it
    was extended inside the string, a file no longer YAML), and `--fix` leaves a script's
    shell comment alone (TL090's fix took codes out of the script)."""
    typo = 'apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: sft}\n' \
        'spec:\n  trainer:\n    imagee: "img # trainlint: disable=TL301"\n'
    (tmp_path / "job.yaml").write_text(typo)
    (tmp_path / "script.yaml").write_text(IN_VALUES)
    (tmp_path / ".trainlint.toml").write_text('select = ["TL006", "TL09", "TL301", "TL402"]\n')
    result = trainlint("check", "--add-suppressions", "job.yaml", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "Added 1 suppression.\n")
    assert (tmp_path / "job.yaml").read_text() == typo.replace(
        'TL301"\n', 'TL301"  # trainlint: disable=TL006\n')
    fixing = trainlint("check", "--no-cache", "--fix", "script.yaml", cwd=tmp_path)
    assert (tmp_path / "script.yaml").read_text() == IN_VALUES.replace(
        "  # trainlint: disable=TL402", "")  # the header's comment, unused, goes
    assert (fixing.returncode, fixing.stdout, fixing.stderr) == (
        0, "All checks passed.\n", "Fixed 1 problem.\n")


def test_add_suppressions_never_writes_into_a_value_nor_a_json_file(tmp_path: Path) -> None:
    """A line inside a quoted string that goes on over lines has no place for a comment,
    at its end nor above it: it is said, and the file keeps its data; a file in flow style
    (JSON) holds no comments at all."""
    quoted = ('apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n'
              '  name: a\n  annotations: {a: "x\n    y", bogus: {k: v}, c: "p\n    q"}\n'
              'spec:\n  runtimeRef:\n    name: torch-distributed\n')
    (tmp_path / "quoted.yaml").write_text(quoted)
    job = ('{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",\n'
           ' "metadata": {"name": "a"}, "spec": {"bogus": 1}}\n')
    (tmp_path / "job.json").write_text(job)
    result = trainlint("check", "--add-suppressions", "--select", "TL005,TL006", ".",
                       cwd=tmp_path)
    assert (tmp_path / "quoted.yaml").read_text() == quoted
    assert (tmp_path / "job.json").read_text() == job
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "job.json: not written: it is written in flow style (JSON), which holds no comments: "
        "use the `trainlint.dev/ignore` annotation",
        "quoted.yaml:6: TL005 not suppressed: a comment there would be part of a value",
        "Added 0 suppressions.",
    ]


def test_a_broken_document_leaves_the_values_of_the_next_one_known() -> None:
    """Past a document the parser cannot read, the values of the next are still known: a
    shell comment in its block scalar is no suppression."""
    from trainlint.suppression import values_of

    text = "a: [unclosed\n---\nargs:\n  - |\n    echo  # trainlint: disable=TL006\nb: 1\n"
    inside = values_of(text)
    assert [inside(4, 10), inside(5, 4), inside(3, 6)] == [True, False, False]
