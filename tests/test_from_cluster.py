"""`trainlint check --from-cluster`: the cluster's runtimes, PVCs, StorageClasses and
PriorityClasses, read with list calls only, and a clear exit 2 when they cannot be.

No real API server can run here, so an HTTP endpoint on 127.0.0.1 stands in (as in
`test_webhook_cluster`): it answers the list calls with objects shaped as the API server
sends them (items without kind and apiVersion, managedFields present), checks the bearer
token, and can refuse (403) or never answer; the command runs as a subprocess with a
kubeconfig pointing at it.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.test_webhook_cluster import GROUP, MANAGED, claim, runtime
from tests.test_webhook_helpers import Loop

TOKEN = "s3cret"
LISTS = (
    f"{GROUP}/trainingruntimes", f"{GROUP}/clustertrainingruntimes",
    "/api/v1/persistentvolumeclaims", "/apis/storage.k8s.io/v1/storageclasses",
    "/apis/scheduling.k8s.io/v1/priorityclasses",
)
TRAINJOBS = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: sft
  namespace: team-a
spec:
  runtimeRef:
    name: torch-ckpt
  trainer:
    numNodes: 3
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tune
  namespace: team-a
spec:
  runtimeRef:
    name: torch-distributed
"""


class ApiServer:
    """Answers list calls with scripted objects; records every request."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        #: Paths answered 403, and paths never answered.
        self.forbidden: set[str] = set()
        self.silent: set[str] = set()
        self.objects: dict[str, list[dict[str, Any]]] = {
            f"{GROUP}/trainingruntimes": [],
            # A runtime only the cluster has.
            f"{GROUP}/clustertrainingruntimes": [runtime("torch-ckpt", "5")],
            "/api/v1/persistentvolumeclaims": [claim("ckpt", "7")],
            "/apis/storage.k8s.io/v1/storageclasses": [
                {"metadata": {"name": "standard", "resourceVersion": "3",
                              "managedFields": MANAGED},
                 "provisioner": "pd.csi.storage.gke.io"}],
            "/apis/scheduling.k8s.io/v1/priorityclasses": [
                {"metadata": {"name": "high", "resourceVersion": "2"}, "value": 1000}],
        }

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.method, request.path, dict(request.query)))
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return web.json_response(_status(401, "Unauthorized"), status=401)
        if request.path in self.forbidden:
            message = ('persistentvolumeclaims is forbidden: User "dev" cannot list resource '
                       '"persistentvolumeclaims" in API group "" at the cluster scope')
            return web.json_response(_status(403, message), status=403)
        if request.path in self.silent:
            await asyncio.sleep(60)
        if request.path not in self.objects:
            return web.json_response(_status(404, "the server could not find it"), status=404)
        return web.json_response({"kind": "List", "apiVersion": "v1",
                                  "metadata": {"resourceVersion": "10"},
                                  "items": self.objects[request.path]})


def _status(code: int, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
            "code": code}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[ApiServer, Path, str]]:
    """The endpoint, a folder holding a kubeconfig for it (contexts `fake`, current, and
    `stale`, whose token the endpoint refuses) and the TrainJobs, and its URL."""
    loop = Loop()
    api = ApiServer()
    runner, url = loop.serve_http(api.handle)
    (tmp_path / "kubeconfig").write_text(_kubeconfig(url))
    (tmp_path / "jobs.yaml").write_text(TRAINJOBS)
    yield api, tmp_path, url
    loop.run(runner.cleanup())
    loop.close()


def _kubeconfig(url: str) -> str:
    return f"""\
apiVersion: v1
kind: Config
clusters:
  - name: fake
    cluster: {{server: "{url}"}}
users:
  - name: dev
    user: {{token: {TOKEN}}}
  - name: old
    user: {{token: expired}}
contexts:
  - name: fake
    context: {{cluster: fake, user: dev}}
  - name: stale
    context: {{cluster: fake, user: old}}
current-context: fake
"""


def _check(folder: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["trainlint", "check", "--output-format", "concise", "--select", "TL3",
         "--from-cluster", "--kubeconfig", "kubeconfig", *arguments, "jobs.yaml"],
        cwd=folder, capture_output=True, text=True, timeout=60, check=False,
    )


def test_a_runtime_only_the_cluster_has(cluster: tuple[ApiServer, Path, str]) -> None:
    """The TrainJob is checked against the cluster's runtime and PVC; one whose runtime
    the cluster lacks is not checked against a bundled one (the cluster says which it
    has); every kind was listed once, with GET and no watch."""
    api, folder, _ = cluster
    result = _check(folder)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        "jobs.yaml:10:5: TL302 [error] trainer job `node` runs on 3 nodes but mounts PVC "
        "`team-a/ckpt` (volume `ckpt`), which allows only ReadWriteOnce: pods on other nodes "
        "cannot attach it and stay in ContainerCreating, so the job never starts "
        "[rwo-volume-multi-node]",
        "Found 1 problem (1 error).",
    ]
    assert result.stderr == (
        "trainlint: 1 TrainJob not checked against its runtime (`torch-distributed`): add it "
        "with `--context` (or `--from-cluster`)\n"
    )
    assert sorted(path for _, path, _ in api.requests) == sorted(LISTS)
    assert {method for method, _, _ in api.requests} == {"GET"}
    assert not any("watch" in query for _, _, query in api.requests)


def test_credentials_the_cluster_refuses(cluster: tuple[ApiServer, Path, str]) -> None:
    _, folder, url = cluster
    result = _check(folder, "--context-name", "stale")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith(
        f"Error: --from-cluster: the cluster at {url} did not accept the credentials "
        "(401 Unauthorized: Unauthorized): log in again, or name the kubeconfig and context "
        "to use (`--kubeconfig`, `--context-name`)"
    )


def test_a_list_the_user_may_not_make(cluster: tuple[ApiServer, Path, str]) -> None:
    api, folder, url = cluster
    api.forbidden.add("/api/v1/persistentvolumeclaims")
    result = _check(folder)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"Error: --from-cluster: not allowed to list persistentvolumeclaims at {url} (403 "
        'Forbidden: persistentvolumeclaims is forbidden: User "dev" cannot list resource '
        '"persistentvolumeclaims" in API group "" at the cluster scope): `--from-cluster` '
        "needs `list` on runtimes, PVCs (all namespaces), StorageClasses and PriorityClasses\n"
    )


def test_a_cluster_that_does_not_answer(cluster: tuple[ApiServer, Path, str]) -> None:
    api, folder, url = cluster
    api.silent.add("/apis/storage.k8s.io/v1/storageclasses")
    started = time.monotonic()
    result = _check(folder, "--cluster-timeout", "1")
    assert time.monotonic() - started < 20
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"Error: --from-cluster: the cluster at {url} did not answer within 1 s (raise "
        "`--cluster-timeout`, or check the network)\n"
    )


def test_a_cluster_nobody_listens_for(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    (tmp_path / "kubeconfig").write_text(_kubeconfig(url))
    (tmp_path / "jobs.yaml").write_text(TRAINJOBS)
    result = _check(tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"Error: --from-cluster: cannot reach the cluster at {url}: ")


def test_a_kubeconfig_that_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "jobs.yaml").write_text(TRAINJOBS)
    result = _check(tmp_path)
    assert (result.returncode, result.stderr) == (
        2, "Error: --from-cluster: cannot read the kubeconfig: kubeconfig: no such file\n"
    )
    (tmp_path / "kubeconfig").write_text(_kubeconfig("http://127.0.0.1:1"))
    result = _check(tmp_path, "--context-name", "nowhere")
    assert (result.returncode, result.stderr) == (2, (
        "Error: --from-cluster: cannot read the kubeconfig (kubeconfig): Invalid kube-config "
        "file. Expected object with name nowhere in kubeconfig/contexts list\n"
    ))
    usage = subprocess.run(
        ["trainlint", "check", "--kubeconfig", "kubeconfig", "jobs.yaml"],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    assert usage.returncode == 2
    assert "--kubeconfig and --context-name go with --from-cluster" in usage.stderr
