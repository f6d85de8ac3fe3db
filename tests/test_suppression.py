"""Suppressions: comments on the line or above it, file-wide comments, the object
annotation, and the findings about suppressions themselves (TL090, TL091)."""

from __future__ import annotations

from tests.conftest import lint_text
from trainlint.config.settings import Settings
from trainlint.problem import Severity

#: A runtime whose only finding is TL301, on line 29 (`emptyDir:`), column 23.
RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-ckpt
spec:
  mlPolicy:
    torch: {}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  terminationGracePeriodSeconds: 120
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                      args: [--output_dir, /mnt/ckpt/run, --exit-signal-handler]
                      volumeMounts:
                        - name: ckpt
                          mountPath: /mnt/ckpt
                  volumes:
                    - name: ckpt
                      emptyDir: {}
"""
ONLY_TL3 = Settings(select=("TL301", "TL302", "TL09"))


def found(text: str, settings: Settings = ONLY_TL3) -> list[tuple[str, int, int]]:
    return [(f.code, f.span.line, f.span.column) for f in lint_text(text, settings)]


def edit(old: str, new: str, text: str = RUNTIME) -> str:
    assert old in text
    return text.replace(old, new, 1)


def annotate(value: str) -> str:
    return edit("  name: torch-ckpt\n", f"  name: torch-ckpt\n  annotations:\n    {value}\n")


def test_the_runtime_has_one_finding() -> None:
    assert found(RUNTIME) == [("TL301", 29, 23)]


def test_comment_on_the_line_silences_by_code_or_name() -> None:
    for selector in ("TL301", "ephemeral-checkpoint-volume", "tl301"):
        assert found(edit("emptyDir: {}", f"emptyDir: {{}}  # trainlint: disable={selector}")) == []


def test_comment_with_a_reason_and_several_codes() -> None:
    text = edit("emptyDir: {}", "emptyDir: {}  # trainlint: disable=TL301, TL302 -- scratch run")
    assert found(text) == [("TL090", 29, 65)]  # TL302 has nothing to silence there


def test_comment_alone_applies_to_the_next_line_that_is_not_a_comment() -> None:
    text = edit(
        "                      emptyDir: {}",
        "                      # trainlint: disable=TL301 -- smoke tests only\n"
        "                      # (they never resume)\n"
        "                      emptyDir: {}",
    )
    assert found(text) == []


def test_trailing_comment_does_not_reach_the_next_line() -> None:
    text = edit(
        "  volumes:\n                    - name: ckpt\n",
        "  volumes:\n                    - name: ckpt  # trainlint: disable=TL301\n",
    )
    assert found(text) == [("TL090", 28, 56), ("TL301", 29, 23)]


def test_comment_above_a_different_line_does_not_silence() -> None:
    text = edit("  volumes:", "  # trainlint: disable=TL301\n                  volumes:")
    assert found(text) == [("TL090", 27, 40), ("TL301", 30, 23)]


def test_file_wide_comment_anywhere_in_the_file() -> None:
    assert found(RUNTIME + "# trainlint: disable-file=TL301\n") == []


def test_annotation_silences_its_object_only() -> None:
    assert found(annotate('trainlint.dev/ignore: "TL301=smoke tests"')) == []
    other = RUNTIME + "---\n" + annotate('trainlint.dev/ignore: "TL301"').replace("torch-ckpt", "b")
    # The annotated copy is silenced; the first object still shows its finding.
    assert found(other) == [("TL301", 29, 23)]


def test_annotation_is_ignored_when_the_settings_refuse_it() -> None:
    text = annotate('trainlint.dev/ignore: "TL301,TL402"')
    refusing = Settings(select=("TL301", "TL09"), annotation_exemptions=False)
    assert found(text, refusing) == [("TL301", 31, 23)]


def test_unused_annotation_entry_is_reported_on_the_annotation() -> None:
    text = annotate('trainlint.dev/ignore: "TL301,TL302=RWX volume"')
    (finding,) = lint_text(text, ONLY_TL3)
    assert (finding.code, finding.span.line, finding.span.column) == ("TL090", 6, 5)
    assert finding.severity == Severity.WARNING
    assert finding.message == (
        "unused suppression of TL302 (rwo-volume-multi-node): it finds nothing on this object, "
        "so the suppression would hide a future finding unseen; remove it"
    )


def test_unused_comment_message_names_the_line() -> None:
    text = edit("emptyDir: {}", "emptyDir: {}  # trainlint: disable=TL301,TL302")
    (finding,) = lint_text(text, ONLY_TL3)
    assert finding.message.startswith("unused suppression of TL302 (rwo-volume-multi-node): "
                                      "it finds nothing on line 29,")


def test_suppression_of_a_rule_that_did_not_run_is_not_reported() -> None:
    text = edit("emptyDir: {}", "emptyDir: {}  # trainlint: disable=TL301,TL401")
    assert found(text) == []
    assert found(text, Settings(select=("TL301", "TL302", "TL09"), ignore=("TL301",))) == []


def test_unknown_code_and_unreadable_comment_are_tl091() -> None:
    text = edit("emptyDir: {}", "emptyDir: {}  # trainlint: disable=TL301,no-such-rule")
    findings = lint_text(text, ONLY_TL3)
    assert [(f.code, f.span.line, f.span.column) for f in findings] == [("TL091", 29, 64)]
    assert findings[0].message == (
        "suppression names `no-such-rule`, which is no rule's code or name: it silences "
        "nothing (see `trainlint rules`)"
    )
    unreadable = edit("emptyDir: {}", "emptyDir: {}  # trainlint: ignore TL301")
    assert found(unreadable) == [("TL301", 29, 23), ("TL091", 29, 37)]


def test_suppression_findings_obey_file_comments_and_selection() -> None:
    unused = edit(
        "emptyDir: {}", "persistentVolumeClaim: {claimName: c}  # trainlint: disable=TL301"
    )
    assert found(unused) == [("TL090", 29, 83)]
    assert found(unused + "# trainlint: disable-file=unused-suppression\n") == []
    assert found(unused, Settings(select=("TL301",))) == []


def test_text_in_a_quoted_value_that_is_not_a_comment_is_left_alone() -> None:
    text = edit("image: pytorch", "image: 'x#trainlint: disable=TL301' # pytorch")
    assert found(text) == [("TL301", 29, 23)]


def test_severity_override_applies_to_what_is_left() -> None:
    settings = Settings(select=("TL301",), severities={"TL301": Severity.WARNING})
    (finding,) = lint_text(RUNTIME, settings)
    assert finding.severity == Severity.WARNING
    assert settings.fails([finding])
    assert not Settings(fail_on=Severity.ERROR).fails([finding])



#: A TrainJob whose script and variable hold suppression text as their values, and whose
#: block's header line holds a real one (for a rule with nothing to silence there).
IN_VALUES = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: sft
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    command:
      - bash
      - -c
      - |  # trainlint: disable=TL402
        python train.py  # trainlint: disable=TL301
    env:
      - name: NOTE
        value: "keep this # trainlint: disable=TL302 please"
"""


def test_suppression_text_inside_a_value_is_no_suppression() -> None:
    """`# trainlint:` in a block scalar (a shell comment) or a quoted string is the
    value's text, neither read nor reported; a block's header line takes a comment."""
    assert found(IN_VALUES, Settings(select=("TL09", "TL301", "TL302", "TL402"))) == [
        ("TL090", 12, 33)]


def test_a_suppression_in_a_document_never_read_is_not_called_unused() -> None:
    """After a broken document whose flow mapping runs on, the loader reads nothing more:
    a comment there cannot be judged, and TL090 said to remove it (the finding it
    silences comes back once the file is repaired)."""
    broken = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\ndata: {}\n---\n"
    text = broken + edit("emptyDir: {}", "emptyDir: {}  # trainlint: disable=TL301")
    assert [code for code, *_ in found(text, Settings(select=("TL0", "TL301", "TL09")))] == [
        "TL001"]
