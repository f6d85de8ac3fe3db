"""The watch-backed caches through kubernetes-asyncio.

No real API server can run here (no container runtime, no kind), so a small HTTP endpoint
on 127.0.0.1 stands in: it speaks the list/watch protocol (list with a resourceVersion,
`?watch=true` streams of JSON events, BOOKMARK, an ERROR `410 Gone` that forces a relist)
with object shapes as the API server sends them (list items without kind/apiVersion,
managedFields present)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web

from tests.test_webhook_helpers import Loop
from trainlint.config.settings import Settings
from trainlint.webhook import admission
from trainlint.webhook.admission import Mode
from trainlint.webhook.sources import ClusterSource
from trainlint.webhook.store import Store

GROUP = "/apis/trainer.kubeflow.org/v1alpha1"
MANAGED = [{"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:spec": {}}}]


def runtime(name: str, version: str, nodes_label: bool = True) -> dict[str, Any]:
    labels = {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"} if nodes_label else {}
    return {
        "metadata": {"name": name, "resourceVersion": version, "managedFields": MANAGED},
        "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {
            "replicatedJobs": [{"name": "node", "template": {"metadata": {"labels": labels},
                "spec": {"template": {"spec": {"terminationGracePeriodSeconds": 120,
                    "containers": [{"name": "node", "image": "pytorch/pytorch:2.7.1",
                                    "volumeMounts": [{"name": "ckpt", "mountPath": "/ckpt"}]}],
                    "volumes": [{"name": "ckpt",
                                 "persistentVolumeClaim": {"claimName": "ckpt"}}]}}}}}]}}},
    }


def claim(name: str, version: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "team-a", "resourceVersion": version,
                         "managedFields": MANAGED},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard"}}


class FakeApiServer:
    """Lists and watches, scripted per resource; records what the client asked."""

    def __init__(self) -> None:
        self.lists: dict[str, int] = {}
        self.watches: list[tuple[str, str | None]] = []
        self.objects: dict[str, list[dict[str, Any]]] = {
            f"{GROUP}/trainingruntimes": [],
            f"{GROUP}/clustertrainingruntimes": [runtime("torch-old", "5")],
            "/api/v1/persistentvolumeclaims": [claim("ckpt", "7")],
            "/apis/storage.k8s.io/v1/storageclasses": [
                {"metadata": {"name": "standard", "resourceVersion": "3"},
                 "provisioner": "pd.csi.storage.gke.io"}],
        }

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path not in self.objects:
            return web.json_response({"kind": "Status", "code": 404}, status=404)
        if request.query.get("watch") not in {"true", "1", "True"}:
            self.lists[path] = self.lists.get(path, 0) + 1
            version = "10" if self.lists[path] == 1 else "20"
            return web.json_response({"kind": "List", "apiVersion": "v1",
                                      "metadata": {"resourceVersion": version},
                                      "items": self.objects[path]})
        self.watches.append((path, request.query.get("resourceVersion")))
        response = web.StreamResponse()
        response.content_type = "application/json"
        await response.prepare(request)
        for event in self.events(path, request.query.get("resourceVersion")):
            await response.write(json.dumps(event).encode() + b"\n")
        if not path.endswith("clustertrainingruntimes") or request.query.get(
                "resourceVersion") == "20":
            # An open watch with nothing to say: a watch that ended at once would be
            # renewed in a busy loop, and the calls counted below would move on their own.
            await asyncio.sleep(30)
        return response

    def events(self, path: str, version: str | None) -> Iterator[dict[str, Any]]:
        if not path.endswith("clustertrainingruntimes"):
            yield {"type": "BOOKMARK", "object": {"kind": "Bookmark",
                                                  "metadata": {"resourceVersion": "12"}}}
            return
        if version == "10":
            added = {"apiVersion": "trainer.kubeflow.org/v1alpha1",
                     "kind": "ClusterTrainingRuntime", **runtime("torch-ckpt", "11")}
            yield {"type": "ADDED", "object": added}
            yield {"type": "DELETED", "object": {**runtime("torch-old", "12"),
                                                 "kind": "ClusterTrainingRuntime"}}
            # The stored history is gone: the client must list again.
            self.objects[path] = [runtime("torch-ckpt", "11"), runtime("torch-new", "19")]
            yield {"type": "ERROR", "object": {"kind": "Status", "code": 410,
                                               "reason": "Expired",
                                               "message": "too old resource version"}}


@pytest.fixture
def fake() -> Iterator[tuple[Loop, FakeApiServer, str]]:
    loop = Loop()
    api = FakeApiServer()
    runner, url = loop.serve_http(api.handle)
    yield loop, api, url
    loop.run(runner.cleanup())
    loop.close()


def test_caches_list_watch_and_relist_on_gone(fake: tuple[Loop, FakeApiServer, str]) -> None:
    from kubernetes_asyncio import client

    loop, api, url = fake
    store = Store()
    configuration = client.Configuration(host=url)
    async def start() -> asyncio.Task[None]:
        return asyncio.create_task(ClusterSource(configuration).run(store))

    task = loop.run(start())
    deadline = time.monotonic() + 10
    # Settled: every kind listed and watched, the runtimes listed again and watched from
    # the new version (4 + 1 watches, each held open).
    while store.get("ClusterTrainingRuntime", "", "torch-new") is None or not all(
            store.synced.values()) or len(api.watches) < 5:
        assert time.monotonic() < deadline, f"no relist: {api.lists} {api.watches}"
        time.sleep(0.02)
    assert store.get("ClusterTrainingRuntime", "", "torch-old") is None  # DELETED, then relisted
    assert api.lists[f"{GROUP}/clustertrainingruntimes"] == 2
    assert (f"{GROUP}/clustertrainingruntimes", "10") in api.watches  # from the listed version
    assert (f"{GROUP}/clustertrainingruntimes", "20") in api.watches  # and from the relisted
    assert store.sizes() == {"TrainingRuntime": 0, "ClusterTrainingRuntime": 2,
                             "PersistentVolumeClaim": 1, "StorageClass": 1}
    cached = store.get("ClusterTrainingRuntime", "", "torch-ckpt")
    assert cached is not None
    assert cached.api_version == "trainer.kubeflow.org/v1alpha1"  # filled in for list items
    assert "managedFields" not in cached.body["metadata"]

    # The cached runtime and claim decide a TrainJob with no API call on the request path.
    calls = (sum(api.lists.values()), len(api.watches))
    review = admission.Review(
        uid="u1", kind="TrainJob", operation="CREATE", namespace="team-a", name="sft",
        dry_run=False, object={
            "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "sft"},
            "spec": {"runtimeRef": {"name": "torch-ckpt"}, "trainer": {"numNodes": 3}}},
    )
    decision = admission.decide(review, Settings(), Mode.ENFORCE, store.context_for)
    assert not decision.allowed and decision.message.startswith("TL302: ")
    assert (sum(api.lists.values()), len(api.watches)) == calls

    async def stop() -> None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    loop.run(stop())
