"""Accelerators by their device-plugin resource names, and the GPU count the controller reads.

A resource name says what it counts only when the device plugin that registers it is
known: `nvidia.com/gpu` counts GPUs, HAMi's `nvidia.com/gpumem` is megabytes of one, and
Intel's `gpu.intel.com/millicores` a share of one, though all three contain `gpu`. The
catalogue below lists names as their vendors document them; a name it does not list is
unknown, and rules say nothing about it. Config `device-resources` adds names or corrects
them (`"example.com/vgpu" = "gpu"`, `"example.com/vgpu-mem" = "share"`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from trainlint.document import mapping
from trainlint.render.quantity import count_of

#: What a resource counts: whole devices of a kind, or a `share` of one (memory, cores,
#: a percentage, a monitoring handle) that is no device count.
KINDS = ("gpu", "tpu", "npu", "hpu", "neuron", "share")

#: Device-plugin resource names, as the vendors document them.
CATALOGUE: Mapping[str, str] = {
    # NVIDIA device plugin (also the vGPU count under HAMi and Volcano's vGPU plugin).
    "nvidia.com/gpu": "gpu",
    # HAMi: memory per vGPU (MiB), its percentage, and the compute share per vGPU.
    "nvidia.com/gpumem": "share",
    "nvidia.com/gpumem-percentage": "share",
    "nvidia.com/gpucores": "share",
    # AMD GPU device plugin.
    "amd.com/gpu": "gpu",
    # Intel GPU device plugin: GPUs on the i915 and xe kernel drivers, their monitoring
    # handles, and the shares its resource management hands out.
    "gpu.intel.com/i915": "gpu",
    "gpu.intel.com/xe": "gpu",
    "gpu.intel.com/i915_monitoring": "share",
    "gpu.intel.com/xe_monitoring": "share",
    "gpu.intel.com/millicores": "share",
    "gpu.intel.com/memory.max": "share",
    "gpu.intel.com/tiles": "share",
    # MetaX GPUs (HAMi).
    "metax.com/gpu": "gpu",
    # Intel Gaudi (Habana) device plugin.
    "habana.ai/gaudi": "hpu",
    # AWS Neuron device plugin: whole devices, and single NeuronCores.
    "aws.amazon.com/neuron": "neuron",
    "aws.amazon.com/neurondevice": "neuron",
    "aws.amazon.com/neuroncore": "share",
    # GKE TPU chips.
    "google.com/tpu": "tpu",
}
#: Huawei's Ascend device plugin names each model: `huawei.com/Ascend910`,
#: `huawei.com/Ascend910B4`, `huawei.com/Ascend310P`... (HAMi's `...-memory` beside them
#: is a share).
ASCEND = re.compile(r"huawei\.com/ascend\d+[a-z0-9]*", re.IGNORECASE)


def kind(name: str, extra: Mapping[str, str] | None = None) -> str | None:
    """What resource `name` counts (`gpu`, `npu`..., or `share`), None when unknown."""
    if extra and name in extra:
        return extra[name]
    if name in CATALOGUE:
        return CATALOGUE[name]
    if ASCEND.fullmatch(name):
        return "npu"
    return "share" if ASCEND.match(name) and name.lower().endswith("-memory") else None


def gpu_named(resources: Any) -> dict[str, Any]:
    """The resources the controller takes for GPUs (any name containing `gpu`, any case),
    from `requests` if any, else `limits`, as its `GetNumGPUPerNode` does; the quantity
    of each as written."""
    parts = mapping(resources)
    for part in ("requests", "limits"):
        found = {
            name: quantity for name, quantity in mapping(parts.get(part)).items()
            if "gpu" in str(name).lower()
        }
        if found and any(count_of(quantity) for quantity in found.values()):
            return found
    return {}


def controller_gpu_count(resources: Any) -> int | None:
    """The GPUs per node the controller reads from a container's resources: 0 without a
    name containing `gpu`; None when it would pick among names of different quantities
    (it walks a Go map, in random order) or a quantity is not a plain number."""
    counts = {count_of(quantity) for quantity in gpu_named(resources).values()}
    if not counts:
        return 0
    return counts.pop() if len(counts) == 1 and None not in counts else None


def whole(quantity: object, default: int | None = None) -> int | None:
    """A quantity as a whole number (`1`, `"8"`, `"4000m"`), `default` when it is unset,
    None for anything else (`500m`)."""
    return default if quantity is None else count_of(quantity)
