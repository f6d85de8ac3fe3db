"""A warm run finds what a cold run finds, whatever one file of a repository becomes.

The cache serves a file's findings while its bytes, its settings and the answers to every
look-up its rules made are unchanged. That holds only if every look-up goes through the
context that records it: a generated repository of runtimes, TrainJobs and claims that
refer to each other is checked cold (filling the cache), one file is rewritten at
random, and the warm run must then report exactly what a cold run of the edited
repository reports.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_cache import codes, run_cached
from tests.test_check_properties import claim, runtime, trainjob

# Few names, some more likely than others, so that objects often find each other: two
# TrainJobs on one claim and directory, a runtime that a TrainJob names.
NAMESPACES = ("ml", "ml", "ml", "research")
RUNTIMES = ("torch-ckpt", "torch-ckpt", "torch-plain", "torch-distributed", "missing")
CLAIMS = ("ckpt", "ckpt", "data")
DIRECTORIES = ("/mnt/ckpt/a", "/mnt/ckpt/a", "/mnt/ckpt/b")
RUNTIME_KINDS = st.sampled_from(("TrainingRuntime", "ClusterTrainingRuntime"))
OBJECTS = st.one_of(
    st.builds(runtime, RUNTIME_KINDS, st.sampled_from(RUNTIMES[:4]),
              st.sampled_from(NAMESPACES), st.sampled_from(CLAIMS), st.booleans(), st.none()),
    st.builds(trainjob, st.sampled_from(("a", "b", "c")), st.sampled_from(NAMESPACES),
              RUNTIME_KINDS, st.sampled_from(RUNTIMES), st.sampled_from(DIRECTORIES)),
    st.builds(claim, st.sampled_from(CLAIMS), st.sampled_from(NAMESPACES),
              st.sampled_from(("ReadWriteOnce", "ReadWriteMany"))),
    st.just(""),  # a file emptied
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.lists(OBJECTS, min_size=2, max_size=6),
    edit=st.tuples(st.integers(min_value=0), OBJECTS),
)
def test_a_warm_run_after_an_edit_finds_what_a_cold_run_finds(
    files: list[str], edit: tuple[int, str]
) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        folder = root / "manifests"
        folder.mkdir()
        for number, text in enumerate(files):
            (folder / f"{number}.yaml").write_text(text)
        run_cached(folder, root / "cache")
        position, text = edit
        edited = folder / f"{position % len(files)}.yaml"
        before = edited.stat()
        edited.write_text(text)
        # A later time, as an edit has: a rewrite within the clock's tick, to the same
        # size, is one the cache cannot tell from no change (as git cannot).
        os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
        warm = run_cached(folder, root / "cache")
        shutil.rmtree(root / "cache")
        cold = run_cached(folder, root / "cold-cache")
        assert codes(warm) == codes(cold)
        assert [(f.span, f.message) for f in warm.findings] == [
            (f.span, f.message) for f in cold.findings
        ]
