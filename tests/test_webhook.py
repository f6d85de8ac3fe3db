"""The webhook end to end: a real TLS server on 127.0.0.1, driven by an HTTPS client that
dials like the API server (HTTP/1.1 keep-alive, the service name verified against a CA,
`?timeout=`), every answer checked with a port of the API server's own checks."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import os
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT, UPDATE
from tests.test_webhook_helpers import (
    SERVICE,
    ApiServerConnection,
    Loop,
    Serving,
    free_port,
    get,
    peak_rss,
    recorded_warnings,
    serving,
    verify_admission_response,
)
from trainlint.config.settings import Settings
from trainlint.document import UNKNOWN_SPAN, Loaded, Source
from trainlint.engine.run import lint
from trainlint.finding import Finding
from trainlint.problem import Severity
from trainlint.webhook import admission, tls
from trainlint.webhook.admission import Mode
from trainlint.webhook.connections import MAX_HEAD
from trainlint.webhook.server import (
    MAX_BODY,
    MAX_WAITING,
    BodyBudget,
    ServeOptions,
    Server,
    client_context,
    deadline_budget,
)
from trainlint.webhook.sources import DirectorySource
from trainlint.webhook.store import Store

FIXTURES = ROOT / "fixtures" / "admission-review"
CONTEXT = FIXTURES / "context"
REVIEWS = sorted(path for path in FIXTURES.glob("*.json") if ".expected" not in path.name)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> tls.SelfSigned:
    return tls.generate(tmp_path_factory.mktemp("tls"), tls.service_names("trainlint",
                                                                          "trainlint-system"))


@pytest.fixture(scope="module")
def loop() -> Iterator[Loop]:
    running = Loop()
    yield running
    running.close()


def options(certs: tls.SelfSigned, mode: Mode = Mode.ENFORCE, **changes: object) -> ServeOptions:
    base = ServeOptions(tls_cert=certs.cert, tls_key=certs.key, host="127.0.0.1", port=0,
                   metrics_port=0, mode=mode, lame_duck=0, drain=1, cert_poll=0.05)
    return replace(base, **changes)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def servers(loop: Loop, certs: tls.SelfSigned) -> Iterator[dict[Mode, Server]]:
    started = {mode: loop.start(options(certs, mode), DirectorySource(CONTEXT))
               for mode in Mode}
    deadline = time.monotonic() + 5
    while not all(server.webhook.ready() for server in started.values()):
        assert time.monotonic() < deadline, "context never synced"
        time.sleep(0.02)
    yield started
    for server in started.values():
        loop.run(server.stop(0))


#: The refusal a server gives when its event loop lags (`server.SHED_LAG`), on a machine
#: busy with other work: the rules did not run, so the answer says nothing of the object.
SHED = b"trainlint: the object was not checked: trainlint is overloaded; retry"


def ask(server: Server | Serving, ca: Path, body: bytes, **kwargs: str) -> tuple[int, bytes]:
    """One review, asked again (at most five times) while the server sheds it for a lagging
    loop, as the API server's client would retry: what these tests check is the answer."""
    for _ in range(5):
        connection = ApiServerConnection(server.port, ca)
        try:
            status, reply = connection.review(body, **kwargs)
        finally:
            connection.close()
        if SHED not in reply:
            break
        time.sleep(0.2)
    return status, reply


@pytest.mark.parametrize("path", REVIEWS, ids=[path.stem for path in REVIEWS])
def test_fixture_reviews(path: Path, servers: dict[Mode, Server], certs: tls.SelfSigned) -> None:
    """Each recorded review, in both modes, answers as its `.expected.json` says."""
    body = path.read_bytes()
    uid = json.loads(body)["request"]["uid"]
    answers = {}
    for mode, server in servers.items():
        status, reply = ask(server, certs.ca, body)
        assert status == 200
        response = verify_admission_response(uid, json.loads(reply))
        warnings = response.get("warnings", [])
        assert recorded_warnings(warnings) == warnings, "the API server would cut a warning"
        assert all(len(w) <= 120 and w.isprintable() for w in warnings)
        if not response["allowed"]:
            assert mode is Mode.ENFORCE
            assert response["status"]["code"] in {403, 400}
            assert len(response["status"]["message"]) <= 1024
            assert response["status"]["message"][:2] == "TL"
        answers[mode.value] = json.loads(reply)
    expected = path.with_suffix(".expected.json")
    if UPDATE or not expected.exists():
        expected.write_text(json.dumps(answers, indent=2) + "\n")
    assert answers == json.loads(expected.read_text())


def test_dry_run_gets_the_same_decision(servers: dict[Mode, Server], certs: tls.SelfSigned) -> None:
    create = json.loads((FIXTURES / "trainjob-create-env-override.json").read_text())
    dry = json.loads((FIXTURES / "trainjob-dryrun-env-override.json").read_text())
    assert dry["request"]["dryRun"] is True
    server = servers[Mode.ENFORCE]
    first = json.loads(ask(server, certs.ca, json.dumps(create).encode())[1])["response"]
    second = json.loads(ask(server, certs.ca, json.dumps(dry).encode())[1])["response"]
    assert first.pop("uid") != second.pop("uid")
    assert first == second
    assert first["allowed"] is False


def test_deny_message_and_warnings_stay_within_limits() -> None:
    """Many findings: the most severe first, then `and N more`; warnings capped and clean."""
    source = Source("admission:x", "")

    def finding(code: str, severity: Severity, message: str) -> Finding:
        return Finding(code, "name", severity, message, None, source, UNKNOWN_SPAN,
                       ("spec", "trainer"), None)

    findings = [finding(f"TL4{index:02d}", Severity.WARNING, f"w{index}\n" + "x" * 300)
                for index in range(30)]
    findings += [finding(f"TL2{index:02d}", Severity.ERROR, f"e{index} " + "y" * 2000)
                 for index in range(5)]
    denied = admission.judge(findings, Mode.ENFORCE)
    assert not denied.allowed and denied.code == 403
    assert denied.message.startswith("TL200: e0 ")
    assert denied.message.endswith("; and 4 more: TL201, TL202, TL203, TL204")
    assert len(denied.message) <= 1024
    advised = admission.judge(findings, Mode.ADVISE)
    assert advised.allowed
    assert advised.warnings[0].startswith("TL200: e0")
    assert len(advised.warnings) == 20
    assert advised.warnings[-1] == "trainlint: 16 more findings not shown"
    assert sum(map(len, advised.warnings)) <= 4096
    assert all(len(w) <= 120 and w.isprintable() for w in advised.warnings)
    assert recorded_warnings(list(advised.warnings)) == list(advised.warnings)


def test_exemption_annotation_can_be_turned_off() -> None:
    body = (FIXTURES / "trainjob-create-exempted.json").read_bytes()
    review = admission.parse(body)
    store = Store()
    DirectorySource(CONTEXT).load_into(store)
    assert admission.decide(review, Settings(), Mode.ENFORCE, store.context_for).allowed
    strict = Settings(annotation_exemptions=False)
    refused = admission.decide(review, strict, Mode.ENFORCE, store.context_for)
    assert not refused.allowed
    assert refused.message.startswith("TL202")


def test_context_folder_skips_what_is_no_regular_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A FIFO in the mounted folder is reported and passed over, never opened: opening it
    would wait for a writer forever and the context would never load."""
    for name in ("runtimes.yaml", "storage.yaml"):
        shutil.copy(CONTEXT / name, tmp_path / name)
    os.mkfifo(tmp_path / "pipe.yaml")
    store = Store()
    loaded = threading.Thread(target=DirectorySource(tmp_path).load_into, args=(store,),
                              daemon=True)
    with caplog.at_level(logging.WARNING, logger="trainlint.webhook"):
        loaded.start()
        loaded.join(10)
    assert not loaded.is_alive()
    expected = Store()
    DirectorySource(CONTEXT).load_into(expected)
    assert store.sizes()["ClusterTrainingRuntime"] == expected.sizes()["ClusterTrainingRuntime"] > 0
    [record] = [json.loads(r.getMessage()) for r in caplog.records]
    assert record == {"event": "context-file-skipped", "file": str(tmp_path / "pipe.yaml"),
                      "reason": "it is a named pipe (FIFO), not a regular file"}


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [
        (b"{}", "text/plain", 415),
        (b"not json", "application/json", 400),
        (b"[1, 2]", "application/json", 400),
        (b"[" * 100_000 + b"]" * 100_000, "application/json", 400),
        (b"\xff\xfe\x00", "application/json", 400),
    ],
    ids=["wrong-type", "not-json", "array", "deep", "binary"],
)
def test_bodies_that_are_no_json_object_get_a_4xx(
    body: bytes, content_type: str, status: int, servers: dict[Mode, Server],
    certs: tls.SelfSigned,
) -> None:
    got, reply = ask(servers[Mode.ENFORCE], certs.ca, body, content_type=content_type)
    assert got == status
    assert b"Traceback" not in reply and reply.startswith(b"trainlint: ")


def review_of(request: object, api_version: str = "admission.k8s.io/v1") -> bytes:
    return json.dumps({"apiVersion": api_version, "kind": "AdmissionReview",
                       "request": request}).encode()


@pytest.mark.parametrize(
    ("body", "uid", "message"),
    [
        (review_of({"uid": "u-beta"}, "admission.k8s.io/v1beta1"), "u-beta",
         "expected apiVersion admission.k8s.io/v1 and kind AdmissionReview"),
        (review_of({}), "", "request.uid is missing"),
        (review_of({"uid": 7}), "", "request.uid is missing"),
        (review_of(None), "", "AdmissionReview has no `request` object"),
        (b"{}", "", "expected apiVersion admission.k8s.io/v1 and kind AdmissionReview"),
    ],
    ids=["v1beta1", "no-uid", "uid-not-a-string", "no-request", "empty-object"],
)
def test_json_objects_that_are_no_review_get_an_admission_review(
    body: bytes, uid: str, message: str, servers: dict[Mode, Server], certs: tls.SelfSigned
) -> None:
    """The API server reads only AdmissionReviews: a JSON object gets one, with the
    request's uid when it has one, refused when enforcing and warned about when advising."""
    for mode, server in servers.items():
        status, reply = ask(server, certs.ca, body)
        assert status == 200
        response = verify_admission_response(uid, json.loads(reply))
        expected = f"trainlint: not an AdmissionReview v1 request: {message}"
        if mode is Mode.ENFORCE:
            assert response["allowed"] is False
            assert response["status"] == {"status": "Failure", "code": 400,
                                          "reason": "BadRequest", "message": expected}
        else:
            assert response == {"uid": uid, "allowed": True, "warnings": [expected]}


@pytest.mark.parametrize("depth", [250, 995, 100_000])
def test_deeply_nested_object_gets_an_admission_review(
    depth: int, servers: dict[Mode, Server], certs: tls.SelfSigned
) -> None:
    """An object nested deeper than Python's JSON parser goes is still answered as the
    API server expects: its uid echoed, refused as too deep (TL003) when enforcing."""
    review = json.loads((FIXTURES / "trainjob-create-clean.json").read_text())
    review["request"]["uid"] = f"deep-{depth}"
    review["request"]["object"]["spec"]["trainer"]["extra"] = "@"
    text = json.dumps(review).replace('"@"', '{"a":' * depth + "1" + "}" * depth)
    message = ("TL003: the TrainJob object under review is nested deeper than 200 levels, "
               "so no rule can check it")
    for mode, server in servers.items():
        status, reply = ask(server, certs.ca, text.encode())
        assert status == 200
        response = verify_admission_response(f"deep-{depth}", json.loads(reply))
        if mode is Mode.ENFORCE:
            assert response["allowed"] is False
            assert response["status"]["message"] == message
        else:
            assert response["allowed"] is True and response["warnings"] == [message]


def test_oversized_body_is_refused_before_it_is_read(
    servers: dict[Mode, Server], certs: tls.SelfSigned
) -> None:
    connection = ApiServerConnection(servers[Mode.ENFORCE].port, certs.ca)
    connection.putrequest("POST", "/validate?timeout=3s")
    connection.putheader("Content-Type", "application/json")
    connection.putheader("Content-Length", str(MAX_BODY + 1))
    connection.endheaders()  # not one byte of the body is sent
    response = connection.getresponse()
    assert response.status == 413
    connection.close()
    chunked = ApiServerConnection(servers[Mode.ENFORCE].port, certs.ca)
    chunks = (b"x" * 65536 for _ in range(MAX_BODY // 65536 + 2))
    chunked.request("POST", "/validate", chunks, {"Content-Type": "application/json"},
                    encode_chunked=True)
    assert chunked.getresponse().status == 413
    chunked.close()


def test_object_the_rules_cannot_read_is_denied_clearly_or_warned() -> None:
    body = (FIXTURES / "trainjob-create-unreadable.json").read_bytes()
    review = admission.parse(body)
    enforced = admission.decide(review, Settings(), Mode.ENFORCE)
    assert not enforced.allowed and enforced.message.startswith("TL004: ")
    advised = admission.decide(review, Settings(), Mode.ADVISE)
    assert advised.allowed and advised.warnings[0].startswith("TL004: ")


@pytest.mark.parametrize("operation", ["DELETE", "CONNECT"])
def test_operations_no_rule_is_about_are_allowed_untouched(operation: str) -> None:
    review = json.loads((FIXTURES / "trainjob-create-env-override.json").read_text())
    review["request"]["operation"] = operation
    decision = admission.decide(admission.parse(json.dumps(review).encode()), Settings(),
                                Mode.ENFORCE)
    assert decision.allowed and not decision.warnings and decision.reason == "skipped"


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"operation": None}, "no operation"),
        ({"operation": "PATCH"}, "operation `PATCH`"),
        ({"kind": None}, "no kind"),
        ({"kind": {"group": "", "version": "v1", "kind": "Pod"}}, "kind Pod (core API group)"),
        ({"kind": {"group": "trainer.kubeflow.org", "version": "v1alpha1",
                   "kind": "TrainJobSet"}},
         "kind TrainJobSet.trainer.kubeflow.org"),
        ({"kind": {"group": "example.com", "version": "v1", "kind": "TrainJob"}},
         "kind TrainJob.example.com"),
    ],
    ids=["no-operation", "unknown-operation", "no-kind", "core-kind", "unknown-trainer-kind",
         "trainjob-of-another-group"],
)
def test_requests_trainlint_cannot_classify_are_not_allowed_unchecked(
    change: dict[str, object], why: str, servers: dict[Mode, Server], certs: tls.SelfSigned
) -> None:
    """The webhook is registered for the three Trainer kinds on CREATE and UPDATE; a
    request that is none of these is malformed or misrouted: refused when enforcing (as
    `failurePolicy: Fail` refuses when trainlint cannot answer), warned about when
    advising, never allowed as if it had been checked."""
    review = json.loads((FIXTURES / "trainjob-create-env-override.json").read_text())
    for key, value in change.items():
        if value is None:
            del review["request"][key]
        else:
            review["request"][key] = value
    expected = (f"trainlint: not checked: {why}; trainlint checks CREATE and UPDATE of "
                "Trainer objects")
    assert len(expected) <= 120  # a warning kubectl shows whole
    for mode, server in servers.items():
        status, reply = ask(server, certs.ca, json.dumps(review).encode())
        assert status == 200
        response = verify_admission_response(review["request"]["uid"], json.loads(reply))
        if mode is Mode.ENFORCE:
            assert response["allowed"] is False
            assert response["status"] == {"status": "Failure", "code": 400,
                                          "reason": "BadRequest", "message": expected}
        else:
            assert response["allowed"] is True and response["warnings"] == [expected]


def test_update_keeps_the_old_object() -> None:
    review = admission.parse((FIXTURES / "trainjob-update-rwo-multi-node.json").read_bytes())
    assert review.operation == "UPDATE"
    assert review.old_object["metadata"]["labels"] == {"team": "vision"}
    stored = admission.stored_manifest(review)
    assert stored is not None and stored.namespace == "team-a"
    review = admission.parse((FIXTURES / "trainjob-create-clean.json").read_bytes())
    assert admission.stored_manifest(review) is None  # a CREATE has nothing stored


def answered(
    review: dict[str, Any], servers: dict[Mode, Server], certs: tls.SelfSigned
) -> dict[Mode, dict[str, Any]]:
    """The `response` each mode's server gives the review over TLS, checked as the API
    server checks it."""
    answers = {}
    for mode, server in servers.items():
        status, reply = ask(server, certs.ca, json.dumps(review).encode())
        assert status == 200
        answers[mode] = verify_admission_response(review["request"]["uid"], json.loads(reply))
    return answers


def test_update_of_an_immutable_field_is_denied_with_the_crd_message(
    servers: dict[Mode, Server], certs: tls.SelfSigned
) -> None:
    """An UPDATE over TLS that changes `spec.trainer` (immutable from v2.2): enforce denies
    it with the CRD's own message; advise warns; the same object as a CREATE passes."""
    review = json.loads((FIXTURES / "trainjob-update-immutable-trainer.json").read_text())
    answers = answered(review, servers, certs)
    denied = answers[Mode.ENFORCE]
    assert denied["allowed"] is False and denied["status"]["code"] == 403
    assert denied["status"]["message"].startswith(
        "TL012: `spec.trainer` changed: the API server rejects the update of the TrainJob "
        'with "field is immutable" (CRD rule `self == oldSelf`)'
    )
    assert denied["status"]["message"].endswith("(at spec.trainer)")
    assert answers[Mode.ADVISE]["allowed"] is True
    assert answers[Mode.ADVISE]["warnings"][0].startswith("TL012: `spec.trainer` changed")
    review["request"]["operation"] = "CREATE"
    status, reply = ask(servers[Mode.ENFORCE], certs.ca, json.dumps(review).encode())
    assert status == 200 and json.loads(reply)["response"]["allowed"] is True


def test_runtime_from_context_is_used_and_its_own_findings_are_not_charged() -> None:
    """TL302 appears only with the cached runtime and PVC; the runtime's own findings
    (reported when it was admitted) do not land on the TrainJob. (As a CREATE: the stored
    TrainJob of the recorded UPDATE has the error already, so the update would pass.)"""
    recorded = admission.parse((FIXTURES / "trainjob-update-rwo-multi-node.json").read_bytes())
    review = replace(recorded, operation="CREATE", old_object=None)
    store = Store()
    DirectorySource(CONTEXT).load_into(store)
    with_context = admission.decide(review, Settings(), Mode.ENFORCE, store.context_for)
    assert not with_context.allowed and with_context.message.startswith("TL302: ")
    runtime = store.get("ClusterTrainingRuntime", "", "torch-ckpt")
    assert runtime is not None
    del runtime.body["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["metadata"]
    store.put("ClusterTrainingRuntime", runtime.body)
    broken = store.get("ClusterTrainingRuntime", "", "torch-ckpt")
    assert broken is not None
    assert lint([Loaded(broken.source, [broken], [])])  # the runtime has findings of its own...
    decision = admission.decide(review, Settings(), Mode.ENFORCE, store.context_for)
    # ...which stay off the TrainJob's answer; TL201 here is the TrainJob's own finding
    assert {finding.file for finding in decision.findings} == {f"admission:{review.uid}"}


#: `trainjob-create-env-override.json`: `env` on container `node` in a runtime patch.
TL202_WARNING = (
    "TL202: `env` on container `node` in `runtimePatches`: the Trainer webhook denies the "
    'TrainJob ("must not have envs fo...'
)
TL202_DENIAL = (
    "TL202: `env` on container `node` in `runtimePatches`: the Trainer webhook denies the "
    'TrainJob ("must not have envs for the dataset-initializer, model-initializer, node '
    'containers"); these variables belong in `spec.trainer.env` (at spec.runtimePatches[{}]'
    ".trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec"
    ".containers[0].env)"
)
#: A runtime patch added to a TrainJob that is not suspended.
TL219_WARNING = (
    "TL219: `spec.runtimePatches` changed while the TrainJob runs: the Trainer webhook denies "
    'the update ("RuntimePatches...'
)
#: `clustertrainingruntime-update.json`: the checkpoint directory is on an emptyDir.
TL301_WARNING = (
    "TL301: checkpoint-dir `/scratch/ckpt` (env CHECKPOINT_DIR) is on emptyDir volume "
    "`scratch`: it is deleted with the po..."
)
TL301_DENIAL = (
    "TL301: checkpoint-dir `/scratch/ckpt` (env CHECKPOINT_DIR) is on emptyDir volume "
    "`scratch`: it is deleted with the pod, so a restarted run starts again from step 0 (at "
    "spec.template.spec.replicatedJobs[0].template.spec.template.spec.volumes[0].emptyDir)"
)


def stored_with_an_error(uid: str) -> dict[str, Any]:
    """An UPDATE of the TrainJob of `trainjob-create-env-override.json` (TL202), stored
    with that error: `oldObject` and `object` are the same until a test changes them."""
    review: dict[str, Any] = json.loads(
        (FIXTURES / "trainjob-create-env-override.json").read_text())
    request = review["request"]
    request.update(uid=uid, operation="UPDATE", oldObject=copy.deepcopy(request["object"]),
                   options={"apiVersion": "meta.k8s.io/v1", "kind": "UpdateOptions"})
    return review


def add_patch(job: dict[str, Any]) -> None:
    """A second patch like the first (`env` on `node`): TL202 at another path."""
    patches = job["spec"]["runtimePatches"]
    patches.append({**copy.deepcopy(patches[0]), "manager": "example.com/other"})


def test_finalizer_removal_of_an_object_being_deleted_is_never_denied(
    servers: dict[Mode, Server], certs: tls.SelfSigned
) -> None:
    """An object being deleted must lose its finalizers, or it stays Terminating: its
    UPDATEs pass in both modes, errors (even those the update brings in) coming back as
    warnings, and it is not refused when the rules could not run either."""
    review = stored_with_an_error("delete-1")
    stored, update = review["request"]["oldObject"], review["request"]["object"]
    stored["metadata"].update(finalizers=["x.io/cleanup"], deletionTimestamp="2026-08-02T09:00:00Z")
    update["metadata"].update(finalizers=[], deletionTimestamp="2026-08-02T09:00:00Z")
    answers = answered(review, servers, certs)
    assert answers[Mode.ENFORCE] == answers[Mode.ADVISE] == {
        "uid": "delete-1", "allowed": True, "warnings": [TL202_WARNING]}
    add_patch(update)  # new errors: TL202 at another path, TL219 (changed while running)
    answers = answered(review, servers, certs)
    assert answers[Mode.ENFORCE] == answers[Mode.ADVISE] == {
        "uid": "delete-1", "allowed": True, "warnings": [TL202_WARNING, TL219_WARNING]}
    shed = admission.not_checked(admission.parse(json.dumps(review).encode()), Mode.ENFORCE,
                                 "trainlint is overloaded; retry", "overloaded")
    assert shed.allowed and shed.code == 200
    assert shed.warnings == ("trainlint: the object was not checked: trainlint is overloaded; "
                             "retry",)


def test_update_that_leaves_an_existing_error_alone_is_allowed_with_a_warning(
    servers: dict[Mode, Server], certs: tls.SelfSigned
) -> None:
    """A label-only change of an object stored with an error (enforcing began after it was
    admitted, or a rule came with an upgrade): the error warns instead of denying."""
    review = stored_with_an_error("relabel-1")
    review["request"]["object"]["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] = "low"
    answers = answered(review, servers, certs)
    assert answers[Mode.ENFORCE] == answers[Mode.ADVISE] == {
        "uid": "relabel-1", "allowed": True, "warnings": [TL202_WARNING]}


def test_update_that_brings_in_an_error_is_denied_and_the_existing_one_warns(
    servers: dict[Mode, Server], certs: tls.SelfSigned
) -> None:
    """The same code at another path is another error: a second patch that sets `env` on
    `node` (the TrainJob suspended, as a patch may then change) is denied for that error
    alone, the stored patch's error coming back as a warning. Both errors are found,
    though their messages match and the webhook's objects have no spans to tell them
    apart: findings are told apart by their paths too (`Run.settle_input`)."""
    review = stored_with_an_error("new-error-1")
    stored, update = review["request"]["oldObject"], review["request"]["object"]
    for job in (stored, update):
        job["spec"]["suspend"] = True
    add_patch(update)
    answers = answered(review, servers, certs)
    assert answers[Mode.ENFORCE] == {
        "uid": "new-error-1", "allowed": False, "warnings": [TL202_WARNING],
        "status": {"status": "Failure", "code": 403, "reason": "Forbidden",
                   "message": TL202_DENIAL.format(1)},
    }
    assert answers[Mode.ADVISE] == {"uid": "new-error-1", "allowed": True,
                                    "warnings": [TL202_WARNING]}


def test_update_that_writes_another_bad_value_at_the_error_s_path_is_denied(
    servers: dict[Mode, Server], certs: tls.SelfSigned
) -> None:
    """Same code, same path, but another value there (the runtime's checkpoint volume, an
    `emptyDir` still, now in memory): the update wrote it, so it is denied
    (`admission._unchanged_errors`); the recorded label change, which leaves it as stored,
    passes."""
    review = json.loads((FIXTURES / "clustertrainingruntime-update.json").read_text())
    uid = review["request"]["uid"]
    assert answered(review, servers, certs)[Mode.ENFORCE] == {
        "uid": uid, "allowed": True, "warnings": [TL301_WARNING]}
    volume = review["request"]["object"]["spec"]["template"]["spec"]["replicatedJobs"][0][
        "template"]["spec"]["template"]["spec"]["volumes"][0]
    volume["emptyDir"] = {"medium": "Memory"}
    answers = answered(review, servers, certs)
    assert answers[Mode.ENFORCE] == {
        "uid": uid, "allowed": False,
        "status": {"status": "Failure", "code": 403, "reason": "Forbidden",
                   "message": TL301_DENIAL},
    }
    assert answers[Mode.ADVISE] == {"uid": uid, "allowed": True, "warnings": [TL301_WARNING]}


def test_the_stored_object_is_linted_only_when_an_enforced_update_has_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second lint (of `oldObject`) is paid only where it can change the answer: an
    error at a value the update left alone, and it runs that error's rule alone."""
    runs: list[str] = []

    def counted(inputs: list[Loaded], settings: Settings, **kwargs: Any) -> list[Finding]:
        team = inputs[0].manifests[0].body["metadata"].get("labels", {}).get("team", "")
        runs.append(team if team != "stored" else f"stored by {' '.join(settings.enabled)}")
        return lint(inputs, settings, **kwargs)

    monkeypatch.setattr(admission, "lint", counted)
    store = Store()
    DirectorySource(CONTEXT).load_into(store)
    review = stored_with_an_error("count-1")
    review["request"]["oldObject"]["metadata"]["labels"]["team"] = "stored"
    clean = copy.deepcopy(review)
    for job in (clean["request"]["object"], clean["request"]["oldObject"]):
        del job["spec"]["runtimePatches"]
    create = copy.deepcopy(review)
    create["request"].update(operation="CREATE", oldObject=None)
    rewritten = copy.deepcopy(review)  # the update wrote the erroneous `env` itself
    rewritten["request"]["object"]["spec"]["runtimePatches"][0]["trainingRuntimeSpec"][
        "template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"][0]["env"][0]["value"] = "changed"
    for body, mode, expected in ((review, Mode.ENFORCE, ["nlp", "stored by TL202"]),
                                 (review, Mode.ADVISE, ["nlp"]),
                                 (rewritten, Mode.ENFORCE, ["nlp"]),
                                 (clean, Mode.ENFORCE, ["nlp"]),
                                 (create, Mode.ENFORCE, ["nlp"])):
        runs.clear()
        admission.decide(admission.parse(json.dumps(body).encode()), Settings(), mode,
                         store.context_for)
        assert runs == expected


def test_deadline_budget_reads_go_durations() -> None:
    assert deadline_budget("3s") == pytest.approx(2.5)
    assert deadline_budget("1s") == pytest.approx(0.8)
    assert deadline_budget("1m") == pytest.approx(29.5)  # capped at the API server's 30 s
    assert deadline_budget("1500ms") == pytest.approx(1.2)
    assert deadline_budget("nonsense") == pytest.approx(9.5)
    assert deadline_budget(None) == pytest.approx(9.5)


def test_slow_check_is_answered_before_the_deadline(
    loop: Loop, certs: tls.SelfSigned, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large object whose check outlives `?timeout=1s` still gets an answer in time."""
    server = loop.start(options(certs), DirectorySource(CONTEXT))
    real = server.webhook._decide

    def slow(review: admission.Review) -> admission.Decision:
        time.sleep(2)
        return real(review)

    monkeypatch.setattr(server.webhook, "_decide", slow)
    review = json.loads((FIXTURES / "trainjob-create-clean.json").read_text())
    review["request"]["object"]["metadata"]["annotations"]["pad"] = "x" * 100_000
    started = time.monotonic()
    status, reply = ask(server, certs.ca, json.dumps(review).encode(), timeout="1s")
    took = time.monotonic() - started
    assert status == 200 and took < 1.0
    response = verify_admission_response(review["request"]["uid"], json.loads(reply))
    assert response["allowed"] is False
    assert "deadline" in response["status"]["message"]
    loop.run(server.stop(0))


def test_tls_policy_and_service_name(certs: tls.SelfSigned, servers: dict[Mode, Server],
                                     tmp_path: Path) -> None:
    old = ssl.create_default_context(cafile=str(certs.ca))
    old.maximum_version = ssl.TLSVersion.TLSv1_2
    connection = ApiServerConnection(servers[Mode.ENFORCE].port, certs.ca, context=old)
    with pytest.raises(ssl.SSLError):
        connection.review(b"{}")
    other = tls.generate(tmp_path, ["elsewhere"])
    with pytest.raises(tls.CertificateError, match=r"not trainlint\.trainlint-system\.svc"):
        Server(options(certs, tls_cert=other.cert, tls_key=other.key), DirectorySource(CONTEXT))


def test_probes_and_metrics(servers: dict[Mode, Server], certs: tls.SelfSigned) -> None:
    server = servers[Mode.ENFORCE]
    ask(server, certs.ca, (FIXTURES / "trainjob-create-env-override.json").read_bytes())
    assert get(server.metrics_port, "/healthz") == (200, "ok\n")
    assert get(server.metrics_port, "/readyz") == (200, "ok\n")
    status, page = get(server.metrics_port, "/metrics")
    assert status == 200
    for line in (
        'trainlint_webhook_requests_total{decision="deny",kind="TrainJob",operation="CREATE"}',
        'trainlint_webhook_findings_total{rule="TL202"}',
        'trainlint_webhook_cache_synced{kind="StorageClass"} 1.0',
        'trainlint_webhook_cache_objects{kind="ClusterTrainingRuntime"} 2.0',
        "trainlint_webhook_request_duration_seconds_bucket",
        "trainlint_webhook_in_flight_requests",
        "trainlint_webhook_certificate_expiry_timestamp_seconds",
    ):
        assert line in page


def test_metrics_can_have_a_port_of_their_own(loop: Loop, certs: tls.SelfSigned) -> None:
    """With `probe_port`, /metrics and the probes are apart: a NetworkPolicy can open
    /metrics to Prometheus alone while the kubelet still probes."""
    server = loop.start(options(certs, probe_port=free_port()), DirectorySource(CONTEXT))
    assert server.probe_port != server.metrics_port
    assert get(server.probe_port, "/readyz")[0] == 200
    assert get(server.probe_port, "/healthz") == (200, "ok\n")
    assert get(server.probe_port, "/metrics")[0] == 404
    status, page = get(server.metrics_port, "/metrics")
    assert status == 200 and "trainlint_webhook_requests_total" in page
    assert get(server.metrics_port, "/readyz")[0] == 404
    loop.run(server.stop(0))


def test_one_json_log_line_per_decision_without_the_object(
    servers: dict[Mode, Server], certs: tls.SelfSigned, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="trainlint.webhook")
    body = (FIXTURES / "trainjob-create-env-override.json").read_bytes()
    ask(servers[Mode.ENFORCE], certs.ca, body)
    lines = [json.loads(r.getMessage()) for r in caplog.records if '"uid"' in r.getMessage()]
    assert len(lines) == 1
    line = lines[0]
    assert {k: line[k] for k in ("kind", "namespace", "name", "operation", "decision")} == {
        "kind": "TrainJob", "namespace": "team-a", "name": "sft-env", "operation": "CREATE",
        "decision": "deny"}
    assert "TL202" in line["codes"] and "NCCL_DEBUG" not in json.dumps(line)


def test_log_lines_hold_a_request_s_own_strings_bounded(
    servers: dict[Mode, Server], certs: tls.SelfSigned, caplog: pytest.LogCaptureFixture
) -> None:
    """A hostile uid, namespace or name of a megabyte is cut in the log line (the answer
    still echoes the uid whole: the API server compares it)."""
    caplog.set_level("INFO", logger="trainlint.webhook")
    review = json.loads((FIXTURES / "trainjob-create-clean.json").read_text())
    huge = "u" * 500_000
    review["request"].update(uid=huge, namespace="n" * 500_000, name="x" * 500_000,
                             operation="CREATE" + "!" * 500_000)
    status, reply = ask(servers[Mode.ENFORCE], certs.ca, json.dumps(review).encode())
    assert status == 200 and json.loads(reply)["response"]["uid"] == huge
    [line] = [json.loads(r.getMessage()) for r in caplog.records if '"uid"' in r.getMessage()]
    assert line["uid"] == "u" * 250 + "..."
    for key in ("namespace", "name", "operation"):
        assert len(line[key]) == 253 and line[key].endswith("...")
    assert max(len(r.getMessage()) for r in caplog.records) < 2000


MALFORMED_HTTP = [
    b"GARBAGE\r\n\r\n",
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 20_000 + b"\r\n\r\n",
    b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
    b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Transfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nBad\x00Name: y\r\n\r\n",
    b"GET /\x7f HTTP/1.1\r\n\r\n",
]


def test_malformed_http_leaves_no_traceback_in_the_log(
    servers: dict[Mode, Server], certs: tls.SelfSigned, caplog: pytest.LogCaptureFixture
) -> None:
    """Whatever bytes a client sends (first on a connection or after a good request, over
    TLS or not), the log gets at most one line saying so, never a traceback."""
    caplog.set_level("DEBUG")
    server = servers[Mode.ENFORCE]
    body = (FIXTURES / "trainjob-create-clean.json").read_bytes()
    for raw in MALFORMED_HTTP:
        for after_a_request in (False, True):
            connection = opened(server, certs.ca)
            if after_a_request:
                assert connection.review(body)[0] == 200
            assert connection.sock is not None
            connection.sock.sendall(raw)
            connection.sock.settimeout(3)
            with contextlib.suppress(OSError):
                status = connection.sock.recv(65536).split(b" ", 2)[1]
                assert status.startswith(b"4"), (raw[:40], status)
            connection.close()
    with socket.create_connection(("127.0.0.1", server.port), 3) as plain:
        plain.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # not TLS at all
        with contextlib.suppress(OSError):
            plain.recv(1024)
    for raw in MALFORMED_HTTP:  # and the plain port of the probes and metrics
        with socket.create_connection(("127.0.0.1", server.metrics_port), 3) as plain:
            plain.sendall(raw)
            with contextlib.suppress(OSError):
                assert plain.recv(65536).split(b" ", 2)[1].startswith(b"4")
    time.sleep(0.2)
    logged = [record for record in caplog.records if record.levelno >= logging.INFO]
    assert not [record for record in caplog.records if record.exc_info or record.exc_text]
    assert all("Traceback" not in record.getMessage() for record in caplog.records)
    http = [r for r in caplog.records if r.name == "trainlint.webhook.http"]
    assert len(http) >= 3 * len(MALFORMED_HTTP) - 4  # aiohttp lets some pass with a 400
    assert all(r.levelno <= logging.WARNING for r in http)
    for line in (json.loads(r.getMessage()) for r in http):
        assert line["event"] == "bad-http" and len(line["error"]) <= 253
    assert not [r for r in logged if r.name.startswith("aiohttp")]


def test_readyz_waits_for_the_context(loop: Loop, certs: tls.SelfSigned) -> None:
    class Never:
        async def run(self, store: Store) -> None:
            await asyncio.Event().wait()

    server = loop.start(options(certs), Never())
    status, text = get(server.metrics_port, "/readyz")
    assert status == 503 and "caches not synced" in text
    loop.run(server.stop(0))


def test_slow_headers_are_cut_off(loop: Loop, certs: tls.SelfSigned) -> None:
    server = loop.start(options(certs, header_timeout=0.3), DirectorySource(CONTEXT))
    raw = socket.create_connection(("127.0.0.1", server.port), 5)
    sock = ssl.create_default_context(cafile=str(certs.ca)).wrap_socket(
        raw, server_hostname=SERVICE)
    sock.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\n")  # and never the rest
    started = time.monotonic()
    assert sock.recv(1024) == b""  # closed by the server
    assert time.monotonic() - started < 3
    sock.close()
    loop.run(server.stop(0))


def opened(server: Server, ca: Path) -> ApiServerConnection:
    """A connection with its TLS handshake done and nothing sent."""
    connection = ApiServerConnection(server.port, ca)
    connection.connect()
    return connection


def closed(sock: socket.socket | None, within: float) -> bool:
    """Whether the server closes the connection within `within` seconds."""
    assert sock is not None
    sock.settimeout(within)
    try:
        return sock.recv(1024) == b""
    except TimeoutError:
        return False
    except (ConnectionError, ssl.SSLError):
        return True


def test_idle_connections_are_dropped_at_the_header_deadline(
    loop: Loop, certs: tls.SelfSigned
) -> None:
    """A client that connects and sends nothing is dropped at the header deadline, not
    held for the keep-alive timeout, whether or not it made the TLS handshake."""
    server = loop.start(options(certs, header_timeout=0.4), DirectorySource(CONTEXT))
    started = time.monotonic()
    idle = [opened(server, certs.ca).sock for _ in range(3)]
    silent = [socket.create_connection(("127.0.0.1", server.port), 5) for _ in range(3)]
    assert all(closed(sock, 3) for sock in [*idle, *silent])
    assert time.monotonic() - started < 2
    assert server.metrics.errors.labels("header_timeout")._value.get() == 6
    assert server.connections.open == {}
    for sock in [*idle, *silent]:
        assert sock is not None
        sock.close()
    loop.run(server.stop(0))


def test_headers_past_their_limit_close_the_connection(
    loop: Loop, certs: tls.SelfSigned
) -> None:
    """A request's line and headers may take MAX_HEAD bytes: more (however slowly sent)
    close the connection at once; a long but ordinary header is no problem."""
    server = loop.start(options(certs), DirectorySource(CONTEXT))
    body = (FIXTURES / "trainjob-create-clean.json").read_bytes()
    ordinary = opened(server, certs.ca)
    ordinary.putrequest("POST", "/validate?timeout=3s")
    ordinary.putheader("Authorization", "Bearer " + "t" * 4000)
    ordinary.putheader("Content-Type", "application/json")
    ordinary.putheader("Content-Length", str(len(body)))
    ordinary.endheaders(body)
    assert ordinary.getresponse().status == 200
    stuffed = opened(server, certs.ca)
    assert stuffed.sock is not None
    stuffed.sock.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\n")
    for index in range(MAX_HEAD // 1000 + 1):
        assert not closed(stuffed.sock, 0.01)
        stuffed.sock.sendall(b"X-%d: %s\r\n" % (index, b"v" * 994))
    assert closed(stuffed.sock, 2)
    assert server.metrics.errors.labels("headers_too_large")._value.get() == 1
    ordinary.close()
    loop.run(server.stop(0))


def test_request_bodies_wait_for_room_then_are_turned_away() -> None:
    """Bodies take their size from a budget before they are read: past it a request waits
    for room until its deadline, and past the waiting room it is turned away at once."""
    async def scenario() -> list[object]:
        budget = BodyBudget(10, waiting=1)
        soon = time.monotonic() + 5
        assert await budget.take(8, soon)
        waiter = asyncio.create_task(budget.take(8, soon))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        turned_away = await budget.take(8, soon)  # the one place to wait is taken
        at_once = time.monotonic() - started < 0.02
        budget.give(8)
        got_room = await waiter
        started = time.monotonic()
        timed_out = await budget.take(3, started + 0.1)
        waited = time.monotonic() - started >= 0.1
        return [turned_away, at_once, got_room, timed_out, waited, budget.used, budget.waiting]

    assert asyncio.run(scenario()) == [False, True, True, False, True, 8, 0]


def test_idle_connections_make_room_for_new_clients(
    loop: Loop, certs: tls.SelfSigned
) -> None:
    """Past the cap, a new connection closes the one idle longest: first those that never
    sent a request, oldest first; then those kept alive, idle longest first."""
    server = loop.start(options(certs, max_connections=3), DirectorySource(CONTEXT))
    body = (FIXTURES / "trainjob-create-clean.json").read_bytes()
    kept_alive = opened(server, certs.ca)
    assert kept_alive.review(body)[0] == 200
    older, newer = opened(server, certs.ca), opened(server, certs.ca)
    first = opened(server, certs.ca)  # the cap is reached: one must go
    assert first.review(body)[0] == 200
    assert closed(older.sock, 2)
    assert not closed(newer.sock, 0.2) and not closed(kept_alive.sock, 0.2)
    second = opened(server, certs.ca)
    assert second.review(body)[0] == 200
    assert closed(newer.sock, 2)
    third = opened(server, certs.ca)  # all have been served: the one idle longest goes
    assert third.review(body)[0] == 200
    assert closed(kept_alive.sock, 2)
    assert second.review(body)[0] == 200 and first.review(body)[0] == 200
    errors = server.metrics.errors
    assert errors.labels("idle_connection_closed")._value.get() == 3
    assert errors.labels("too_many_connections")._value.get() == 0
    for connection in (kept_alive, older, newer, first, second, third):
        connection.close()
    loop.run(server.stop(0))


def test_connections_with_a_request_in_progress_are_never_closed_for_room(
    loop: Loop, certs: tls.SelfSigned
) -> None:
    """When every connection is answering a request, a new one is refused at once and
    the requests in progress still get their answers."""
    server = loop.start(options(certs, max_connections=2), DirectorySource(CONTEXT))
    body = (FIXTURES / "trainjob-create-clean.json").read_bytes()
    busy = [opened(server, certs.ca) for _ in range(2)]
    for connection in busy:
        connection.putrequest("POST", "/validate?timeout=5s")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body[:10])  # the rest of the body is still to come
    time.sleep(0.2)
    with pytest.raises((ConnectionError, ssl.SSLError)):
        opened(server, certs.ca).review(body)
    for connection in busy:
        connection.send(body[10:])
        assert connection.getresponse().status == 200
        connection.close()
    assert server.metrics.errors.labels("too_many_connections")._value.get() == 1
    loop.run(server.stop(0))


def two_pairs(folder: Path) -> tuple[tls.SelfSigned, tls.SelfSigned, tls.SelfSigned]:
    """Two certificate pairs for the service, the first mounted (`live/tls.crt` and
    `tls.key`, as a Secret volume holds them) with a CA bundle that trusts both."""
    names = tls.service_names("trainlint", "trainlint-system")
    first, second = tls.generate(folder / "a", names), tls.generate(folder / "b", names)
    live = folder / "live"
    live.mkdir()
    shutil.copy(first.cert, live / "tls.crt")
    shutil.copy(first.key, live / "tls.key")
    bundle = folder / "bundle.crt"
    bundle.write_bytes(first.ca.read_bytes() + second.ca.read_bytes())
    return first, second, tls.SelfSigned(bundle, live / "tls.crt", live / "tls.key")


def test_certificate_rotation_under_load(loop: Loop, tmp_path: Path) -> None:
    """Swap the mounted files while clients keep sending: no request fails, and new
    connections get the new certificate."""
    _, second, mounted = two_pairs(tmp_path)
    live, bundle = mounted.cert.parent, mounted.ca
    server = loop.start(options(mounted), DirectorySource(CONTEXT))
    body = (FIXTURES / "trainjob-create-clean.json").read_bytes()
    failures: list[str] = []
    served = [0]
    stop = threading.Event()

    def client(keep_alive: bool) -> None:
        connection = ApiServerConnection(server.port, bundle)
        while not stop.is_set():
            try:
                status, _ = connection.review(body)
                if status != 200:
                    failures.append(str(status))
                served[0] += 1
            except (OSError, ssl.SSLError) as error:
                failures.append(repr(error))
            if not keep_alive:
                connection.close()
                connection = ApiServerConnection(server.port, bundle)
        connection.close()

    threads = [threading.Thread(target=client, args=(index % 2 == 0,)) for index in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    # As the kubelet updates a Secret volume: new files, swapped in with a rename.
    for name, source in (("tls.key.new", second.key), ("tls.crt.new", second.cert)):
        shutil.copy(source, live / name)
    (live / "tls.key.new").replace(live / "tls.key")
    (live / "tls.crt.new").replace(live / "tls.crt")
    time.sleep(0.8)
    stop.set()
    for thread in threads:
        thread.join(10)
    assert failures == []
    assert served[0] > 20
    fresh = ApiServerConnection(server.port, second.ca)  # trusts only the new CA
    assert fresh.review(body)[0] == 200
    fresh.close()
    loop.run(server.stop(0))


def served_certificate(port: int, ca: Path, *, sni: bool = True) -> bytes:
    """A fresh handshake's certificate (DER), dialled as the API server dials (or, without
    `sni`, by address alone)."""
    context = client_context(ca)
    if not sni:
        context.check_hostname = False
    with socket.create_connection(("127.0.0.1", port), 5) as raw, context.wrap_socket(
        raw, server_hostname=SERVICE if sni else None
    ) as sock:
        der = sock.getpeercert(binary_form=True)
        assert der is not None
        return der


def der(path: Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(path.read_text())


def test_certificate_written_before_its_key_keeps_the_old_pair(
    loop: Loop, tmp_path: Path
) -> None:
    """A Secret update can land the new certificate a moment before its key. Until the
    key follows, every new handshake still gets the old, complete pair; then the new one."""
    first, second, mounted = two_pairs(tmp_path)
    live, bundle = mounted.cert.parent, mounted.ca
    server = loop.start(options(mounted), DirectorySource(CONTEXT))
    (live / "tls.crt").write_bytes(second.cert.read_bytes())  # the key is still the old one
    served = []
    until = time.monotonic() + 0.6  # a dozen polls of the files
    while time.monotonic() < until:
        served.append(served_certificate(server.port, bundle))
        served.append(served_certificate(server.port, bundle, sni=False))
    assert served and set(served) == {der(first.cert)}
    (live / "tls.key").write_bytes(second.key.read_bytes())
    deadline = time.monotonic() + 5
    while served_certificate(server.port, bundle) != der(second.cert):
        assert time.monotonic() < deadline, "the complete new pair was never served"
        time.sleep(0.02)
    assert served_certificate(server.port, second.ca, sni=False) == der(second.cert)
    loop.run(server.stop(0))


def test_sigterm_lame_duck_then_exit(tmp_path: Path) -> None:
    """The real command (its probes on a port of their own): ready, SIGTERM → not ready
    but still answering (for the two seconds of its lame duck, room for a review shed on a
    busy machine to be asked again), then exit 0."""
    with serving(tmp_path, "--context-dir", str(CONTEXT), "--mode", "enforce",
                 "--lame-duck", "2", probes_apart=True) as server:
        assert get(server.metrics_port, "/metrics")[0] == 200
        server.process.send_signal(signal.SIGTERM)
        # The signal is handled between requests: a busy machine takes a while to get there.
        deadline = time.monotonic() + 1.5
        while get(server.probe_port, "/readyz")[0] != 503 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert get(server.probe_port, "/readyz")[0] == 503
        body = (FIXTURES / "trainjob-create-env-override.json").read_bytes()
        status, reply = ask(server, server.ca, body)
        response = json.loads(reply)["response"]
        assert status == 200 and response["allowed"] is False
        assert response["status"]["message"].startswith("TL202: ")
        # The cluster (here the folder) says which runtimes exist: one that only the
        # release installs is not assumed, so nothing is denied for lacking an initializer.
        review = json.loads(body)
        review["request"]["object"]["spec"] = {
            "runtimeRef": {"name": "deepspeed-distributed"},
            "initializer": {"dataset": {"storageUri": "hf://tatsu-lab/alpaca"}},
        }
        status, reply = ask(server, server.ca, json.dumps(review).encode())
        assert status == 200 and json.loads(reply)["response"]["allowed"] is True
        assert server.process.wait(10) == 0
    assert "Traceback" not in server.stderr and '"event": "shutting-down"' in server.stderr


def test_memory_stays_inside_the_pod_limit_at_the_connection_cap(tmp_path: Path) -> None:
    """The default connection cap is sized for the Deployment's 256Mi. Filled with the
    costliest connections a client can hold (requests whose body stops coming, as many
    as may wait for room, their TLS and HTTP buffers full; the rest connected without a
    TLS handshake), and more beyond it, the server's peak memory stays under 200 MiB, and
    it answers once they are gone."""
    cap, waiting = ServeOptions().max_connections, MAX_WAITING
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 2 * cap + 512
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"{hard} open files allowed: too few for {cap} connections each side")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))
    body = (FIXTURES / "trainjob-create-clean.json").read_bytes()
    head = (f"POST /validate?timeout=30s HTTP/1.1\r\nHost: {SERVICE}\r\nContent-Type: "
            "application/json\r\nContent-Length: 3000000\r\n\r\n").encode()
    try:
        with serving(tmp_path, "--context-dir", str(CONTEXT)) as server:

            async def fill() -> float:
                context = client_context(server.ca)
                writers = []
                for _ in range(waiting + 16):  # the budget's readers, then its waiters
                    _, writer = await asyncio.open_connection(
                        "127.0.0.1", server.port, ssl=context, server_hostname=SERVICE)
                    writer.write(head + b"x" * 65_536)
                    writers.append(writer)
                for _ in range(cap - len(writers) + 64):  # the cap, and past it
                    writers.append((await asyncio.open_connection("127.0.0.1", server.port))[1])
                await asyncio.sleep(1)
                peak = peak_rss(server.process.pid)
                for writer in writers:
                    writer.close()
                return peak

            peak = asyncio.run(fill())
            assert peak < 200, f"peak RSS {peak:.0f} MiB with {cap} connections"
            connection = ApiServerConnection(server.port, server.ca)
            assert connection.review(body)[0] == 200
            connection.close()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_check_and_version_do_not_import_the_webhook_stack(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom click.testing import CliRunner\nfrom trainlint.cli import main\n"
        f"CliRunner().invoke(main, ['check', {str(CONTEXT)!r}])\n"
        "CliRunner().invoke(main, ['--version'])\n"
        "heavy = [m for m in ('aiohttp', 'prometheus_client', 'kubernetes_asyncio',"
        " 'cryptography', 'trainlint.webhook') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=tmp_path)
    assert result.stdout.strip() == "[]"


def test_serve_needs_a_certificate_choice() -> None:
    from trainlint.cli import main

    result = CliRunner().invoke(main, ["serve"])
    assert result.exit_code == 2
    assert "--tls-cert and --tls-key, or --self-signed" in result.output
