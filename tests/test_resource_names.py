"""Container resource names are judged as Kubernetes' `validateContainerResourceName`
judges them (TL266): the first complaint of its, or none."""

from __future__ import annotations

import pytest

from trainlint.rules.tl266_invalid_resource_name import refusal

SHAPE = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
         "with an alphanumeric character")


@pytest.mark.parametrize("name", [
    "cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "nvidia.com/gpu", "amd.com/gpu",
    "nvidia.com/mig-1g.5gb", "rdma/hca_shared_devices_a", "kubernetes.io/batch", "x.y/A_b.c",
])
def test_names_kubernetes_takes(name: str) -> None:
    assert refusal(name) is None


@pytest.mark.parametrize(("name", "said"), [
    ("nvidia.com", "must be a standard resource for containers"),
    ("gpu", "must be a standard resource for containers"),
    ("storage", "must be a standard resource for containers"),
    ("a/b/c", f"a qualified name {SHAPE}"),
    ("/gpu", "prefix part must be non-empty"),
    ("Nvidia.com/gpu", "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
     "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
     "character"),
    ("nvidia.com/", "name part must be non-empty"),
    ("nvidia.com/-gpu", f"name part {SHAPE}"),
    ("gpu ", f"name part {SHAPE}"),
    ("x" * 64, "name part must be no more than 63 characters"),
    ("requests.nvidia.com/gpu", "doesn't follow extended resource name standard"),
    (f"{'a' * 250}/gpu", "doesn't follow extended resource name standard"),
    (f"{'a' * 254}/gpu", "prefix part a lowercase RFC 1123 subdomain must consist of lower "
     "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
     "character"),
])
def test_names_kubernetes_refuses(name: str, said: str) -> None:
    assert refusal(name) == said
