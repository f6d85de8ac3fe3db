"""`trainlint audit`: the cluster's TrainJobs and runtimes checked with the cluster as
context, and the findings as wgpolicyk8s.io/v1alpha2 PolicyReports, validated against the
CRDs' own schemas and written by server-side apply.

The API server is the loopback stand-in of `test_from_cluster` (list calls answered with
objects shaped as the API server sends them), here also serving TrainJobs, listing per
namespace, and taking apply patches of reports, which it records.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from tests.conftest import ROOT
from tests.test_from_cluster import TOKEN, ApiServer, _kubeconfig, _status
from tests.test_suppression import RUNTIME
from tests.test_webhook_cluster import GROUP, MANAGED, runtime
from tests.test_webhook_helpers import Loop

#: The v1alpha2 schemas of the PolicyReport and ClusterPolicyReport CRDs (descriptions left
#: out), from kubernetes-sigs/wg-policy-prototypes (Apache-2.0) at commit 25056e1f3eb5,
#: policy-report/crd/v1alpha2/: see fixtures/policy-report/SOURCE.md.
jsonschema = pytest.importorskip("jsonschema")  # untyped: imported as Any
SCHEMAS = json.loads((ROOT / "fixtures" / "policy-report" / "v1alpha2-schemas.json").read_text())
REPORTS = "/apis/wgpolicyk8s.io/v1alpha2"
EPOCH = "1767225600"


def trainjob(name: str, namespace: str, nodes: int, version: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "resourceVersion": version,
                         "uid": f"uid-{name}", "managedFields": MANAGED},
            "spec": {"runtimeRef": {"name": "torch-ckpt"}, "trainer": {"numNodes": nodes}},
            "status": {"conditions": [{"type": "Created", "status": "True"}]}}


def rwo_claim(namespace: str) -> dict[str, Any]:
    return {"metadata": {"name": "ckpt", "namespace": namespace, "resourceVersion": "7"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard"}}


class AuditServer(ApiServer):
    """Also TrainJobs (cluster-wide and per namespace), namespaced lists, and apply
    patches of reports."""

    def __init__(self) -> None:
        super().__init__()
        # team-a: `sft` runs on 3 nodes from a ReadWriteOnce claim (TL302); `solo` on one
        # node from the same claim is clean. team-b: `tune` on one node, clean.
        jobs = [trainjob("sft", "team-a", 3, "8"), trainjob("solo", "team-a", 1, "9"),
                trainjob("tune", "team-b", 1, "10")]
        claims = [rwo_claim("team-a"), rwo_claim("team-b")]
        self.objects[f"{GROUP}/trainjobs"] = jobs
        self.objects["/api/v1/persistentvolumeclaims"] = claims
        for namespace in ("team-a", "team-b"):
            base = f"{GROUP}/namespaces/{namespace}"
            self.objects[f"{base}/trainjobs"] = [
                job for job in jobs if job["metadata"]["namespace"] == namespace]
            self.objects[f"{base}/trainingruntimes"] = []
            self.objects[f"/api/v1/namespaces/{namespace}/persistentvolumeclaims"] = [
                claim for claim in claims if claim["metadata"]["namespace"] == namespace]
        #: (path, query, content type, body) of every patch.
        self.patches: list[tuple[str, dict[str, str], str, dict[str, Any]]] = []
        self.missing_reports = False
        #: The reports an earlier run wrote, listed; the path of every delete.
        self.objects[f"{REPORTS}/policyreports"] = []
        self.objects[f"{REPORTS}/clusterpolicyreports"] = []
        for namespace in ("team-a", "team-b", "team-c"):
            self.objects[f"{REPORTS}/namespaces/{namespace}/policyreports"] = []
        self.deletes: list[str] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.method == "PATCH" and request.path.startswith(REPORTS):
            if request.headers.get("Authorization") != f"Bearer {TOKEN}":
                return web.json_response(_status(401, "Unauthorized"), status=401)
            if self.missing_reports:
                return web.json_response(_status(404, "the server could not find the "
                                                      "requested resource"), status=404)
            body = yaml.safe_load(await request.text())  # apply-patch+yaml (JSON is YAML)
            self.patches.append((request.path, dict(request.query),
                                 request.headers.get("Content-Type", ""), body))
            return web.json_response(body)
        if request.method == "DELETE" and request.path.startswith(REPORTS):
            self.deletes.append(request.path)
            return web.json_response({"kind": "Status", "status": "Success"})
        return await super().handle(request)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[AuditServer, Path, str]]:
    loop = Loop()
    api = AuditServer()
    api.objects[f"{GROUP}/clustertrainingruntimes"] = [runtime("torch-ckpt", "5")]
    runner, url = loop.serve_http(api.handle)
    (tmp_path / "kubeconfig").write_text(_kubeconfig(url))
    yield api, tmp_path, url
    loop.run(runner.cleanup())
    loop.close()


def audit(folder: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["trainlint", "audit", "--isolated", "--kubeconfig", "kubeconfig", *arguments],
        cwd=folder, capture_output=True, text=True, timeout=60, check=False,
        env={**_environment(), "SOURCE_DATE_EPOCH": EPOCH},
    )


def _environment() -> dict[str, str]:
    import os

    return {key: value for key, value in os.environ.items()
            if key not in {"GITHUB_ACTIONS", "TRAINLINT_OUTPUT_FORMAT", "NO_COLOR"}}


def closed(schema: Any) -> Any:
    """The schema as the API server applies it: unknown fields of an object with known
    properties are pruned, so here they are refused (nothing we write may be dropped)."""
    if isinstance(schema, dict):
        schema = {key: closed(value) for key, value in schema.items()}
        if schema.get("type") == "object" and "properties" in schema:
            schema.setdefault("additionalProperties", False)
        return schema
    if isinstance(schema, list):
        return [closed(item) for item in schema]
    return schema


def validate(report: dict[str, Any]) -> None:
    jsonschema.validate(report, closed(SCHEMAS[report["kind"]]))


def test_audit_checks_what_runs_with_the_cluster_as_context(
    cluster: tuple[AuditServer, Path, str]
) -> None:
    api, folder, _ = cluster
    result = audit(folder, "--select", "TL302", "--output-format", "concise")
    assert result.returncode == 1, result.stderr
    finding, summary = result.stdout.splitlines()
    where, message = finding.split(": TL302 [error] ")
    assert where.startswith("cluster/team-a/trainjob/sft.yaml:")
    assert message == (
        "trainer job `node` runs on 3 nodes but mounts PVC `team-a/ckpt` (volume `ckpt`), "
        "which allows only ReadWriteOnce: pods on other nodes cannot attach it and stay in "
        "ContainerCreating, so the job never starts [rwo-volume-multi-node]"
    )
    assert summary == "Found 1 problem (1 error)."
    listed = sorted(path for method, path, _ in api.requests if method == "GET")
    assert listed == sorted([
        f"{GROUP}/trainjobs", f"{GROUP}/trainingruntimes", f"{GROUP}/clustertrainingruntimes",
        "/api/v1/persistentvolumeclaims", "/apis/storage.k8s.io/v1/storageclasses",
        "/apis/scheduling.k8s.io/v1/priorityclasses",
    ])
    assert not api.patches  # nothing is written without --apply
    shown = audit(folder, "--select", "TL302", "--output-format", "full").stdout
    line = where.split(":")[1]
    assert f"{line} |     numNodes: 3" in shown  # the object as kubectl shows it, no status
    assert "status" not in shown and "managedFields" not in shown


def test_audit_of_named_namespaces_lists_only_in_them(
    cluster: tuple[AuditServer, Path, str]
) -> None:
    api, folder, _ = cluster
    result = audit(folder, "-n", "team-b", "--select", "TL302", "--output-format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
    listed = sorted(path for method, path, _ in api.requests if method == "GET")
    assert listed == sorted([
        f"{GROUP}/namespaces/team-b/trainjobs", f"{GROUP}/namespaces/team-b/trainingruntimes",
        f"{GROUP}/clustertrainingruntimes", "/api/v1/namespaces/team-b/persistentvolumeclaims",
        "/apis/storage.k8s.io/v1/storageclasses", "/apis/scheduling.k8s.io/v1/priorityclasses",
    ])


def test_policy_reports_per_namespace_validate_against_the_crds(
    cluster: tuple[AuditServer, Path, str]
) -> None:
    _, folder, _ = cluster
    result = audit(folder, "--select", "TL302", "--output-format", "policy-report")
    assert result.returncode == 1, result.stderr
    reports = list(yaml.safe_load_all(result.stdout))
    for report in reports:
        validate(report)
    assert [(r["kind"], r["metadata"].get("namespace")) for r in reports] == [
        ("PolicyReport", "team-a"), ("PolicyReport", "team-b"), ("ClusterPolicyReport", None),
    ]
    team_a, team_b, whole = reports
    assert team_a["summary"] == {"pass": 1, "fail": 1, "warn": 0, "error": 0, "skip": 0}
    failed = next(result for result in team_a["results"] if result["result"] == "fail")
    assert failed["policy"] == "TL302" and failed["rule"] == "rwo-volume-multi-node"
    assert failed["severity"] == "high" and failed["category"] == "checkpoint storage"
    assert failed["timestamp"] == {"seconds": int(EPOCH), "nanos": 0}
    assert failed["resources"] == [{"apiVersion": "trainer.kubeflow.org/v1alpha1",
                                    "kind": "TrainJob", "name": "sft", "namespace": "team-a"}]
    assert failed["properties"]["docs"] == "https://trainlint.dev/rules/TL302/"
    passed = [r["resources"][0]["name"] for r in team_a["results"] if r["result"] == "pass"]
    assert passed == ["solo"]
    assert team_b["summary"]["pass"] == 1 and team_b["summary"]["fail"] == 0
    assert whole["summary"]["pass"] == 1  # the ClusterTrainingRuntime, clean
    assert whole["results"][0]["resources"][0] == {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
        "name": "torch-ckpt",
    }


def test_apply_writes_the_reports_by_server_side_apply(
    cluster: tuple[AuditServer, Path, str]
) -> None:
    api, folder, _ = cluster
    printed = audit(folder, "--select", "TL302", "--output-format", "policy-report")
    result = audit(folder, "--select", "TL302", "--output-format", "concise", "--apply")
    assert result.returncode == 1, result.stderr
    assert result.stderr == (
        "trainlint: applied 3 reports: PolicyReport team-a/trainlint, PolicyReport "
        "team-b/trainlint, ClusterPolicyReport trainlint\n"
    )
    # `force` as the client writes it; the API server reads it with strconv.ParseBool.
    assert [(path, query, kind) for path, query, kind, _ in api.patches] == [
        (f"{REPORTS}/namespaces/team-a/policyreports/trainlint", {
            "fieldManager": "trainlint", "force": "True"}, "application/apply-patch+yaml"),
        (f"{REPORTS}/namespaces/team-b/policyreports/trainlint", {
            "fieldManager": "trainlint", "force": "True"}, "application/apply-patch+yaml"),
        (f"{REPORTS}/clusterpolicyreports/trainlint", {
            "fieldManager": "trainlint", "force": "True"}, "application/apply-patch+yaml"),
    ]
    assert [body for *_, body in api.patches] == list(yaml.safe_load_all(printed.stdout))


def earlier_report(namespace: str | None, name: str = "trainlint",
                   labels: dict[str, str] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": name, "labels": {"app.kubernetes.io/managed-by": "trainlint"}
        if labels is None else labels}
    if namespace:
        metadata["namespace"] = namespace
    return {"metadata": metadata, "summary": {"fail": 1}}


def test_apply_deletes_the_reports_of_namespaces_left_with_nothing_to_audit(
    cluster: tuple[AuditServer, Path, str]
) -> None:
    """team-c's TrainJobs are gone: its report of an earlier run would show their findings
    for ever. Reports of other names or owners are never touched."""
    api, folder, _ = cluster
    api.objects[f"{REPORTS}/policyreports"] = [
        earlier_report("team-a"), earlier_report("team-c"),
        earlier_report("team-c", name="kyverno-polr"),
        earlier_report("team-d", labels={"app.kubernetes.io/managed-by": "kyverno"}),
    ]
    result = audit(folder, "--select", "TL302", "--output-format", "concise", "--apply")
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "trainlint: deleted 1 report where nothing is left to audit: PolicyReport "
        "team-c/trainlint"
    )
    assert api.deletes == [f"{REPORTS}/namespaces/team-c/policyreports/trainlint"]


def test_apply_in_named_namespaces_looks_only_at_theirs(
    cluster: tuple[AuditServer, Path, str]
) -> None:
    """With `-n`, only the namespaces named are audited, so only their old reports may be
    stale; with no ClusterTrainingRuntime left, the cluster's old report goes too."""
    api, folder, _ = cluster
    api.objects[f"{GROUP}/clustertrainingruntimes"] = []
    api.objects[f"{REPORTS}/namespaces/team-c/policyreports"] = [earlier_report("team-c")]
    api.objects[f"{REPORTS}/policyreports"] = [earlier_report("team-d")]
    api.objects[f"{REPORTS}/clusterpolicyreports"] = [earlier_report(None)]
    api.objects[f"{GROUP}/namespaces/team-c/trainjobs"] = []
    api.objects[f"{GROUP}/namespaces/team-c/trainingruntimes"] = []
    api.objects["/api/v1/namespaces/team-c/persistentvolumeclaims"] = []
    result = audit(folder, "-n", "team-a", "-n", "team-c", "--output-format", "concise",
                   "--apply")
    assert api.deletes == [f"{REPORTS}/namespaces/team-c/policyreports/trainlint",
                           f"{REPORTS}/clusterpolicyreports/trainlint"], result.stderr


def test_apply_where_the_crds_are_not_installed(cluster: tuple[AuditServer, Path, str]) -> None:
    api, folder, url = cluster
    api.missing_reports = True
    result = audit(folder, "--select", "TL302", "--output-format", "concise", "--apply")
    assert result.returncode == 2
    assert result.stderr.endswith(
        f"Error: audit --apply: the cluster at {url} serves no wgpolicyk8s.io/v1alpha2 "
        "PolicyReport (404: the server could not find the requested resource): install the "
        "PolicyReport CRDs (Kyverno and Policy Reporter ship them)\n"
    )


def test_a_listing_the_user_may_not_make(cluster: tuple[AuditServer, Path, str]) -> None:
    api, folder, url = cluster
    api.forbidden.add(f"{GROUP}/trainjobs")
    result = audit(folder)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(
        f"Error: audit: not allowed to list trainjobs.trainer.kubeflow.org at {url} (403 "
    )
    assert result.stderr.endswith(
        "`trainlint audit` needs `list` on TrainJobs, runtimes and PVCs (in every "
        "namespace, or in those named with `-n`), StorageClasses and PriorityClasses\n"
    )


def test_check_writes_policy_reports_too(tmp_path: Path) -> None:
    (tmp_path / "runtime.yaml").write_text(RUNTIME)  # a ClusterTrainingRuntime, TL301
    (tmp_path / "job.yaml").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
        "metadata: {name: sft}\nspec:\n  runtimeRef: {name: torch-ckpt}\n"
        "  trainer: {numNodez: 2}\n"
    )
    result = subprocess.run(
        ["trainlint", "check", "--isolated", "--no-cache", "--select", "TL301,TL006",
         "--output-format", "policy-report", "."],
        cwd=tmp_path, capture_output=True, text=True, check=False,
        env={**_environment(), "SOURCE_DATE_EPOCH": EPOCH},
    )
    assert result.returncode == 1, result.stderr
    reports = list(yaml.safe_load_all(result.stdout))
    for report in reports:
        validate(report)
    assert [(r["kind"], r["metadata"].get("namespace"), [x["policy"] for x in r["results"]])
            for r in reports] == [
        ("PolicyReport", "default", ["TL006"]), ("ClusterPolicyReport", None, ["TL301"]),
    ]
    assert reports[0]["results"][0]["properties"]["path"] == "spec.trainer.numNodez"


def test_the_schemas_refuse_what_the_api_server_would_prune() -> None:
    """The validation can fail: a field the CRD does not know, a result it does not allow."""
    report = {"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
              "metadata": {"name": "x", "namespace": "y"},
              "results": [{"policy": "TL301", "result": "fail"}]}
    validate(report)
    with pytest.raises(jsonschema.ValidationError):
        validate({**report, "results": [{"policy": "TL301", "result": "failed"}]})
    with pytest.raises(jsonschema.ValidationError):
        validate({**report, "results": [{"policy": "TL301", "level": "high"}]})
