"""The six checkpoint rules on the upstream runtimes and examples, each at its own release.

Upstream manifests are correct by construction for TL201/TL202/TL301/TL302. The torchtune
runtimes write `output_dir=/workspace/output` (a checkpoint directory, on a PVC) with the
default 30 s grace period, but nothing in their command saves on SIGTERM, so the grace
period loses no checkpoint and TL402 stays silent: none of these rules fires.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint_files, shared_or_skip
from trainlint.config.settings import Settings
from trainlint.release import parse_version

TAGS = {"v2.0.0": "2.0", "v2.1.0": "2.1", "v2.2.0": "2.2", "v2.3.0": "2.3", "HEAD-8c0f5059b": "2.3"}
CORE = ("TL201", "TL202", "TL301", "TL302", "TL401", "TL402")
TUNE = "manifests__base__runtimes__torchtune__"
LLAMA = (f"{TUNE}llama3_2__llama3_2_1B.yaml", f"{TUNE}llama3_2__llama3_2_3B.yaml")
QWEN = (f"{TUNE}qwen2_5__qwen2_5_1.5B.yaml",)


@pytest.mark.parametrize(("tag", "version"), TAGS.items())
def test_upstream_manifests_at_their_release(tag: str, version: str) -> None:
    folder = shared_or_skip("corpus", "trainer", tag)
    settings = Settings(trainer_version=parse_version(version), select=CORE)
    findings = lint_files(*sorted(folder.glob("*.yaml")), settings=settings)
    assert [(finding.code, finding.file.rsplit("/", 1)[-1]) for finding in findings] == []
    torchtune = LLAMA if tag == "v2.0.0" else LLAMA + QWEN
    assert all((folder / name).exists() for name in torchtune)
