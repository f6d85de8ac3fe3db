"""The defaults the JobSet webhook, the JobSet CRD and Kubernetes give a JobSet the
controller left unset, marked as defaults (sigs.k8s.io/jobset `Default()` and its API
markers, for the JobSet release each Trainer release installs; k8s.io/api batch/v1 and
core/v1 defaults)."""

from __future__ import annotations

from trainlint.document import mapping, mappings
from trainlint.render import JOBS, Version
from trainlint.render.tree import Origin, Tree, injected

JOBSET_WEBHOOK = injected("default (JobSet webhook)")
JOBSET_API = injected("default (JobSet API)")
JOB = injected("default (Kubernetes Job)")
POD = injected("default (Kubernetes Pod)")
#: Kubernetes' `backoffLimit`, and the one it takes with `backoffLimitPerIndex`.
BACKOFF_LIMIT = 6
PER_INDEX_BACKOFF_LIMIT = 2_147_483_647
GRACE_SECONDS = 30


def apply_defaults(tree: Tree, version: Version) -> None:
    spec = mapping(tree.get(("spec",)))
    on_spec: list[tuple[str, object, Origin]] = [
        (key, value, JOBSET_WEBHOOK) for key, value in (
            ("successPolicy", {"operator": "All"}),
            ("startupPolicy", {"startupPolicyOrder": "AnyOrder"}),
            ("network", {"enableDNSHostnames": True, "publishNotReadyAddresses": True}),
        ) if not isinstance(spec.get(key), dict)
    ]
    if on_spec:
        tree.put_keys(("spec",), on_spec)
    network = spec.get("network")
    for key in ("enableDNSHostnames", "publishNotReadyAddresses"):
        if isinstance(network, dict) and key not in network:
            tree.put(("spec", "network", key), True, JOBSET_WEBHOOK)
    failure = spec.get("failurePolicy")
    if isinstance(failure, dict):
        if "restartStrategy" not in failure:
            tree.put(("spec", "failurePolicy", "restartStrategy"), "Recreate", JOBSET_API)
        for index, rule in mappings(failure.get("rules")):
            if not rule.get("name"):
                tree.put(("spec", "failurePolicy", "rules", index, "name"),
                         f"failurePolicyRule{index}", JOBSET_WEBHOOK)
    if version >= (2, 2):
        for index, policy in mappings(spec.get("volumeClaimPolicies")):
            if "retentionPolicy" not in policy:
                tree.put(("spec", "volumeClaimPolicies", index, "retentionPolicy"),
                         {"whenDeleted": "Delete"}, JOBSET_WEBHOOK)
    for index, job in mappings(tree.get(JOBS)):
        _job_defaults(tree, (*JOBS, index), job, version)


def _job_defaults(tree: Tree, path: tuple[str | int, ...], job: dict[str, object],
                  version: Version) -> None:
    """The defaults of a replicatedJob, its Job and its pod, each mapping changed once."""
    on_job: list[tuple[str, object, Origin]] = []
    if "replicas" not in job:
        on_job.append(("replicas", 1, JOBSET_API))
    if version >= (2, 1) and "groupName" not in job:
        on_job.append(("groupName", "default", JOBSET_API))
    job_spec = mapping(mapping(job.get("template")).get("spec"))
    on_spec: list[tuple[str, object, Origin]] = []
    if "completionMode" not in job_spec:
        on_spec.append(("completionMode", "Indexed", JOBSET_WEBHOOK))
    if "backoffLimit" not in job_spec:
        limit = PER_INDEX_BACKOFF_LIMIT if "backoffLimitPerIndex" in job_spec else BACKOFF_LIMIT
        on_spec.append(("backoffLimit", limit, JOB))
    pod_spec = mapping(mapping(job_spec.get("template")).get("spec"))
    on_pod: list[tuple[str, object, Origin]] = []
    if not pod_spec.get("restartPolicy"):
        on_pod.append(("restartPolicy", "OnFailure", JOBSET_WEBHOOK))
    if "terminationGracePeriodSeconds" not in pod_spec:
        on_pod.append(("terminationGracePeriodSeconds", GRACE_SECONDS, POD))
    for keys, items in (((), on_job), (("template", "spec"), on_spec),
                        (("template", "spec", "template", "spec"), on_pod)):
        if items:
            tree.put_keys((*path, *keys), items)
