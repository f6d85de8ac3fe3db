"""deploy/: the overlays render, every object is valid, and the webhook is wired as the
server expects.

`kubectl kustomize` is not on every machine (it cannot be downloaded here), so the test
renders with a tiny renderer for the subset our kustomizations use (`resources`,
`namespace`, JSON 6902 `patches` with a kind/name target) and, where kubectl exists,
checks that kubectl renders the same objects. Core kinds are validated with
kubernetes-validate; cert-manager's Issuer and Certificate are CRDs, checked structurally.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]  # the package ships no type hints
import pytest
import yaml

from tests.conftest import ROOT

DEPLOY = ROOT / "deploy"
KUBERNETES = "1.33.0"
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding",
                  "ValidatingWebhookConfiguration"}


def render(folder: Path) -> list[dict[str, Any]]:
    spec = yaml.safe_load((folder / "kustomization.yaml").read_text())
    objects: list[dict[str, Any]] = []
    for resource in spec.get("resources", []):
        path = folder / resource
        if path.is_dir():
            objects.extend(render(path))
        else:
            objects.extend(doc for doc in yaml.safe_load_all(path.read_text()) if doc)
    for entry in spec.get("patches", []):
        target = entry["target"]
        for obj in objects:
            if obj["kind"] == target["kind"] and obj["metadata"]["name"] == target["name"]:
                for op in yaml.safe_load(entry["patch"]):
                    apply(obj, op)
    if "namespace" in spec:
        for obj in objects:
            if obj["kind"] not in CLUSTER_SCOPED:
                obj["metadata"]["namespace"] = spec["namespace"]
    return objects


def apply(obj: dict[str, Any], op: dict[str, Any]) -> None:
    *parents, last = [int(p) if p.isdigit() else p for p in op["path"].strip("/").split("/")]
    node: Any = obj
    for part in parents:
        node = node[part]
    assert op["op"] in {"replace", "add"}, f"renderer does not know {op['op']}"
    if op["op"] == "replace":
        assert node[last] is not None  # replace needs an existing value
    node[last] = copy.deepcopy(op["value"])


def by_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [obj for obj in objects if obj["kind"] == kind]
    assert len(found) == 1, kind
    return found[0]


@pytest.mark.parametrize(("overlay", "policy"), [("advise", "Ignore"), ("enforce", "Fail")])
def test_overlay_renders_valid_objects(overlay: str, policy: str) -> None:
    objects = render(DEPLOY / "overlays" / overlay)
    kinds = sorted(obj["kind"] for obj in objects)
    assert kinds == sorted([
        "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment",
        "Service", "PodDisruptionBudget", "Issuer", "Certificate",
        "ValidatingWebhookConfiguration", "NetworkPolicy",
    ])
    for obj in objects:
        if obj["apiVersion"].startswith("cert-manager.io/"):
            assert obj["metadata"]["namespace"] == "trainlint-system"
            continue
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)

    webhook = by_kind(objects, "ValidatingWebhookConfiguration")
    [hook] = webhook["webhooks"]
    assert hook["failurePolicy"] == policy
    assert hook["sideEffects"] == "None" and hook["timeoutSeconds"] == 3
    assert hook["admissionReviewVersions"] == ["v1"]
    assert set(hook["rules"][0]["resources"]) == {
        "trainjobs", "trainingruntimes", "clustertrainingruntimes"}
    assert hook["rules"][0]["operations"] == ["CREATE", "UPDATE"]
    excluded = hook["namespaceSelector"]["matchExpressions"][0]
    assert excluded["operator"] == "NotIn"
    assert set(excluded["values"]) == {"kube-system", "trainlint-system"}
    assert webhook["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == (
        "trainlint-system/trainlint-tls")
    service = hook["clientConfig"]["service"]

    deployment = by_kind(objects, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert deployment["spec"]["replicas"] == 2
    assert f"--mode={overlay}" in container["args"]
    assert f"--service-name={service['name']}" in container["args"]
    assert f"--namespace={service['namespace']}" in container["args"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]}}
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"

    svc = by_kind(objects, "Service")
    assert svc["spec"]["ports"] == [{"name": "https", "port": 443, "targetPort": "https"}]
    assert {"name": "https", "containerPort": 9443} in container["ports"]

    certificate = by_kind(objects, "Certificate")
    assert certificate["spec"]["secretName"] == by_kind(objects, "Deployment")["spec"][
        "template"]["spec"]["volumes"][0]["secret"]["secretName"]
    assert f"{service['name']}.{service['namespace']}.svc" in certificate["spec"]["dnsNames"]
    assert certificate["spec"]["issuerRef"]["name"] == by_kind(objects, "Issuer")[
        "metadata"]["name"]

    rules = by_kind(objects, "ClusterRole")["rules"]
    assert all(rule["verbs"] == ["get", "list", "watch"] for rule in rules)
    assert {r for rule in rules for r in rule["resources"]} == {
        "trainingruntimes", "clustertrainingruntimes", "persistentvolumeclaims", "storageclasses"}


@pytest.mark.parametrize("overlay", ["advise", "enforce"])
def test_network_policy_opens_only_what_is_called(overlay: str) -> None:
    """The API server reaches the HTTPS port from anywhere (it is outside the pod
    network), Prometheus alone reaches /metrics, and the probes are on a port of their
    own (the kubelet probes from the node)."""
    objects = render(DEPLOY / "overlays" / overlay)
    deployment = by_kind(objects, "Deployment")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert f"--metrics-port={ports['metrics']}" in container["args"]
    assert f"--probe-port={ports['probes']}" in container["args"]
    assert container["readinessProbe"]["httpGet"]["port"] == "probes"
    assert container["livenessProbe"]["httpGet"]["port"] == "probes"
    network = by_kind(objects, "NetworkPolicy")["spec"]
    assert network["podSelector"] == deployment["spec"]["selector"]
    assert network["policyTypes"] == ["Ingress"]
    opened = {port["port"]: rule.get("from") for rule in network["ingress"]
              for port in rule["ports"]}
    assert set(opened) == {"https", "metrics"}
    assert opened["https"] is None
    [prometheus] = opened["metrics"]
    assert prometheus["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}
    assert prometheus["namespaceSelector"] == {
        "matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
@pytest.mark.parametrize("overlay", ["advise", "enforce"])
def test_renderer_agrees_with_kubectl(overlay: str) -> None:
    folder = DEPLOY / "overlays" / overlay
    result = subprocess.run(["kubectl", "kustomize", str(folder)], capture_output=True,
                            text=True, check=False, timeout=60)
    if result.returncode != 0:
        pytest.skip(f"kubectl kustomize failed here: {result.stderr.strip()[:200]}")
    rendered = [doc for doc in yaml.safe_load_all(result.stdout) if doc]

    def key(obj: dict[str, Any]) -> str:
        return f"{obj['kind']}/{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"

    assert sorted(rendered, key=key) == sorted(render(folder), key=key)


def test_dockerfile_runs_as_non_root() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "USER 65532:65532" in text
    assert '".[serve]"' in text
