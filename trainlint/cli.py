"""The command line: `trainlint check`, `trainlint rule`, `trainlint rules`."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from trainlint import __version__

if TYPE_CHECKING:
    from trainlint.document import Loaded
    from trainlint.rule import Rule

#: Extensions read when walking a folder; files named on the command line are always read.
EXTENSIONS = (".yaml", ".yml", ".json")
STDIN = "-"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="trainlint")
def main() -> None:
    """Lint Kubeflow Trainer v2 manifests for the failures the cluster accepts silently."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option(
    "--trainer-version", default="2.3", show_default=True, metavar="VERSION",
    help="Trainer release the manifests target (2.0, 2.1, 2.2, 2.3).",
)
@click.option("--select", metavar="CODES", help="Comma-separated codes, prefixes or names to run.")
@click.option("--ignore", metavar="CODES", help="Comma-separated codes, prefixes or names to skip.")
@click.option(
    "--output-format", type=click.Choice(["full", "concise", "json"]),
    help="How findings are printed [default: full on a terminal, else concise].",
)
@click.option("--stdin-filename", default="<stdin>", help="Name shown for input read from `-`.")
def check(
    paths: tuple[str, ...], trainer_version: str, select: str | None, ignore: str | None,
    output_format: str | None, stdin_filename: str,
) -> None:
    """Check files and folders (recursively: *.yaml, *.yml, *.json); `-` reads stdin."""
    from trainlint.engine import Settings, lint
    from trainlint.report import renderer
    from trainlint.rule import parse_version

    try:
        version = parse_version(trainer_version)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--trainer-version") from None
    settings = Settings(
        trainer_version=version,
        select=_selectors(select, "--select") or ("ALL",),
        ignore=_selectors(ignore, "--ignore"),
    )
    inputs = [_read(name, stdin_filename) for name in _discover(paths or (".",))]
    findings = lint(inputs, settings)
    fmt = output_format or ("full" if sys.stdout.isatty() else "concise")
    color = fmt == "full" and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    click.echo(renderer(fmt)(findings, color=color), nl=False)
    sys.exit(1 if findings else 0)


@main.command("rule")
@click.argument("selector")
def show_rule(selector: str) -> None:
    """Print the documentation of one rule, by code or name."""
    from trainlint.rule import find_rule

    found = find_rule(selector)
    if found is None:
        raise click.BadParameter(f"no rule {selector!r} (see `trainlint rules`)")
    click.echo(f"# {found.code} {found.name}\n")
    click.echo(f"Severity: {found.severity.value}. Releases: {found.releases}.")
    if found.help:
        click.echo(f"Fix: {found.help}")
    click.echo(f"\n{found.doc}")


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table")
def list_rules(fmt: str) -> None:
    """List every rule."""
    import json

    from trainlint.rule import all_rules

    rules = list(all_rules().values())
    if fmt == "json":
        click.echo(json.dumps([_rule_entry(rule) for rule in rules], indent=2))
    elif fmt == "markdown":
        click.echo("| code | name | severity | releases | summary |\n|---|---|---|---|---|")
        for rule in rules:
            entry = _rule_entry(rule)
            click.echo(
                f"| {rule.code} | {rule.name} | {rule.severity.value} | {rule.releases} "
                f"| {entry['summary']} |"
            )
    else:
        width = max(len(rule.name) for rule in rules)
        for rule in rules:
            click.echo(f"{rule.code}  {rule.name:<{width}}  {rule.severity.value:<7}  {rule.releases}")


def _rule_entry(rule: Rule) -> dict[str, str]:
    what = rule.doc.split("## What it does", 1)[-1].split("##", 1)[0]
    return {
        "code": rule.code, "name": rule.name, "severity": rule.severity.value,
        "releases": rule.releases, "summary": " ".join(what.split()).split(". ")[0].rstrip("."),
        "fix": rule.help or "",
    }


def _selectors(value: str | None, option: str) -> tuple[str, ...]:
    from trainlint.rule import all_rules, matches

    selectors = tuple(part.strip() for part in (value or "").split(",") if part.strip())
    for selector in selectors:
        if not any(matches(rule, [selector]) for rule in all_rules().values()):
            raise click.BadParameter(f"no rule matches {selector!r}", param_hint=option)
    return selectors


def _discover(paths: Sequence[str]) -> Iterator[str]:
    """Named files as they are; folders walked for manifest files, hidden folders skipped."""
    for name in paths:
        if name == STDIN:
            yield name
            continue
        path = Path(name)
        if path.is_dir():
            for root, folders, files in os.walk(path):
                folders[:] = sorted(folder for folder in folders if not folder.startswith("."))
                for file in sorted(files):
                    if file.endswith(EXTENSIONS):
                        yield os.path.join(root, file)
        elif path.exists():
            yield name
        else:
            raise click.BadParameter(f"{name}: no such file or folder", param_hint="PATHS")


def _read(name: str, stdin_filename: str) -> Loaded:
    from trainlint.document import LoadProblem, Span, decode, load

    try:
        data = sys.stdin.buffer.read() if name == STDIN else Path(name).read_bytes()
    except OSError as error:
        problem = LoadProblem("TL001", f"cannot read the file: {error.strerror}", Span(1, 1, 1, 1))
        return load("", name, [problem])
    display = stdin_filename if name == STDIN else name
    text, problems = decode(data, display)
    return load(text, display, problems)


def run() -> None:
    """Entry point: any unexpected error is a clear message and exit 2, never a traceback."""
    try:
        main()
    except Exception as error:  # noqa: BLE001 - the last line of defence
        click.echo(f"trainlint: internal error: {type(error).__name__}: {error}", err=True)
        sys.exit(2)
