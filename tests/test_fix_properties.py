"""Property tests of fixing: on generated runtimes with comments in random places, a fix
keeps every original line that is not part of an edited node, keeps every comment,
produces YAML that loads, and a second fix changes nothing."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainlint.config.settings import Settings
from trainlint.document import Loaded
from trainlint.engine.run import lint
from trainlint.finding import Finding
from trainlint.fix import fix_all
from trainlint.loader import load

LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"


def _runtime(restarts: int, backoff: int | None, labelled: bool, grace: int | None) -> list[str]:
    lines = [
        "apiVersion: trainer.kubeflow.org/v1alpha1",
        "kind: ClusterTrainingRuntime",
        "metadata:",
        "  name: torch",
        "spec:",
        "  template:",
        "    spec:",
        f"      failurePolicy: {{maxRestarts: {restarts}}}",
        "      replicatedJobs:",
        "        - name: node",
        "          template:",
    ]
    if labelled:
        lines += ["            metadata:", "              labels:", f"{' ' * 16}{LABEL}: trainer"]
    lines += ["            spec:"]
    if backoff is not None:
        lines += [f"              backoffLimit: {backoff}"]
    lines += ["              template:", "                spec:"]
    if grace is not None:
        lines += [f"                  terminationGracePeriodSeconds: {grace}"]
    lines += [
        "                  containers:",
        "                    - name: node",
        "                      image: busybox",
        "                      args: [--output_dir, /ckpt/run, --exit-signal-handler]",
        "                      volumeMounts: [{name: ckpt, mountPath: /ckpt}]",
        "                  volumes:",
        "                    - name: ckpt",
        "                      persistentVolumeClaim: {claimName: ckpt}",
    ]
    return lines


@st.composite
def commented_runtimes(draw: st.DrawFn) -> str:
    lines = _runtime(
        draw(st.integers(0, 3)), draw(st.sampled_from([None, 0, 2])), draw(st.booleans()),
        draw(st.sampled_from([None, 10, 90])),
    )
    for number in draw(st.lists(st.integers(0, len(lines) - 1), max_size=6, unique=True)):
        lines[number] += f"  # note {number}"
    for number in sorted(draw(st.lists(st.integers(1, len(lines) - 1), max_size=4,
                                       unique=True)), reverse=True):
        indent = len(lines[number]) - len(lines[number].lstrip(" -"))
        lines.insert(number, " " * indent + f"# above {number}")
    separator = draw(st.sampled_from(["", "---\n"]))
    return separator + "\n".join(lines) + "\n" + "---\n# second document\nkind: X\n"


def _fix(text: str) -> str:
    def relint(inputs: list[Loaded]) -> list[Finding]:
        return lint(inputs, Settings())

    loaded, _, _ = fix_all([load(text, "gen.yaml")], relint, lambda f: bool(f.fix and f.fix.safe))
    return loaded[0].source.text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commented_runtimes())
def test_fix_keeps_lines_and_comments_and_converges(text: str) -> None:
    fixed = _fix(text)
    assert list(yaml.safe_load_all(fixed))
    edited = {"backoffLimit", "terminationGracePeriodSeconds", "metadata", "labels", LABEL}
    added = iter(fixed.splitlines())
    for line in text.splitlines():  # the other original lines, in order, all still there
        if line.split(":")[0].strip() not in edited:
            assert any(candidate == line for candidate in added), (line, fixed)
    new = set(fixed.splitlines()) - set(text.splitlines())
    assert {line.split(":")[0].strip() for line in new} <= edited, new
    comments = [line.split("#", 1)[1] for line in text.splitlines() if "#" in line]
    assert all(comment in fixed for comment in comments)
    assert _fix(fixed) == fixed
