"""The rule pages of the documentation site: `docs/rules/TLnnn.md`, one per rule, and
`docs/rules/index.md`, all written from the rules' own metadata and docstrings.

`python -m trainlint.docs [FOLDER]` writes them (default `docs/rules`); a test fails while
the committed pages differ from what it would write, so they never drift from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

from trainlint.rule import PREVIEW_NOTE, Rule, all_rules

DEFAULT_FOLDER = Path("docs/rules")


def rule_page(rule: Rule) -> str:
    """One rule's page: what `trainlint rule CODE` prints, as Markdown."""
    lines = [
        f"# {rule.code} {rule.name}",
        "",
        f"Severity: {rule.severity.value}. Releases: {rule.releases}.",
    ]
    if rule.preview:
        lines += ["", PREVIEW_NOTE]
    if rule.remediation:
        lines += ["", f"Fix: {rule.remediation}"]
    lines += ["", rule.doc, ""]
    return "\n".join(lines)


def index_page(rules: list[Rule]) -> str:
    """The table of every rule, linking to its page."""
    lines = [
        "# Rules",
        "",
        "Every rule, by code. Preview rules are off by default (`--preview` turns them on).",
        "",
        "| code | name | severity | releases | summary |",
        "|---|---|---|---|---|",
    ]
    for rule in rules:
        name = f"{rule.name} (preview)" if rule.preview else rule.name
        cell = rule.summary.replace("|", "\\|")  # a pipe would end the table cell
        lines.append(
            f"| [{rule.code}]({rule.code}.md) | {name} | {rule.severity.value} "
            f"| {rule.releases} | {cell} |"
        )
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """File name → text of every page the rules folder holds."""
    rules = list(all_rules().values())
    written = {f"{rule.code}.md": rule_page(rule) for rule in rules}
    written["index.md"] = index_page(rules)
    return written


def write(folder: Path) -> list[str]:
    """Write the pages into `folder`, removing rule pages no rule has any more; the names
    of the files changed."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = pages()
    changed = []
    for stale in sorted(folder.glob("TL*.md")):
        if stale.name not in wanted:
            stale.unlink()
            changed.append(stale.name)
    for name, text in wanted.items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(name)
    return changed


def main(arguments: list[str]) -> int:
    folder = Path(arguments[0]) if arguments else DEFAULT_FOLDER
    changed = write(folder)
    print(f"{folder}: {len(changed)} page{'s' * (len(changed) != 1)} written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
