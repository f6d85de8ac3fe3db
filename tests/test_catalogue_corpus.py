"""The silent-failure catalogue rules on the upstream runtimes and examples.

Each tag's folder is linted as one run at its own release with every rule; the findings of
the catalogue rules (TL250-TL299, TL303-TL399, TL403-TL499, TL500-TL599) must be exactly
those listed in `fixtures/corpus/<tag>.expected`, each under a comment that says why the
finding is true of that upstream manifest. `TRAINLINT_UPDATE_FIXTURES=1` rewrites the
files, keeping the comment of every finding that is still there; a new finding gets a
`TODO` comment, which fails the test until someone justifies it.
"""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, UPDATE, lint_files, shared_or_skip
from trainlint.config.settings import Settings
from trainlint.finding import Finding
from trainlint.release import parse_version

TAGS = {"v2.0.0": "2.0", "v2.1.0": "2.1", "v2.2.0": "2.2", "v2.3.0": "2.3", "HEAD-8c0f5059b": "2.3"}
CATALOGUE = (range(250, 300), range(303, 400), range(403, 500), range(500, 600))
FIXTURES = ROOT / "fixtures" / "corpus"
TODO = "# TODO: justify"
HEADER = (
    "# Catalogue findings on the upstream manifests of {tag}, linted at v{version}.\n"
    "# Each finding is preceded by why it is true of that manifest."
)


def catalogue(code: str) -> bool:
    return any(int(code[2:]) in codes for codes in CATALOGUE)


def render(finding: Finding) -> str:
    name = finding.file.rsplit("/", 1)[-1]
    return (
        f"{name}:{finding.span.line}:{finding.span.column}: {finding.code} "
        f"[{finding.severity.value}] {finding.message}"
    )


def parse(text: str) -> dict[str, list[str]]:
    """Finding line → the comment lines just above it (the header block is skipped)."""
    entries: dict[str, list[str]] = {}
    for block in text.strip().split("\n\n")[1:]:
        lines = block.splitlines()
        entries[lines[-1]] = lines[:-1]
    return entries


def write(tag: str, version: str, lines: list[str], old: dict[str, list[str]]) -> str:
    blocks = [HEADER.format(tag=tag, version=version)]
    blocks += ["\n".join([*(old.get(line) or [TODO]), line]) for line in lines]
    return "\n\n".join(blocks) + "\n"


@pytest.mark.parametrize(("tag", "version"), TAGS.items())
def test_catalogue_findings_on_upstream_manifests(tag: str, version: str) -> None:
    folder = shared_or_skip("corpus", "trainer", tag)
    settings = Settings(trainer_version=parse_version(version))
    findings = lint_files(*sorted(folder.glob("*.yaml")), settings=settings)
    lines = [render(finding) for finding in findings if catalogue(finding.code)]
    path = FIXTURES / f"{tag}.expected"
    old = parse(path.read_text()) if path.exists() else {}
    if UPDATE:
        path.write_text(write(tag, version, lines, old))
        old = parse(path.read_text())
    assert list(old) == lines, f"refresh with TRAINLINT_UPDATE_FIXTURES=1 and justify: {path}"
    for line, comments in old.items():
        assert comments and all(comment.startswith("#") for comment in comments), line
        assert TODO not in comments, f"finding without a justification in {path.name}: {line}"
