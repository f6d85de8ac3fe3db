"""Precision on real manifests: every default finding, judged by hand, counted per rule.

Three sets of manifests nobody on this project wrote: `../shared/corpus/field/` (the Trainer
and Kueue documentation's YAML, judged in its `verdicts.json`, and the findings of rules
added since in `fixtures/field/corpus-verdicts.json`), Trainer's own examples in
`../shared/corpus/trainer/` (judged in `fixtures/field/upstream-verdicts.json`) and
`fixtures/field/` (platforms' docs and e2e tests, judged in `fixtures/field/verdicts.json`).
Each unit (a documentation page, an upstream examples folder, a fixture folder) is linted
on its own with the default settings,
and each finding is looked up by file, line and code: `true`, `false`, `debatable`, or
unjudged. Precision is the share of findings judged true.

    python benchmarks/field.py            # the table, per rule and in total
    python benchmarks/field.py --findings # also every finding with its verdict

`tests/test_field.py` holds the same judgments as assertions.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from trainlint.config.settings import Settings
from trainlint.document import decode
from trainlint.engine.run import lint
from trainlint.finding import Finding
from trainlint.loader import load

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "field"
FIXTURES = ROOT / "fixtures" / "field"
#: Trainer's shipped examples, read where they lie (the corpus is never copied here); one
#: unit per upstream folder, as a user applies `examples/yaml/` or `examples/flux/`.
UPSTREAM = ROOT.parent / "shared" / "corpus" / "trainer"
UPSTREAM_UNITS = {
    "HEAD-8c0f5059b/examples/yaml": "HEAD-8c0f5059b/examples__yaml__*.yaml",
    "HEAD-8c0f5059b/examples/flux": "HEAD-8c0f5059b/examples__flux__*.yaml",
}
#: A documentation block of the corpus: `<page>.md.L<line>.yaml`.
_BLOCK = re.compile(r"\.L\d+\.yaml$")

#: How each rule's `debatable` findings are settled: kept (reported by default) or not,
#: and why. One decision per rule, for the corpus and the fixtures alike.
DEBATABLE: dict[str, tuple[bool, str]] = {
    "TL201": (
        False,
        "a runtime with no trainer label, checked alone, cannot know whether a TrainJob "
        "will set the values the controller drops: the rule reports the runtime only with "
        "evidence (a TrainJob of the run that sets one, its own `mlPolicy.numNodes` that "
        "reaches no job, the SDK's framework label, or a misplaced label) and reports the "
        "TrainJob that sets a dropped value",
    ),
    "TL414": (
        False,
        "with no command (the image's entrypoint) or no torchrun, nothing shows a static "
        "rendezvous that a restarted rank could not rejoin; and where torchrun runs it "
        "(upstream's own multi-node examples), the peers of a crashed rank fail on the NCCL "
        "timeout and restart too, so whether retries hang or recover is not in the manifest: "
        "the rule moved to preview",
    ),
    "TL270": (
        False,
        "the label is set on purpose (upstream's flux and data-cache runtimes carry it) and "
        "names no mistake; the denials it skips are reported by TL203/TL204/TL259: the rule "
        "moved to preview",
    ),
    "TL412": (
        False,
        "a deadline is set on purpose and the wait for pods is in no manifest: the rule "
        "moved to preview",
    ),
    "TL301": (
        False,
        "where a checkpoint directory is on no volume only because the release checked "
        "prunes the override that mounted it (TL007 beside it), the finding is true of that "
        "release, though the run, whose model was on the same volume, fails before any "
        "restart: one cause, two findings (a third source did the same, its script "
        "never resuming): dropped, TL007 reports the cause",
    ),
    "TL102": (
        False,
        "a runtime the page does not show is no problem of the TrainJob, and "
        "`torch-distributed` is one the release installs (bundled): TL102 is in preview",
    ),
}


@dataclass(frozen=True)
class Verdict:
    code: str
    verdict: str
    why: str


@dataclass(frozen=True)
class Unit:
    """Manifests checked together (a page's blocks, a fixture folder), and the verdicts
    of their findings by (file, line, code), file names relative to `base`."""

    name: str
    files: tuple[Path, ...]
    base: Path
    verdicts: dict[tuple[str, int, str], Verdict]

    def lint(self, settings: Settings | None = None) -> list[Finding]:
        loaded = []
        for path in self.files:
            text, problems = decode(path.read_bytes(), str(path))
            loaded.append(load(text, str(path), problems))
        return lint(loaded, settings or Settings())

    def key(self, finding: Finding) -> tuple[str, int, str]:
        return Path(finding.file).relative_to(self.base).as_posix(), finding.span.line, finding.code


def _verdicts(file: Path) -> dict[tuple[str, int, str], Verdict]:
    entries = json.loads(file.read_text(encoding="utf-8"))
    return {
        (entry["file"], entry["line"], entry["code"]):
        Verdict(entry["code"], entry["verdict"], entry["why"])
        for entry in entries
    }


def units() -> list[Unit]:
    """The corpus pages and upstream examples (when `../shared` is there) and the fixture
    folders."""
    found: list[Unit] = []
    if CORPUS.is_dir():
        # The corpus is read where it lies, never written: what a rule added since finds
        # there is judged here.
        verdicts = {**_verdicts(CORPUS / "verdicts.json"),
                    **_verdicts(FIXTURES / "corpus-verdicts.json")}
        pages: dict[str, list[Path]] = defaultdict(list)
        for path in sorted(CORPUS.rglob("*.yaml")):
            pages[_BLOCK.sub("", path.relative_to(CORPUS).as_posix())].append(path)
        found += [
            Unit(f"corpus/{page}", tuple(paths), CORPUS, _unit_verdicts(verdicts, paths, CORPUS))
            for page, paths in pages.items()
        ]
    if UPSTREAM.is_dir():
        verdicts = _verdicts(FIXTURES / "upstream-verdicts.json")
        for name, pattern in UPSTREAM_UNITS.items():
            paths = sorted(UPSTREAM.glob(pattern))
            found.append(
                Unit(f"upstream/{name}", tuple(paths), UPSTREAM,
                     _unit_verdicts(verdicts, paths, UPSTREAM))
            )
    verdicts = _verdicts(FIXTURES / "verdicts.json")
    folders: dict[Path, list[Path]] = defaultdict(list)
    for path in sorted(FIXTURES.rglob("*.yaml")):
        folders[path.parent].append(path)
    found += [
        Unit(
            f"fixtures/{folder.relative_to(FIXTURES).as_posix()}", tuple(paths), FIXTURES,
            _unit_verdicts(verdicts, paths, FIXTURES),
        )
        for folder, paths in folders.items()
    ]
    return found


def _unit_verdicts(
    verdicts: dict[tuple[str, int, str], Verdict], paths: Iterable[Path], base: Path
) -> dict[tuple[str, int, str], Verdict]:
    names = {path.relative_to(base).as_posix() for path in paths}
    return {key: verdict for key, verdict in verdicts.items() if key[0] in names}


def judged(unit: Unit, findings: Iterable[Finding]) -> list[tuple[Finding, str]]:
    """Each finding with its verdict (`unjudged` when none is recorded)."""
    return [
        (finding, unit.verdicts[unit.key(finding)].verdict if unit.key(finding) in unit.verdicts
         else "unjudged")
        for finding in findings
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--findings", action="store_true", help="List every finding.")
    options = parser.parse_args()
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for unit in units():
        for finding, verdict in judged(unit, unit.lint()):
            counts[finding.code][verdict] += 1
            if options.findings:
                print(f"{verdict:<9}  {unit.key(finding)[0]}:{finding.span.line}  {finding.code}")
    columns = ("true", "false", "debatable", "unjudged")
    print(f"{'rule':<6}  " + "  ".join(f"{column:>9}" for column in columns))
    total: Counter[str] = Counter()
    for code in sorted(counts):
        total += counts[code]
        print(f"{code:<6}  " + "  ".join(f"{counts[code][column]:>9}" for column in columns))
    print(f"{'all':<6}  " + "  ".join(f"{total[column]:>9}" for column in columns))
    findings = sum(total.values())
    if findings:
        decided = total["true"] + total["false"]
        print(
            f"precision: {total['true'] / findings:.1%} of {findings} findings judged true"
            + (f"; {total['true'] / decided:.1%} of the {decided} judged true or false"
               if decided else "")
        )
    if not CORPUS.is_dir():
        print(f"({CORPUS} is absent: fixtures only)")


if __name__ == "__main__":
    main()
