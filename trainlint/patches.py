"""Runtime patches (`spec.runtimePatches`, from v2.2) as written: where a patch names the
jobs it patches, and the `manager` the Trainer webhook requires of it, checked as
apimachinery checks it and told in its words. Rules read them without the render."""

from __future__ import annotations

import re

#: From a runtime patch to the replicatedJobs it patches.
PATCH_JOBS: tuple[str, ...] = ("trainingRuntimeSpec", "template", "spec", "replicatedJobs")

#: A runtime patch's `manager`, checked as apimachinery does.
SUBDOMAIN_FORMAT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
PATH_FORMAT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
#: apimachinery's texts, as the webhook prints them.
SUBDOMAIN_ERROR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    f"regex used for validation is '{SUBDOMAIN_FORMAT}')"
)
PATH_ERROR = f"Invalid path (regex used for validation is '{PATH_FORMAT}')"
NOT_PREFIXED = 'must be a domain-prefixed path (such as "acme.io/foo")'


def domain_prefixed_path_errors(value: str) -> list[str]:
    """apimachinery's `IsDomainPrefixedPath`, which the Trainer webhook applies to a runtime
    patch's `manager`: the details of its errors, in its order."""
    if not value:
        return ["Required value"]
    host, slash, path = value.partition("/")
    if not slash or not host or not path:
        return [NOT_PREFIXED]
    errors = []
    if len(host) > 253:
        errors.append("must be no more than 253 characters")
    if not re.fullmatch(SUBDOMAIN_FORMAT, host):
        errors.append(SUBDOMAIN_ERROR)
    if not re.fullmatch(PATH_FORMAT, path):
        errors.append(PATH_ERROR)
    return errors
