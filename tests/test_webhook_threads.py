"""The webhook's worker threads share the rules: concurrent decisions must not mix up
their objects' findings (the schema walk of one object must never answer for another)."""

from __future__ import annotations

import copy
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import pytest

from tests.conftest import ROOT
from trainlint.config.settings import Settings
from trainlint.model.k8s import Converter, resolve_version
from trainlint.model.node import Node
from trainlint.webhook import admission
from trainlint.webhook.admission import Mode

TRAINLINT = str(ROOT / "trainlint")
CLEAN = ROOT / "fixtures" / "admission-review" / "trainjob-create-clean.json"


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Threads switch as often as the interpreter allows, and between any two lines of
    trainlint's own code (a line tracer runs Python code, where CPython may switch), so
    a race shows within a second instead of once in a million requests (or only on a
    free-threaded Python)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    threading.settrace(_between_lines)
    yield
    threading.settrace(None)
    sys.setswitchinterval(before)


def _between_lines(frame: FrameType, event: str, arg: Any) -> Any:
    """Trace the lines of trainlint's modules only: the tests' own code runs untraced."""
    return _line if frame.f_code.co_filename.startswith(TRAINLINT) else None


def _line(frame: FrameType, event: str, arg: Any) -> Any:
    return _line


def race(jobs: list[Callable[[], None]], *, rounds: int, seconds: float = 60) -> list[str]:
    """Run each job in its own thread, all at once, `rounds` times or until `seconds`
    have passed or one fails; the failures seen."""
    errors: list[str] = []
    start = threading.Barrier(len(jobs))
    until = time.monotonic() + seconds

    def loop(job: Callable[[], None]) -> None:
        start.wait()
        for _ in range(rounds):
            if errors or time.monotonic() > until:
                return
            try:
                job()
            except AssertionError as error:
                errors.append(str(error))

    threads = [threading.Thread(target=loop, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(seconds + 30)
    return errors


def review_with_unknown_field(field: str, variables: int) -> admission.Review:
    review = json.loads(CLEAN.read_text())
    review["request"]["uid"] = f"uid-{field}"
    trainer = review["request"]["object"]["spec"]["trainer"]
    trainer[field] = 1
    trainer["env"] += [{"name": f"V{index}", "value": "1"} for index in range(variables)]
    return admission.parse(json.dumps(review).encode())


@pytest.mark.usefixtures("fast_switching")
def test_concurrent_decisions_keep_their_own_schema_findings() -> None:
    """Two worker threads decide two objects with different unknown fields, over and
    over: each answer names its own field only."""
    settings = Settings(select=("TL005", "TL006", "TL007", "TL008", "TL009"))

    def decider(field: str, variables: int) -> Callable[[], None]:
        # Objects of different sizes: the two threads' walks drift against each other
        # instead of running in lockstep.
        review = review_with_unknown_field(field, variables)

        def decide() -> None:
            decision = admission.decide(copy.copy(review), settings, Mode.ENFORCE)
            messages = [finding.message for finding in decision.findings]
            unknown = {m.split("`")[1] for m in messages if m.startswith("unknown field")}
            assert unknown == {field}, messages

        return decide

    assert race([decider("numWorkers", 0), decider("numGpus", 3)],
                rounds=100_000, seconds=3) == []


@pytest.mark.usefixtures("fast_switching")
def test_kubernetes_definitions_are_seen_only_once_complete() -> None:
    """Definitions are converted on first use; a thread must never see one half filled
    (it would check the object against `any` and miss every finding below it)."""
    version = resolve_version("1.33")
    name = "io.k8s.api.core.v1.PodSpec"

    def converts(converter: Converter) -> Callable[[], None]:
        def look() -> None:
            node = converter.definition(name, embedded=True)
            assert node.type == "object" and "containers" in node.fields, node.type

        return look

    for _ in range(20):
        fresh = Converter(version)
        errors = race([converts(fresh), converts(fresh)], rounds=1)
        assert errors == []
        containers = fresh.definition(name, embedded=True).fields["containers"]
        assert isinstance(containers, Node) and containers.items is not None
