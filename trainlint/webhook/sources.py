"""Where the Store's objects come from: manifests on disk, or the cluster's watch streams."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import aiohttp

from trainlint.document import decode
from trainlint.files import read_bytes
from trainlint.loader import load
from trainlint.webhook.store import KINDS, Store

log = logging.getLogger("trainlint.webhook")
TRAINER_API = ("trainer.kubeflow.org", "v1alpha1")
#: How long one watch call lasts before it is renewed from the last resourceVersion.
WATCH_SECONDS = 300
MAX_BACKOFF = 30.0


class ContextSource(Protocol):
    """Fills a Store, then keeps it current until cancelled."""

    async def run(self, store: Store) -> None: ...


class DirectorySource:
    """Manifests under a folder (a ConfigMap mount, a GitOps checkout), reloaded on change."""

    def __init__(self, folder: Path, poll: float = 2.0) -> None:
        self.folder = folder
        self.poll = poll

    def files(self) -> Iterator[Path]:
        for root, folders, names in os.walk(self.folder, followlinks=True):
            folders[:] = sorted(f for f in folders if not f.startswith("."))
            for name in sorted(names):
                if name.endswith((".yaml", ".yml", ".json")) and not name.startswith("."):
                    yield Path(root, name)

    def fingerprint(self) -> tuple[tuple[str, int, int], ...]:
        found = []
        for path in self.files():
            try:
                stat = path.stat()
            except OSError:
                continue
            found.append((str(path), stat.st_mtime_ns, stat.st_size))
        return tuple(found)

    def load_into(self, store: Store) -> None:
        """Every object of a kind the Store keeps. Only regular files are read, as the CLI
        reads them: a FIFO or a link to a device in the mount would block the reload."""
        by_kind: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
        for path in self.files():
            try:
                text, problems = decode(read_bytes(path), str(path))
            except OSError as error:
                log.warning(json.dumps({"event": "context-file-skipped", "file": str(path),
                                        "reason": error.strerror or str(error)}))
                continue
            for manifest in load(text, str(path), problems).manifests:
                if manifest.kind in by_kind:
                    by_kind[manifest.kind].append(manifest.body)
        for kind, bodies in by_kind.items():
            store.replace(kind, bodies)

    async def run(self, store: Store) -> None:
        seen = self.fingerprint()
        self.load_into(store)
        while True:
            await asyncio.sleep(self.poll)
            current = self.fingerprint()
            if current != seen:
                seen = current
                self.load_into(store)
                log.info(json.dumps({"event": "context-reloaded", "objects": store.sizes()}))


Lister = Callable[..., Awaitable[Any]]


async def cluster_configuration(
    kubeconfig: str | None = None, context: str | None = None
) -> Any:
    """In a pod, the service account; elsewhere, or when a kubeconfig file or context is
    named, that kubeconfig context (by default the current one of `$KUBECONFIG` or
    `~/.kube/config`)."""
    from kubernetes_asyncio import client, config

    configuration = client.Configuration()
    if kubeconfig is None and context is None:
        try:
            # kubernetes-asyncio ships no type hints for its config loaders.
            config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        except config.ConfigException:
            pass
        else:
            return configuration
    await config.load_kube_config(
        config_file=kubeconfig, context=context, client_configuration=configuration
    )
    return configuration


async def read_list(lister: Lister, *args: Any) -> tuple[list[dict[str, Any]], str]:
    """One list call: its items (as the API server sends them: no kind or apiVersion) and
    the list's resourceVersion. A refusal is an ApiException, as from a typed call."""
    from kubernetes_asyncio.client.exceptions import ApiException

    response = await lister(*args, _preload_content=False)
    async with response:
        body = await response.read()
    if not 200 <= response.status < 300:  # a raw response is not checked for us
        error = ApiException(status=response.status, reason=response.reason)
        error.body = body
        raise error
    data = json.loads(body)
    items = [item for item in data.get("items") or [] if isinstance(item, dict)]
    return items, str(data["metadata"]["resourceVersion"])


class ClusterSource:
    """Watch-backed caches of the four kinds, through kubernetes-asyncio: list, then watch
    from the listed resourceVersion; `410 Gone` lists again; other failures back off."""

    def __init__(self, configuration: Any) -> None:
        self.configuration = configuration

    @staticmethod
    def listers(api_client: Any) -> dict[str, tuple[Lister, str]]:
        from kubernetes_asyncio import client

        custom = client.CustomObjectsApi(api_client)
        core = client.CoreV1Api(api_client)
        storage = client.StorageV1Api(api_client)

        def runtimes(plural: str) -> Lister:
            async def list_runtimes(**kwargs: Any) -> Any:
                return await custom.list_cluster_custom_object(*TRAINER_API, plural, **kwargs)
            # Watch reads the result type from the docstring: raw dicts, not models.
            list_runtimes.__doc__ = ":rtype: object"
            return list_runtimes

        version = "/".join(TRAINER_API)
        return {
            "TrainingRuntime": (runtimes("trainingruntimes"), version),
            "ClusterTrainingRuntime": (runtimes("clustertrainingruntimes"), version),
            "PersistentVolumeClaim": (core.list_persistent_volume_claim_for_all_namespaces, "v1"),
            "StorageClass": (storage.list_storage_class, "storage.k8s.io/v1"),
        }

    async def run(self, store: Store) -> None:
        from kubernetes_asyncio import client

        async with client.ApiClient(self.configuration) as api_client:
            await asyncio.gather(*(
                self.follow(store, kind, lister, api_version)
                for kind, (lister, api_version) in self.listers(api_client).items()
            ))

    async def follow(self, store: Store, kind: str, lister: Lister, api_version: str) -> None:
        from kubernetes_asyncio.client.exceptions import ApiException

        backoff = 0.5
        while True:
            try:
                version = await self.list(store, kind, lister, api_version)
                backoff = 0.5
                while True:
                    version = await self.watch(store, kind, lister, version)
            except ApiException as error:
                if error.status == 410:
                    log.info(json.dumps({"event": "relist", "kind": kind}))
                    continue
                log.warning(json.dumps({"event": "watch-failed", "kind": kind,
                                        "status": error.status}))
            except (aiohttp.ClientError, OSError, TimeoutError, ValueError, LookupError,
                    TypeError) as error:
                log.warning(json.dumps({"event": "watch-failed", "kind": kind,
                                        "error": type(error).__name__}))
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)

    async def list(self, store: Store, kind: str, lister: Lister, api_version: str) -> str:
        items, version = await read_list(lister)
        store.replace(kind, ({"apiVersion": api_version, "kind": kind, **item} for item in items))
        return version

    async def watch(self, store: Store, kind: str, lister: Lister, version: str) -> str:
        """One watch call, applied to the store; returns the resourceVersion to go on from."""
        from kubernetes_asyncio import watch

        async with watch.Watch(return_type="object") as stream:
            async for event in stream.stream(
                lister, resource_version=version, timeout_seconds=WATCH_SECONDS,
                allow_watch_bookmarks=True,
            ):
                body = event["raw_object"]
                if event["type"] in {"ADDED", "MODIFIED"}:
                    store.put(kind, body)
                elif event["type"] == "DELETED":
                    store.delete(kind, body)
                version = stream.resource_version or version
        return version
