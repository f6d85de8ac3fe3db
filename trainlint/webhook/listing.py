"""`trainlint check --from-cluster`: the cluster's objects that checks refer to, read once.

The webhook's client and models list each kind once (`ClusterSource.list` into a
`Store`): list calls only, no watch, nothing written, one deadline over it all. Whatever
fails (credentials, permissions, the network, the deadline) is one `ClusterError` whose
message says what to do.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import aiohttp

from trainlint.document import Manifest
from trainlint.webhook.sources import ClusterSource, Lister, cluster_configuration
from trainlint.webhook.store import KINDS, Store

#: Listed besides what the webhook watches: pods name them, and the scheduler needs them.
PRIORITY_CLASS = ("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses")
#: The resource each kind is listed as, for messages.
RESOURCES = {
    "TrainingRuntime": "trainingruntimes.trainer.kubeflow.org",
    "ClusterTrainingRuntime": "clustertrainingruntimes.trainer.kubeflow.org",
    "PersistentVolumeClaim": "persistentvolumeclaims",
    "StorageClass": "storageclasses.storage.k8s.io",
    PRIORITY_CLASS[0]: f"{PRIORITY_CLASS[2]}.scheduling.k8s.io",
}


class ClusterError(Exception):
    """The cluster could not be read; the message says why and what to do."""


def list_objects(kubeconfig: str | None, context: str | None, timeout: float) -> list[Manifest]:
    """Every runtime, PVC, StorageClass and PriorityClass of the cluster."""
    return asyncio.run(_list_objects(kubeconfig, context, timeout))


async def _list_objects(
    kubeconfig: str | None, context: str | None, timeout: float
) -> list[Manifest]:
    from kubernetes_asyncio import client, config

    if kubeconfig is not None and not Path(kubeconfig).is_file():
        raise ClusterError(f"cannot read the kubeconfig: {kubeconfig}: no such file")
    # What the client logs of a missing file is said once, below, as an error.
    logging.getLogger("kubernetes_asyncio").addHandler(logging.NullHandler())
    try:
        configuration = await cluster_configuration(kubeconfig, context)
    except (config.ConfigException, OSError, ValueError, TypeError) as error:
        where = kubeconfig or "$KUBECONFIG or ~/.kube/config"
        raise ClusterError(f"cannot read the kubeconfig ({where}): {error}") from None
    host = configuration.host
    store = Store((*KINDS, PRIORITY_CLASS[0]))
    source = ClusterSource(configuration)
    try:
        async with asyncio.timeout(timeout), client.ApiClient(configuration) as api_client:
            listers = {
                **source.listers(api_client),
                PRIORITY_CLASS[0]: (
                    client.SchedulingV1Api(api_client).list_priority_class, PRIORITY_CLASS[1]
                ),
            }
            failures = await asyncio.gather(
                *(_list(source, store, kind, lister, api_version, host)
                  for kind, (lister, api_version) in listers.items()),
                return_exceptions=True,
            )
    except TimeoutError:
        raise ClusterError(
            f"the cluster at {host} did not answer within {timeout:g} s "
            "(raise `--cluster-timeout`, or check the network)"
        ) from None
    for failure in failures:
        if isinstance(failure, BaseException):
            raise failure
    return list(store.objects())


async def _list(
    source: ClusterSource, store: Store, kind: str, lister: Lister, api_version: str, host: str
) -> None:
    from kubernetes_asyncio.client.exceptions import ApiException

    resource = RESOURCES[kind]
    try:
        await source.list(store, kind, lister, api_version)
    except ApiException as error:
        raise ClusterError(_refusal(error, resource, host)) from None
    except (aiohttp.ClientError, OSError) as error:
        raise ClusterError(f"cannot reach the cluster at {host}: {error}") from None
    except (LookupError, ValueError, TypeError):
        raise ClusterError(
            f"the cluster at {host} answered the listing of {resource} with something "
            "that is not a list"
        ) from None


def _refusal(error: Any, resource: str, host: str) -> str:
    """What an API error means for listing `resource`, and what to do about it."""
    status = error.status
    detail = _message(error.body) or str(error.reason or "")
    if status == 401:
        return (
            f"the cluster at {host} did not accept the credentials (401 Unauthorized: "
            f"{detail}): log in again, or name the kubeconfig and context to use "
            "(`--kubeconfig`, `--context-name`)"
        )
    if status == 403:
        return (
            f"not allowed to list {resource} at {host} (403 Forbidden: {detail}): "
            "`--from-cluster` needs `list` on runtimes, PVCs (all namespaces), "
            "StorageClasses and PriorityClasses"
        )
    if status == 404 and resource.endswith("trainer.kubeflow.org"):
        return f"the cluster at {host} serves no {resource} (404): is Kubeflow Trainer installed?"
    return f"listing {resource} at {host} failed: {status} {detail}"


def _message(body: object) -> str:
    """The `message` of a Kubernetes Status body, if it is one."""
    try:
        status = json.loads(body) if isinstance(body, str | bytes) else None
    except ValueError:
        return ""
    message = status.get("message") if isinstance(status, dict) else None
    return message if isinstance(message, str) else ""
