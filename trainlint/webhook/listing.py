"""The cluster, read once: the objects checks refer to (`trainlint check --from-cluster`),
and those `trainlint audit` checks; and the PolicyReports `audit --apply` writes.

The webhook's client and models list each kind once (`ClusterSource.list` into a
`Store`): list calls only, no watch, nothing written, one deadline over it all. Whatever
fails (credentials, permissions, the network, the deadline) is one `ClusterError` whose
message says what to do.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import aiohttp

from trainlint.document import Manifest
from trainlint.webhook.sources import (
    TRAINER_API,
    ClusterSource,
    Lister,
    cluster_configuration,
    read_list,
)
from trainlint.webhook.store import KINDS, Store

#: Listed besides what the webhook watches: pods name them, and the scheduler needs them.
PRIORITY_CLASS = ("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses")
TRAINJOB = "TrainJob"
#: The kinds `audit` lists in each namespace named (`-n`).
NAMESPACED = frozenset({TRAINJOB, "TrainingRuntime", "PersistentVolumeClaim"})
#: The resource each kind is listed as, for messages.
RESOURCES = {
    TRAINJOB: "trainjobs.trainer.kubeflow.org",
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


def list_for_audit(
    kubeconfig: str | None, context: str | None, timeout: float, namespaces: Sequence[str]
) -> list[Manifest]:
    """What `trainlint audit` reads: every TrainJob besides the objects of `list_objects`,
    the namespaced kinds (TrainJobs, TrainingRuntimes, PVCs) of `namespaces` only when
    any are named (listed in each, as a namespace's own permissions allow)."""
    return asyncio.run(_list_objects(kubeconfig, context, timeout, namespaces, audit=True))


async def _configuration(kubeconfig: str | None, context: str | None) -> Any:
    from kubernetes_asyncio import config

    if kubeconfig is not None and not Path(kubeconfig).is_file():
        raise ClusterError(f"cannot read the kubeconfig: {kubeconfig}: no such file")
    # What the client logs of a missing file is said once, below, as an error.
    logging.getLogger("kubernetes_asyncio").addHandler(logging.NullHandler())
    try:
        return await cluster_configuration(kubeconfig, context)
    except (config.ConfigException, OSError, ValueError, TypeError) as error:
        where = kubeconfig or "$KUBECONFIG or ~/.kube/config"
        raise ClusterError(f"cannot read the kubeconfig ({where}): {error}") from None


async def _list_objects(
    kubeconfig: str | None, context: str | None, timeout: float,
    namespaces: Sequence[str] = (), *, audit: bool = False,
) -> list[Manifest]:
    from kubernetes_asyncio import client

    configuration = await _configuration(kubeconfig, context)
    host = configuration.host
    kinds = (*KINDS, PRIORITY_CLASS[0], *((TRAINJOB,) if audit else ()))
    needs = AUDIT_NEEDS if audit else FROM_CLUSTER_NEEDS
    store = Store(kinds)
    source = ClusterSource(configuration)
    try:
        async with asyncio.timeout(timeout), client.ApiClient(configuration) as api_client:
            listers = {
                **source.listers(api_client),
                PRIORITY_CLASS[0]: (
                    client.SchedulingV1Api(api_client).list_priority_class, PRIORITY_CLASS[1]
                ),
            }
            if audit:
                listers[TRAINJOB] = (_trainjobs(api_client), "/".join(TRAINER_API))
            if namespaces:
                listers.update(_in_namespaces(api_client, listers))
            failures = await asyncio.gather(
                *(_list(source, store, kind, lister, api_version, host, namespaces, needs)
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


def _trainjobs(api_client: Any) -> Lister:
    from kubernetes_asyncio import client

    custom = client.CustomObjectsApi(api_client)

    async def list_trainjobs(**kwargs: Any) -> Any:
        return await custom.list_cluster_custom_object(*TRAINER_API, "trainjobs", **kwargs)

    return list_trainjobs


def _in_namespaces(
    api_client: Any, listers: dict[str, tuple[Lister, str]]
) -> dict[str, tuple[Lister, str]]:
    """The namespaced kinds' list calls of one namespace (given as the first argument)."""
    from kubernetes_asyncio import client

    custom = client.CustomObjectsApi(api_client)

    def namespaced(plural: str) -> Lister:
        async def list_namespaced(namespace: str, **kwargs: Any) -> Any:
            return await custom.list_namespaced_custom_object(
                *TRAINER_API, namespace, plural, **kwargs
            )
        return list_namespaced

    chosen = {
        "TrainingRuntime": namespaced("trainingruntimes"),
        TRAINJOB: namespaced("trainjobs"),
        "PersistentVolumeClaim": (
            client.CoreV1Api(api_client).list_namespaced_persistent_volume_claim
        ),
    }
    return {kind: (lister, listers[kind][1]) for kind, lister in chosen.items() if kind in listers}


async def _list(
    source: ClusterSource, store: Store, kind: str, lister: Lister, api_version: str, host: str,
    namespaces: Sequence[str], needs: str,
) -> None:
    """One kind into the store; a namespaced kind listed in each of `namespaces`, if any."""
    from kubernetes_asyncio.client.exceptions import ApiException

    resource = RESOURCES[kind]
    try:
        if namespaces and kind in NAMESPACED:
            found = await asyncio.gather(*(read_list(lister, name) for name in namespaces))
            store.replace(kind, ({"apiVersion": api_version, "kind": kind, **item}
                                 for items, _ in found for item in items))
        else:
            await source.list(store, kind, lister, api_version)
    except ApiException as error:
        raise ClusterError(_refusal(error, resource, host, needs)) from None
    except (aiohttp.ClientError, OSError) as error:
        raise ClusterError(f"cannot reach the cluster at {host}: {error}") from None
    except (LookupError, ValueError, TypeError):
        raise ClusterError(
            f"the cluster at {host} answered the listing of {resource} with something "
            "that is not a list"
        ) from None


#: What each command must be allowed to list, for a 403.
FROM_CLUSTER_NEEDS = (
    "`--from-cluster` needs `list` on runtimes, PVCs (all namespaces), StorageClasses and "
    "PriorityClasses"
)
AUDIT_NEEDS = (
    "`trainlint audit` needs `list` on TrainJobs, runtimes and PVCs (in every namespace, or "
    "in those named with `-n`), StorageClasses and PriorityClasses"
)


def _refusal(error: Any, resource: str, host: str, needs: str) -> str:
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
            f"not allowed to list {resource} at {host} (403 Forbidden: {detail}): {needs}"
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


#: Who owns the fields of the reports written (server-side apply).
FIELD_MANAGER = "trainlint"
REPORT_GROUP = ("wgpolicyk8s.io", "v1alpha2")


def apply_reports(
    kubeconfig: str | None, context: str | None, timeout: float,
    reports: Sequence[dict[str, Any]], namespaces: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Write each PolicyReport and ClusterPolicyReport by server-side apply (field manager
    `trainlint`, conflicts forced: the reports are trainlint's own), then delete the
    reports trainlint wrote before where nothing is audited now (a namespace whose
    TrainJobs are all gone), so no dashboard shows findings on objects that no longer
    exist. Only the namespaces audited (`namespaces`; all when none) are looked at.
    Returns the reports deleted."""
    return asyncio.run(_apply_reports(kubeconfig, context, timeout, reports, namespaces))


async def _apply_reports(
    kubeconfig: str | None, context: str | None, timeout: float,
    reports: Sequence[dict[str, Any]], namespaces: Sequence[str],
) -> list[dict[str, Any]]:
    from kubernetes_asyncio import client
    from kubernetes_asyncio.client.exceptions import ApiException

    configuration = await _configuration(kubeconfig, context)
    host = configuration.host
    try:
        async with asyncio.timeout(timeout), client.ApiClient(configuration) as api_client:
            custom = client.CustomObjectsApi(api_client)
            for report in reports:
                metadata = report["metadata"]
                options: dict[str, Any] = {
                    "field_manager": FIELD_MANAGER, "force": True,
                    "_content_type": "application/apply-patch+yaml",
                }
                try:
                    if "namespace" in metadata:
                        await custom.patch_namespaced_custom_object(
                            *REPORT_GROUP, metadata["namespace"], "policyreports",
                            metadata["name"], report, **options,
                        )
                    else:
                        await custom.patch_cluster_custom_object(
                            *REPORT_GROUP, "clusterpolicyreports", metadata["name"], report,
                            **options,
                        )
                except ApiException as error:
                    raise ClusterError(_apply_refusal(error, report, host)) from None
            try:
                return await _delete_stale(custom, reports, namespaces)
            except ApiException as error:
                raise ClusterError(_stale_refusal(error, host)) from None
    except TimeoutError:  # before OSError, of which it is one
        raise ClusterError(
            f"the cluster at {host} did not answer within {timeout:g} s "
            "(raise `--cluster-timeout`, or check the network)"
        ) from None
    except (aiohttp.ClientError, OSError) as error:
        raise ClusterError(f"cannot reach the cluster at {host}: {error}") from None


async def _delete_stale(
    custom: Any, written: Sequence[dict[str, Any]], namespaces: Sequence[str]
) -> list[dict[str, Any]]:
    """Delete trainlint's reports (its name and label) that this run did not write."""
    from kubernetes_asyncio.client.exceptions import ApiException

    from trainlint.report.policy_report import LABELS, NAME

    selector = ",".join(f"{key}={value}" for key, value in LABELS.items())
    kept = {(report["kind"], report["metadata"].get("namespace")) for report in written}
    if namespaces:
        found = [item for namespace in namespaces for item in (
            await custom.list_namespaced_custom_object(
                *REPORT_GROUP, namespace, "policyreports", label_selector=selector)
        )["items"]]
    else:
        found = (await custom.list_cluster_custom_object(
            *REPORT_GROUP, "policyreports", label_selector=selector))["items"]
    found = [{**item, "kind": "PolicyReport"} for item in found]
    if ("ClusterPolicyReport", None) not in kept:
        found += [{**item, "kind": "ClusterPolicyReport"} for item in (
            await custom.list_cluster_custom_object(
                *REPORT_GROUP, "clusterpolicyreports", label_selector=selector)
        )["items"]]
    deleted = []
    for item in found:
        metadata = item.get("metadata", {})
        namespace = metadata.get("namespace")
        labels = metadata.get("labels") or {}
        if (metadata.get("name") != NAME or (item["kind"], namespace) in kept
                or any(labels.get(key) != value for key, value in LABELS.items())):
            continue
        try:
            if namespace:
                await custom.delete_namespaced_custom_object(
                    *REPORT_GROUP, namespace, "policyreports", NAME)
            else:
                await custom.delete_cluster_custom_object(
                    *REPORT_GROUP, "clusterpolicyreports", NAME)
        except ApiException as error:
            if error.status != 404:  # gone already
                raise
            continue
        deleted.append(item)
    return deleted


def _stale_refusal(error: Any, host: str) -> str:
    detail = _message(error.body) or str(error.reason or "")
    if error.status == 403:
        return (f"not allowed to remove old reports at {host} (403 Forbidden: {detail}): "
                "`--apply` needs `list` and `delete` on policyreports and "
                "clusterpolicyreports.wgpolicyk8s.io to remove the reports of namespaces "
                "with nothing left to audit")
    return f"removing old reports at {host} failed: {error.status} {detail}"


def _apply_refusal(error: Any, report: dict[str, Any], host: str) -> str:
    where = report["metadata"].get("namespace")
    what = f"the {report['kind']}" + (f" of namespace {where}" if where else "")
    detail = _message(error.body) or str(error.reason or "")
    if error.status == 404:
        return (f"the cluster at {host} serves no {report['apiVersion']} {report['kind']} "
                f"(404: {detail}): install the PolicyReport CRDs (Kyverno and Policy Reporter "
                "ship them)")
    if error.status == 403:
        return (f"not allowed to write {what} at {host} (403 Forbidden: {detail}): `--apply` "
                "needs `patch` on policyreports and clusterpolicyreports.wgpolicyk8s.io")
    return f"writing {what} at {host} failed: {error.status} {detail}"
