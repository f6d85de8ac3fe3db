"""`--output-format policy-report`: the findings as `wgpolicyk8s.io/v1alpha2` reports, as
Kyverno and Polaris write them and policy dashboards read them: one PolicyReport per
namespace, one ClusterPolicyReport for cluster-scoped objects (and findings on no object),
as a YAML stream `kubectl apply -f -` takes (`trainlint audit --apply` writes them).

A finding is a result `fail` (error) or `warn` (warning) naming the rule (`policy` its
code, `rule` its name) and the object; every object checked without a finding, when the
caller says which were checked (`audit` does), is a `pass` result.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from trainlint.config.defaults import DOCS_URL
from trainlint.document import dotted
from trainlint.finding import Finding, ObjectRef
from trainlint.kinds import CLUSTER_SCOPED
from trainlint.problem import Severity
from trainlint.report import Report, file_name
from trainlint.rule import RULE_DOCS

API_VERSION = "wgpolicyk8s.io/v1alpha2"
NAME = "trainlint"
LABELS = {"app.kubernetes.io/managed-by": "trainlint"}
#: The theme of each hundred of codes (README, "Rules").
THEMES = {
    "0": "document and schema", "1": "references between objects",
    "2": "overrides and admission parity", "3": "checkpoint storage",
    "4": "restarts and termination", "5": "ML framework consistency",
}
_RESULTS = {Severity.ERROR: ("fail", "high"), Severity.WARNING: ("warn", "medium")}
#: The report of cluster-scoped objects (and of findings on no object).
CLUSTER = ""


def scope_of(ref: ObjectRef | None) -> str:
    """The namespace whose report holds an object's results (`CLUSTER`: the cluster's)."""
    if ref is None or ref.kind in CLUSTER_SCOPED:
        return CLUSTER
    return ref.namespace or "default"


def reports(
    findings: Sequence[Finding], checked: Sequence[ObjectRef] = (),
    site: str = DOCS_URL, now: int | None = None,
) -> list[dict[str, Any]]:
    """The reports, namespaces in name order and the cluster's last; an empty report for
    a namespace whose checked objects are all clean, so applying it clears old results.
    `now` (Unix seconds) defaults to $SOURCE_DATE_EPOCH, else the clock."""
    seconds = now if now is not None else int(os.environ.get("SOURCE_DATE_EPOCH") or time.time())
    results: dict[str, list[dict[str, Any]]] = {scope_of(ref): [] for ref in checked}
    with_findings = set()
    for finding in findings:
        results.setdefault(scope_of(finding.object), []).append(
            _result(finding, seconds, site)
        )
        with_findings.add(finding.object)
    for ref in checked:
        if ref not in with_findings:
            results[scope_of(ref)].append(_passed(ref, seconds))
    ordered = sorted(results, key=lambda scope: (scope == CLUSTER, scope))
    return [_report(scope, results[scope]) for scope in ordered]


def _report(namespace: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": NAME, "labels": dict(LABELS)}
    if namespace != CLUSTER:
        metadata["namespace"] = namespace
    summary = dict.fromkeys(("pass", "fail", "warn", "error", "skip"), 0)
    for result in results:
        summary[result["result"]] += 1
    return {
        "apiVersion": API_VERSION,
        "kind": "PolicyReport" if namespace != CLUSTER else "ClusterPolicyReport",
        "metadata": metadata, "summary": summary, "results": results,
    }


def _resource(ref: ObjectRef) -> dict[str, str]:
    resource = {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name}
    if ref.kind not in CLUSTER_SCOPED:
        resource["namespace"] = ref.namespace or "default"
    return resource


def _result(finding: Finding, seconds: int, site: str) -> dict[str, Any]:
    result, severity = _RESULTS[finding.severity]
    properties = {"docs": RULE_DOCS.format(site=site.rstrip("/"), code=finding.code)}
    if finding.path:
        properties["path"] = dotted(finding.path)
    if finding.object is None:  # a problem of the file (its YAML, a comment)
        properties["file"] = f"{file_name(finding.file)}:{finding.span.line}:{finding.span.column}"
    if finding.remediation:
        properties["help"] = finding.remediation
    entry: dict[str, Any] = {
        "policy": finding.code, "rule": finding.name, "message": finding.message,
        "result": result, "severity": severity, "category": THEMES.get(finding.code[2], ""),
        "source": NAME, "scored": True, "timestamp": {"seconds": seconds, "nanos": 0},
        "properties": properties,
    }
    if finding.object is not None:
        entry["resources"] = [_resource(finding.object)]
    return entry


def _passed(ref: ObjectRef, seconds: int) -> dict[str, Any]:
    return {
        "policy": NAME, "rule": "all-rules", "message": "no finding: every enabled rule passed",
        "result": "pass", "source": NAME, "scored": True,
        "timestamp": {"seconds": seconds, "nanos": 0}, "resources": [_resource(ref)],
    }


def render(report: Report) -> str:
    import yaml

    return yaml.safe_dump_all(
        reports(report.findings, report.objects, report.site), sort_keys=False,
        allow_unicode=True, width=1 << 16,
    )
