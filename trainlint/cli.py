"""The command line: `trainlint check`, `trainlint config`, `trainlint rule`, `trainlint rules`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

import click

from trainlint import __version__
from trainlint.config.defaults import DEFAULT_CACHE_DIR, DEFAULT_STDIN_NAME
from trainlint.report import FORMATS, Output, shown

if TYPE_CHECKING:
    from trainlint.config.builders import Built
    from trainlint.config.settings import Settings
    from trainlint.document import Fragment, Loaded, Manifest, Source
    from trainlint.engine.run import Amend, Run
    from trainlint.finding import Finding, ObjectRef
    from trainlint.fix import Request as FixRequest
    from trainlint.loader import Spread
    from trainlint.rule import Rule
    from trainlint.run.cache import Cache

STDIN = "-"


#: Options of other linters people type out of habit, and what trainlint has instead.
ELSEWHERE = {
    "--show-settings": "`trainlint config [PATH]` prints the settings that apply to PATH",
    "--add-noqa": "did you mean --add-suppressions?",
    "--format": "did you mean --output-format?",
    "--output": "did you mean --output-file?",
}


class Command(click.Command):
    """A command whose unknown options are answered with the option meant, or with
    what trainlint has instead of another linter's option."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as error:
            from trainlint.suggest import closest

            name = error.option_name
            instead = ELSEWHERE.get(name)
            if instead is None:
                known = [opt for param in self.params for opt in param.opts if opt[:2] == "--"]
                meant = closest(name, known)
                instead = f"did you mean {meant}?" if meant else None
            message = f"no such option: {name}" + (f"; {instead}" if instead else "")
            raise click.NoSuchOption(name, message=message, ctx=ctx) from None


class Group(click.Group):
    command_class = Command


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="trainlint")
def main() -> None:
    """Lint Kubeflow Trainer v2 manifests for the failures the cluster accepts silently."""


class Failure(click.ClickException):
    """A usage, configuration or output error: its message, and exit status 2."""

    exit_code = 2


_CONFIG_OPTIONS = (
    click.option(
        "--config", "config_file", metavar="PATH",
        help="Use this configuration file for every input instead of searching for one.",
    ),
    click.option("--isolated", is_flag=True, help="Ignore every configuration file."),
)


_SELECTION_OPTIONS = (
    click.option(
        "--trainer-version", metavar="VERSION",
        help="Trainer release the manifests target (2.0, 2.1, 2.2, 2.3) [default: 2.3].",
    ),
    click.option(
        "--kubernetes-version", metavar="VERSION",
        help="Kubernetes release of the cluster, for the schemas of core objects [default: 1.33].",
    ),
    click.option(
        "--select", metavar="CODES", help="Comma-separated codes, prefixes or names to run."
    ),
    click.option("--extend-select", metavar="CODES", help="Codes to run on top of `select`."),
    click.option(
        "--ignore", metavar="CODES", help="Comma-separated codes, prefixes or names to skip."
    ),
    click.option(
        "--preview", is_flag=True, default=None,
        help="Also run the preview rules (off by default; see `trainlint rules --preview`).",
    ),
)
_REPORT_OPTIONS = (
    click.option(
        "--output-format", metavar="FORMAT[:PATH],...", envvar="TRAINLINT_OUTPUT_FORMAT",
        callback=lambda ctx, _param, value: _outputs(ctx, value),
        help=f"How findings are printed: {', '.join(FORMATS)}; `FORMAT:PATH` writes one to a "
        "file, and several can be given, e.g. `github,sarif:trainlint.sarif` [default: "
        "$TRAINLINT_OUTPUT_FORMAT, else github in GitHub Actions, full on a terminal, else "
        "concise].",
    ),
    click.option(
        "--color", type=click.Choice(["auto", "always", "never"]), default="auto",
        show_default=True,
        help="Color the `full` format: auto is on a terminal unless $NO_COLOR is set "
        "(or $FORCE_COLOR forces it).",
    ),
    click.option(
        "--output-file", type=click.Path(dir_okay=False, path_type=Path),
        help="Write the report to this file instead of standard output.",
    ),
    click.option("--statistics", is_flag=True, help="Print how many findings each rule has."),
    click.option(
        "--fail-on", type=click.Choice(["warning", "error"]),
        help="The least severity that makes the exit status 1 [default: `fail-on`, warning].",
    ),
    click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings."),
)
#: How to reach the cluster (`check --from-cluster`, `audit`).
_CLUSTER_OPTIONS = (
    click.option(
        "--kubeconfig", type=click.Path(dir_okay=False, path_type=str),
        help="The kubeconfig file to reach the cluster [default: $KUBECONFIG, ~/.kube/config].",
    ),
    click.option(
        "--context-name", metavar="NAME",
        help="The kubeconfig context [default: the current one].",
    ),
    click.option(
        "--cluster-timeout", type=click.FloatRange(min=0, min_open=True), default=15.0,
        metavar="SECONDS", show_default=True, help="How long reading the cluster may take.",
    ),
)


CommandFunction = Callable[..., None]


def _options(
    group: tuple[Callable[[Any], Any], ...],
) -> Callable[[CommandFunction], CommandFunction]:
    """Apply a group of options shared by several commands, in their order."""

    def apply(command: CommandFunction) -> CommandFunction:
        for option in reversed(group):
            command = option(command)
        return command

    return apply


_config_options = _options(_CONFIG_OPTIONS)
_no_bundled_runtimes = click.option(
    "--no-bundled-runtimes", is_flag=True,
    help="Do not assume the ClusterTrainingRuntimes the Trainer release installs "
    "(config `bundled-runtimes = false`).",
)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@_config_options
@_options(_SELECTION_OPTIONS)
@_options(_REPORT_OPTIONS)
@click.option(
    "--stdin-filename", default=DEFAULT_STDIN_NAME, help="Name shown for input read from `-`."
)
@click.option("--fix", is_flag=True, help="Apply safe fixes in place (`-`: print the fixed text).")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that may change behaviour.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option("--show-fixes", is_flag=True, help="List the fixes applied, by file and rule.")
@click.option("--fix-only", is_flag=True, help="Apply fixes without reporting what is left.")
@click.option(
    "--write-outside-tree", is_flag=True,
    help="Let fixes write files that symbolic links lead to outside the folders checked.",
)
@click.option(
    "--add-suppressions", is_flag=True,
    help="Add a `# trainlint: disable=CODE` comment for every finding (to adopt trainlint "
    "on manifests as they are); nothing is added to what is already silenced.",
)
@click.option(
    "--jobs", "-j", type=click.IntRange(min=0), default=0, metavar="N",
    help="Processes to read and check with [default: 0, one per available core].",
)
@click.option("--no-cache", is_flag=True, help="Check every file again; read and write no cache.")
@click.option(
    "--watch", is_flag=True,
    help="Check again whenever a file under PATHS changes (needs the `watch` extra).",
)
@click.option(
    "--cache-dir", type=click.Path(file_okay=False, path_type=Path),
    help=f"Where findings of unchanged files are kept [default: `cache-dir`, {DEFAULT_CACHE_DIR}].",
)
@click.option(
    "--context", "context_paths", multiple=True, metavar="PATH", type=click.Path(path_type=str),
    help="A file or folder whose runtimes, PVCs, StorageClasses, PriorityClasses and "
    "ConfigMaps checks may refer to, never reported on (repeatable; added to config "
    "`context`).",
)
@_no_bundled_runtimes
@click.option(
    "--from-cluster", is_flag=True,
    help="Also read runtimes, PVCs, StorageClasses and PriorityClasses from the cluster "
    "(list calls only; needs the `serve` extra); the cluster then stands for the bundled "
    "runtimes, and no cache is used.",
)
@_options(_CLUSTER_OPTIONS)
@click.option(
    "--allow-empty", is_flag=True,
    help="Exit 0 when the paths hold no Kubernetes object (a pre-commit hook given only "
    "other YAML files) instead of 2.",
)
@click.option(
    "--base", "base", metavar="REV",
    help="Check the change since this git revision (e.g. origin/main): objects are compared "
    "with their state at REV, and only new or changed objects are reported.",
)
@click.option(
    "--base-all", is_flag=True, help="With --base: report on every object, changed or not.",
)
def check(
    paths: tuple[str, ...], config_file: str | None, isolated: bool,
    trainer_version: str | None, kubernetes_version: str | None, select: str | None,
    extend_select: str | None, ignore: str | None, preview: bool | None,
    output_format: list[Output] | None, color: str,
    output_file: Path | None, statistics: bool, fail_on: str | None, exit_zero: bool,
    stdin_filename: str,
    fix: bool, unsafe_fixes: bool, diff: bool, show_fixes: bool, fix_only: bool,
    write_outside_tree: bool, add_suppressions: bool, jobs: int, no_cache: bool, watch: bool,
    cache_dir: Path | None, context_paths: tuple[str, ...], no_bundled_runtimes: bool,
    from_cluster: bool, kubeconfig: str | None, context_name: str | None,
    cluster_timeout: float, allow_empty: bool, base: str | None, base_all: bool,
) -> None:
    """Check files and folders (recursively: *.yaml, *.yml, *.json); `-` reads stdin.

    With `--base REV`, each object is paired with the object of the same apiVersion, kind,
    namespace and name at REV in the repository of PATHS (in the file of the same path, or
    the one of its name if its file moved), so update rules see what the change does to
    it; a PR check reports only the objects it adds or changes.

    Exit status: 0 clean, 1 findings at or above `fail-on` (with `--diff`: something to
    fix; with `--fix-only`: never), 2 usage or configuration error, or no Kubernetes
    object in the paths (unless `--allow-empty`).
    """
    from functools import partial

    from trainlint.engine.run import Run
    from trainlint.run import parallel, process

    process.collector_off()
    click.get_current_context().call_on_close(process.collect_again)  # for callers here
    fixing = _modes(
        paths, fixing=fix or fix_only or diff, base=base, base_all=base_all,
        add_suppressions=add_suppressions, watch=watch,
        cluster_options=bool(kubeconfig or context_name) and not from_cluster,
    )
    overrides = _overrides(
        trainer_version, kubernetes_version, select, extend_select, ignore, preview,
        context=list(context_paths) or None, fail_on=fail_on,
        # The cluster knows which runtimes it has: none is assumed.
        bundled_runtimes=False if no_bundled_runtimes or from_cluster else None,
    )
    chosen = _select(paths, config_file, isolated, overrides, stdin_filename, keep=not no_cache,
                     cache_dir=cache_dir)
    names, where = chosen.names, chosen.settings
    _reports_apart([*names, *chosen.context, *(name for name, _ in chosen.built),
                    config_file or "", stdin_filename if STDIN in paths else ""],
                   output_file, output_format)
    cluster = _from_cluster(kubeconfig, context_name, cluster_timeout) if from_cluster else []
    quotable = _quotable(paths, stdin_filename)
    # Fixes edit the objects they were found on, so fixing stays in one process; the
    # fixes' edits (JSON) are worked out in the process that checks each file.
    in_process = fixing or add_suppressions or STDIN in paths
    processes = 1 if in_process else jobs or parallel.available_cores()
    amend = _edits_of_fixes(output_format)
    read = partial(_read, stdin_filename=stdin_filename)
    read_all = partial(parallel.read_all, jobs=processes)

    def settings_for(source: Source) -> Settings:
        return where[source.name]

    def can_fix(finding: Finding) -> bool:
        safe = finding.fix is not None and (finding.fix.safe or unsafe_fixes)
        return safe and settings_for(finding.source).may_fix(finding.code)

    report_err = False
    if in_process or base is not None:
        context = [
            *(manifest for item in read_all(chosen.context, read) for manifest in item.manifests),
            *cluster,
        ]
        if fixing:
            from trainlint import fix as fixer

            request = fixer.Request(
                unsafe=unsafe_fixes, diff=diff, show=show_fixes,
                writable=(lambda _: True) if write_outside_tree else quotable,
            )
            run, findings, inputs = _fix(
                read_all(names, read), settings_for, context, can_fix, request,
                stdin_filename if STDIN in paths else None, fix_only=fix_only,
            )
            report_err = STDIN in paths and output_file is None
        elif base is not None:
            run, findings, inputs = _check_change(read_all(names, read), paths, base, base_all,
                                                  settings_for, context, processes, amend)
        else:  # standard input
            run = Run(read_all(names, read), settings_for=settings_for, context=context)
            findings, inputs = parallel.lint_all(run, processes, amend), run.inputs
        files = [item.source.name for item in inputs]
        summary = _Summary.of(run, inputs)
    else:
        from trainlint.run.check import check as check_files

        # The cluster's objects change without a file to tell: such a run is not cached.
        cache = None if no_cache or cluster else _cache(cache_dir or chosen.cache_dir)
        result = check_files(names, where.__getitem__, processes, cache, chosen.context, cluster,
                             amend=amend)
        findings, files = result.findings, result.files
        summary = _Summary(result.objects, result.fragments, result.unchecked)
    summary = summary._replace(built=chosen.built)
    if not (summary.objects or findings):
        summary.nothing_checked(files, allow_empty=allow_empty)
    if add_suppressions:
        _suppress(findings, (lambda _: True) if write_outside_tree else quotable)
    _report(
        findings, files, output_format, output_file, statistics, can_fix, quotable, report_err,
        chosen.docs_url, color,
    )
    summary.tell()
    sys.exit(_status(findings, settings_for, exit_zero=exit_zero))


def _fix(
    inputs: list[Loaded], settings_for: Callable[[Source], Settings], context: list[Manifest],
    can_fix: Callable[[Finding], bool], request: FixRequest, stdin_name: str | None,
    *, fix_only: bool,
) -> tuple[Run, list[Finding], list[Loaded]]:
    """`--fix`, `--diff`: apply what may be fixed, say what was written, and check the
    result, which is what the run reports."""
    from trainlint import fix as fixer
    from trainlint.engine.run import Run, lint

    fixed, findings, outcome = fixer.run(
        inputs, lambda items: lint(items, settings_for=settings_for, context=context),
        request, can_fix, stdin_name,
    )
    _tell(outcome, diff=request.diff, fix_only=fix_only)
    return Run(fixed, settings_for=settings_for, context=context), findings, fixed


def _check_change(
    inputs: list[Loaded], paths: tuple[str, ...], base: str, base_all: bool,
    settings_for: Callable[[Source], Settings], context: list[Manifest], processes: int,
    amend: Amend | None,
) -> tuple[Run, list[Finding], list[Loaded]]:
    """`--base REV`: the findings of the change, objects compared with their state at REV
    in the repository of the checked `paths` (standard input and no path: the current
    folder's). Files with neither a changed object nor a changed text are only looked up, like
    `context` (a runtime that a changed TrainJob uses); of the files checked, only what is
    on a changed object (or on no object: syntax, suppressions) is reported, unless
    `base_all`. Runs of this kind are not cached: their findings depend on REV."""
    from trainlint.engine.run import Run
    from trainlint.run import parallel
    from trainlint.run.revision import RevisionError, changed, read

    try:
        revision = read(base, [("." if path == STDIN else path) for path in paths or ["."]])
    except RevisionError as error:
        raise Failure(str(error)) from None
    before = revision.paired(inputs)
    checked, looked_up, edited = [], [*context], set()
    for item in inputs:
        here = {id(manifest) for manifest in item.manifests
                if changed(manifest, before.get(id(manifest)))}
        edited |= here
        if base_all or here or revision.changed_file(item.source.name, item.source.text):
            checked.append(item)
        else:
            looked_up.extend(item.manifests)
    run = Run(checked, settings_for=settings_for, context=looked_up, previous=before)
    findings = parallel.lint_all(run, processes, amend)
    if not base_all:
        findings = [finding for finding in findings
                    if finding.manifest is None or id(finding.manifest) in edited]
    return run, findings, inputs


#: What the notes say of a document nothing in which is checked (`Fragment`).
FRAGMENT = ("this document is part of an object (`metadata` or `spec`, but no `kind` and "
            "`apiVersion`), so nothing in it is checked (a fragment of a manifest?)")
TEMPLATE = ("this document is a template (`${...}`, `{{ ... }}`, `{% ... %}`, `#@`, "
            "`%(...)s`, `%s`, `{NAME}` or `...` where a value or a line goes), no object until "
            "they are filled, so nothing in it is checked: check the filled text "
            "(`... | trainlint check -`)")


class _Summary(NamedTuple):
    """What a run says on standard error besides its findings."""

    #: How many objects the inputs hold.
    objects: int
    #: (file, fragment) of each document nothing in which is checked.
    fragments: list[tuple[str, Fragment]]
    #: The runtimes found nowhere, with how many TrainJobs name each.
    unchecked: dict[str, int]
    #: The files left out as what kustomize or Helm builds from, each with why.
    built: Sequence[tuple[str, Built]] = ()

    @classmethod
    def of(cls, run: Run, inputs: list[Loaded]) -> _Summary:
        """The summary of `run`, whose `inputs` were read (`--base` checks only some)."""
        return cls(
            sum(len(item.manifests) for item in inputs),
            [(item.source.name, fragment) for item in inputs for fragment in item.fragments],
            run.unchecked(run.inputs),
        )

    def nothing_checked(self, files: list[str], *, allow_empty: bool) -> None:
        """A run with nothing to check is no pass: it says why, and ends with status 2
        unless `allow_empty`."""
        if files:
            what = f"no Kubernetes object (a document with `kind`) in {_count(len(files), 'file')}"
        elif self.built:
            what = ("no file to check: every file was excluded, git-ignored or one that "
                    "kustomize or Helm builds from")
        else:
            what = "no file to check: every file was excluded or git-ignored"
        if allow_empty:
            click.echo(f"trainlint: {what}, so nothing was checked", err=True)
            return
        self.tell()
        click.echo(f"trainlint: {what}, so nothing was checked (`--allow-empty` accepts this)",
                   err=True)
        sys.exit(2)

    def tell(self) -> None:
        """The notes: documents that are fragments or templates, TrainJobs not checked in
        full."""
        _notes([f"{name}:{span.line}:{span.column}: {TEMPLATE if template else FRAGMENT}"
                for name, (span, template) in self.fragments], "more such document")
        _notes(_built(self.built))
        if self.unchecked:
            jobs = sum(self.unchecked.values())
            runtimes = sorted(self.unchecked)
            named = ", ".join(f"`{shown(name)}`" for name in runtimes[:MAX_NOTES])
            more = f" and {len(runtimes) - MAX_NOTES} more" if len(runtimes) > MAX_NOTES else ""
            their = "its runtime" if jobs == 1 else "their runtime"
            click.echo(
                f"trainlint: {_count(jobs, 'TrainJob')} not checked against {their} "
                f"({named}{more}): add it with `--context` (or `--from-cluster`)", err=True,
            )


#: Notes of one kind printed at most, the rest counted.
MAX_NOTES = 10


def _notes(lines: Sequence[str], counted: str = "") -> None:
    """Notes of one kind, at most `MAX_NOTES`, then how many more (`counted`: of what)."""
    for line in lines[:MAX_NOTES]:
        click.echo(f"trainlint: note: {shown(line)}", err=True)
    rest = len(lines) - MAX_NOTES
    if rest > 0:
        more = _count(rest, counted) if counted else f"{rest} more"
        click.echo(f"trainlint: note: and {more}", err=True)


def _built(built: Sequence[tuple[str, Built]], command: str = "check") -> list[str]:
    """What the files kustomize or Helm builds from are, and how to check (or `render`)
    what they build: a line for each kustomization's patches and each chart's files
    (Helm's own files, its `Chart.yaml` and values, go unsaid)."""
    groups: dict[Built, list[str]] = {}
    for name, why in built:
        if why.what != "helm":
            groups.setdefault(why, []).append(name)
    lines = []
    for why, names in groups.items():
        one, many, tool, builds = _BUILT[why.what]
        folder = os.path.dirname(why.by) or "."  # noqa: PTH120 - a kustomization's
        subject, said, it = ((names[0], one, "it") if len(names) == 1
                             else (_count(len(names), "file"), many, "them"))
        done = "checked" if command == "check" else f"{command}ed"
        lines.append(f"{subject} {said.format(by=why.by, done=done)}: {command} what {tool} "
                     f"makes of {it} with `{builds.format(by=why.by, folder=folder)} | "
                     f"trainlint {command} -`")
    return lines


#: How `_built` tells of one file and of several, by `Built.what`, and what builds them.
_BUILT = {
    "patch": ("is a kustomize patch (named in {by}), part of an object, so it is not {done} "
              "alone", "are kustomize patches (named in {by}), parts of objects, so they are "
              "not {done} alone", "kustomize", "kubectl kustomize {folder}"),
    "chart": ("is part of the Helm chart in {by}, no manifest until Helm renders it, so it "
              "is not {done} as written", "are part of the Helm chart in {by}, no manifests "
              "until Helm renders them, so they are not {done} as written", "Helm",
              "helm template {by}"),
}


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' * (number != 1)}"


def _from_cluster(kubeconfig: str | None, context_name: str | None, timeout: float) -> list[Any]:
    """The cluster's runtimes, PVCs, StorageClasses and PriorityClasses; any failure is a
    message and exit status 2."""
    try:
        from trainlint.webhook.listing import ClusterError, list_objects
    except ImportError as error:
        raise Failure(
            f"{error.name} is missing: `--from-cluster` needs `pip install 'trainlint[serve]'`"
        ) from None
    try:
        return list_objects(kubeconfig, context_name, timeout)
    except ClusterError as error:
        raise Failure(f"--from-cluster: {error}") from None


def _edits_of_fixes(outputs: list[Output] | None) -> Amend | None:
    """What works out each fix's edits where its file is checked, if an output gives them
    (JSON): they need the objects the findings are on, and are cached with them."""
    if not any(fmt in {"json", "json-lines"} for fmt, _ in outputs or ()):
        return None
    from trainlint.fix import with_edits

    return with_edits


def _status(
    findings: list[Finding], settings_for: Callable[[Source], Settings], *, exit_zero: bool
) -> int:
    """1 when a finding is at or above its file's `fail-on` (and not `--exit-zero`), else 0."""
    failed = any(settings_for(finding.source).fails([finding]) for finding in findings)
    return 1 if failed and not exit_zero else 0


def _modes(
    paths: tuple[str, ...], *, fixing: bool, base: str | None, base_all: bool,
    add_suppressions: bool, watch: bool, cluster_options: bool,
) -> bool:
    """Whether the run fixes; a usage error for options that do not go together;
    `--watch` takes over from here."""
    if base_all and base is None:
        raise click.UsageError("--base-all needs --base REV")
    if base is not None and fixing:
        raise click.UsageError("--base checks a change; it does not combine with fixing")
    if cluster_options:
        raise click.UsageError("--kubeconfig and --context-name go with --from-cluster")
    if add_suppressions and (fixing or STDIN in paths):
        raise click.UsageError(
            "--add-suppressions writes files: it does not combine with fixing or `-`"
        )
    if watch:
        _watch(paths)
    return fixing


def _watch(paths: tuple[str, ...]) -> NoReturn:
    """`--watch`: the same check (the arguments less `--watch`), in a fresh process, now
    and after every change of a file under PATHS (or the configuration), until
    interrupted. A fresh process per check keeps what `check` assumes of its process
    (the collector off, one exit) and reuses the cache between runs."""
    import subprocess

    try:
        import watchfiles
    except ImportError:
        raise Failure(
            "watchfiles is missing: install it with `pip install 'trainlint[watch]'`"
        ) from None
    from trainlint.config.files import followed

    if STDIN in paths:
        raise click.UsageError("--watch watches files: it cannot read `-`")
    command = [
        sys.executable, "-c", "from trainlint.cli import run; run()",
        *(argument for argument in sys.argv[1:] if argument != "--watch"),
    ]
    watched = [path for path in paths or (".",) if Path(path).exists()]
    try:
        while True:
            subprocess.run(command, check=False)
            click.echo("[watching for changes; Ctrl-C ends]", err=True)
            for changes in watchfiles.watch(
                *watched, watch_filter=lambda _, path: followed(path), debounce=200
            ):
                click.echo(f"[{len(changes)} changed: checking again]", err=True)
                break
    except KeyboardInterrupt:
        sys.exit(0)


def _cache(folder: Path) -> Cache | None:
    """The run's cache in `folder`; none, said on stderr, in a folder of someone else's
    files (the project's own, named by `cache-dir` or `--cache-dir`), which the cache
    would mark ignored by git and clear of stale files."""
    from trainlint.run.cache import Cache, NotACacheFolder

    try:
        return Cache(folder)
    except NotACacheFolder:
        shown = os.path.relpath(folder)  # as the working folder sees it
        click.echo(f"trainlint: `{shown}` holds files trainlint did not write, so no cache is "
                   "kept there: name a folder of its own (`cache-dir`, `--cache-dir`)", err=True)
        return None


def _quotable(paths: tuple[str, ...], stdin_filename: str) -> Callable[[str], bool]:
    """Whether a file's text may be shown (or written by a fix, unless
    `--write-outside-tree`): stdin's, or a file inside the folders checked
    (`trainlint.files.Tree`)."""
    from trainlint.files import Tree

    tree = Tree(name for name in paths or (".",) if name != STDIN)
    return lambda file: (STDIN in paths and file == stdin_filename) or tree.holds(file)


def _suppress(findings: list[Finding], writable: Callable[[str], bool]) -> NoReturn:
    """`--add-suppressions`: silence every finding in its file, say how many, and end."""
    from trainlint.fix import add_suppressions

    added, unwritten = add_suppressions(findings, writable)
    for note in unwritten:
        click.echo(note, err=True)
    click.echo(f"Added {added} suppression{'s' * (added != 1)}.", err=True)
    sys.exit(2 if unwritten else 0)


class _Chosen(NamedTuple):
    """What a run reads: its files, the settings of each (by the name findings show), the
    context files of their configurations, and the default cache folder."""

    names: list[str]
    settings: dict[str, Settings]
    context: list[str]
    cache_dir: Path
    #: The documentation site reports link to (`docs-url` of the working folder).
    docs_url: str
    #: The files left out as what kustomize or Helm builds from, each with why.
    built: list[tuple[str, Built]]


def _select(
    paths: tuple[str, ...], config_file: str | None, isolated: bool,
    overrides: dict[str, Any], stdin_filename: str, *, keep: bool = False,
    cache_dir: Path | None = None,
) -> _Chosen:
    """The files a run reads and their settings; `keep`: validated configurations are kept
    in cache folders (`config.kept`), the command line's in `cache_dir` if given."""
    from trainlint.config.builders import Builders
    from trainlint.config.files import Configuration, Resolver, context_files, discover
    from trainlint.errors import ConfigError

    where: dict[str, Settings] = {}
    try:
        resolver = Resolver(config_file, isolated=isolated, overrides=overrides, keep=keep,
                            cache_dir=cache_dir)
        found = list(dict.fromkeys(discover(paths or (".",), resolver)))  # each file once
        builders = Builders()
        builders.read_among(found)
        names, built = [], []
        for name in found:
            why = None if name == STDIN else builders.built(name)
            if why is None:
                names.append(name)
            else:
                built.append((name, why))
        by_folder: dict[str, Configuration] = {}  # one look-up per folder, not per file
        for name in names:
            shown = stdin_filename if name == STDIN else name
            folder = os.path.dirname(shown)  # noqa: PTH120 - strings: one per file
            if folder not in by_folder:
                by_folder[folder] = resolver.for_path(Path(shown))
            where[shown] = by_folder[folder].settings_for(shown)
        roots = list(dict.fromkeys(
            path for configuration in by_folder.values() for path in configuration.context
        ))
        context = []
        if roots:  # most runs have none: no need to know every input's absolute path
            inputs = {os.path.abspath(name) for name in names}  # noqa: PTH100
            context = [
                name for name in context_files(roots)
                if os.path.abspath(name) not in inputs  # noqa: PTH100 - an input is checked
                and builders.built(name) is None
            ]
        here = resolver.for_path(Path.cwd())
        return _Chosen(names, where, context, here.cache_dir, here.settings.docs_url, built)
    except ConfigError as error:
        raise Failure(str(error)) from None


def _reports_apart(
    names: Sequence[str], output_file: Path | None, chosen: list[Output] | None
) -> None:
    """Refuse a report file that is a file the run reads (checked, context, what
    kustomize or Helm builds from, the configuration, `.gitignore`, the name given
    standard input: the report would replace it) or the
    file of another report (one would replace the other). Only a report file that exists
    already can be one of them: those are looked at only then."""
    from trainlint.config.files import CONFIG_FILES

    targets = [("--output-file", str(output_file))] if output_file is not None else []
    targets += [(f"--output-format {fmt}", path) for fmt, path in chosen or [] if path]
    for option, target in targets:
        if Path(target).name in CONFIG_FILES and Path(target).exists():
            raise click.UsageError(f"{option} {target} is a file that says what is checked "
                                   "and how: the report would replace it")
    # A file by its device and inode (whatever the path that names it), one still to be
    # written by its resolved path.
    found: dict[tuple[int, int] | str, tuple[str, str]] = {}
    for option, target in targets:
        key = _file_key(target) or str(Path(target).resolve())
        if key in found:
            raise click.UsageError(f"{option} writes {target}, as {found[key][0]} does")
        found[key] = option, target
    for name in names if any(isinstance(key, tuple) for key in found) else ():
        writer = found.get(_file_key(name) or "")
        if writer is not None:
            raise click.UsageError(
                f"{writer[0]} {writer[1]} is a file the run reads: the report would replace it")


def _file_key(path: str) -> tuple[int, int] | None:
    try:
        status = Path(path).stat()
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino


def _tell(outcome: Any, *, diff: bool, fix_only: bool) -> None:
    """What fixing did; `--diff` and `--fix-only` end here."""
    click.echo(outcome.stdout, nl=False)
    for note in outcome.notes:
        click.echo(note, err=True)
    if outcome.fixed and not diff:
        click.echo(f"Fixed {outcome.fixed} problem{'s' * (outcome.fixed != 1)}.", err=True)
    if diff or fix_only:
        sys.exit(2 if outcome.unwritten else 1 if diff and outcome.changed else 0)


def _outputs(ctx: click.Context, value: str | None) -> list[Output] | None:
    """`--output-format` (or $TRAINLINT_OUTPUT_FORMAT) as the outputs it names."""
    from click.core import ParameterSource

    from trainlint.report import outputs

    if value is None or not value.strip():
        return None
    try:
        return outputs(value)
    except ValueError as error:
        from_environment = ctx.get_parameter_source("output_format") == ParameterSource.ENVIRONMENT
        hint = "$TRAINLINT_OUTPUT_FORMAT" if from_environment else "--output-format"
        raise click.BadParameter(str(error), param_hint=hint) from None


def _report(
    findings: list[Finding], files: list[str], chosen: list[Output] | None,
    output_file: Path | None, statistics: bool, can_fix: Callable[[Finding], bool],
    quotable: Callable[[str], bool], to_stderr: bool, docs_url: str, color: str,
    objects: Sequence[ObjectRef] = (),
) -> None:
    """Each output chosen, rendered from the same findings; the one without a file of its
    own goes to `--output-file` or standard output (stderr when stdout holds a fixed
    document), and `--statistics` replaces it."""
    from trainlint.report import Report, renderer, streamer

    default = (
        "github" if os.environ.get("GITHUB_ACTIONS") == "true"
        else "full" if sys.stdout.isatty() else "concise"
    )
    terminal = output_file is None and sys.stdout.isatty()
    report = Report(
        findings, files, color=_color(color, terminal), can_fix=can_fix, quotable=quotable,
        docs_url=docs_url, objects=objects,
    )
    plain = report._replace(color=False)  # files never hold escape codes
    for fmt, path in chosen or [(default, None)]:
        if path is not None:
            _write(renderer(fmt)(plain), Path(path))
            continue
        if statistics:
            from trainlint.report.statistics import render

            pieces: Iterable[str] = [render(report, as_json=fmt in {"json", "json-lines"})]
        elif to_stderr or output_file is None:
            pieces = streamer(fmt)(report)  # a piece at a time: a report may be huge
        else:
            pieces = [renderer(fmt)(report)]
        if output_file is None or to_stderr:  # stderr: stdout holds the fixed document
            _echo(pieces, to_stderr)
        else:
            _write("".join(pieces), output_file)


def _echo(pieces: Iterable[str], to_stderr: bool) -> None:
    """Write a report to standard output (or error), said plainly when it cannot be (a
    full disk); a reader that went away (`| head`) is no error of the run's."""
    try:
        for block in _blocks(pieces):
            # color was decided already: never strip it
            click.echo(block, nl=False, color=True, err=to_stderr)
    except OSError as error:
        if isinstance(error, BrokenPipeError):
            raise
        stream = "error" if to_stderr else "output"
        raise Failure(f"cannot write the report to standard {stream}: {error.strerror}") from None


#: A report goes to standard output about this many characters at a time: not a write
#: per finding (each costs click's checks), not the whole report of a long stream at once.
_BLOCK_CHARACTERS = 1 << 20


def _blocks(pieces: Iterable[str]) -> Iterator[str]:
    """`pieces` joined into blocks of about `_BLOCK_CHARACTERS`."""
    block: list[str] = []
    size = 0
    for piece in pieces:
        block.append(piece)
        size += len(piece)
        if size >= _BLOCK_CHARACTERS:
            yield "".join(block)
            block, size = [], 0
    if block:
        yield "".join(block)


@main.command("render")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@_config_options
@click.option(
    "--trainer-version", metavar="VERSION",
    help="Trainer release whose controller to follow (2.0, 2.1, 2.2, 2.3) [default: 2.3].",
)
@click.option("--output-format", type=click.Choice(["yaml", "json"]), default="yaml",
              show_default=True, help="YAML with each value's origin as a comment, or JSON.")
@click.option("--runtime", "runtime_name", metavar="NAME",
              help="Render the runtime of this name on its own: what every TrainJob gets.")
@click.option(
    "--context", "context_paths", multiple=True, metavar="PATH", type=click.Path(path_type=str),
    help="A file or folder whose runtimes the TrainJobs may use, never rendered themselves "
    "(repeatable; added to config `context`).",
)
@_no_bundled_runtimes
def render_command(
    paths: tuple[str, ...], config_file: str | None, isolated: bool,
    trainer_version: str | None, output_format: str, runtime_name: str | None,
    context_paths: tuple[str, ...], no_bundled_runtimes: bool,
) -> None:
    """Print the JobSet the Trainer controller builds for each TrainJob in the files
    (folders are searched as by `check`), every value annotated with where it came from.

    A TrainJob's runtime is looked for among the inputs, then the context (`--context`,
    config `context`), then the ClusterTrainingRuntimes the release installs.

    Exit status: 0 every JobSet rendered, 1 a TrainJob's runtime is found nowhere
    (what the TrainJob says is rendered alone) or a file does not parse, 2 usage error.
    """
    import json

    from trainlint.engine.index import Index
    from trainlint.kinds import RUNTIME_KINDS, object_kind
    from trainlint.render.build import render
    from trainlint.render.show import to_json, to_yaml

    given = {
        "trainer-version": trainer_version, "context": list(context_paths) or None,
        "bundled-runtimes": False if no_bundled_runtimes else None,
    }
    overrides = {key: value for key, value in given.items() if value is not None}
    chosen = _select(paths, config_file, isolated, overrides, DEFAULT_STDIN_NAME)
    where = chosen.settings
    inputs = [_read(name, None, DEFAULT_STDIN_NAME) for name in chosen.names]
    incomplete = False
    for item in inputs:
        for problem in item.problems:
            incomplete = True
            span = problem.span
            click.echo(f"{item.source.name}:{span.line}:{span.column}: {problem.message}", err=True)
    manifests = [manifest for item in inputs for manifest in item.manifests]
    context = [
        manifest for name in chosen.context
        for manifest in _read(name, None, DEFAULT_STDIN_NAME).manifests
    ]
    index = Index(manifests, context)
    results = []
    for manifest in manifests:
        kind = object_kind(manifest)
        settings = where[manifest.source.name]
        version = settings.trainer_version
        if runtime_name is not None:
            if kind in RUNTIME_KINDS and manifest.name == runtime_name:
                results.append(render(None, manifest, version))
        elif kind == "TrainJob":
            runtime = index.runtime_for(manifest, version if settings.bundled_runtimes else None)
            if runtime is None:
                incomplete = True
                span = manifest.span(("spec", "runtimeRef"))
                click.echo(
                    f"{manifest.source.name}:{span.line}:{span.column}: {manifest.describe()}: "
                    "its runtime is found neither among the inputs and context nor among "
                    "the runtimes the release installs; only what the TrainJob says is "
                    "rendered", err=True,
                )
            results.append(render(manifest, runtime, version))
    if not results:
        wanted = f"runtime `{runtime_name}`" if runtime_name else "TrainJob"
        for line in _built(chosen.built, "render")[:MAX_NOTES]:  # what it may render, built
            click.echo(f"trainlint: note: {line}", err=True)
        raise Failure(f"no {wanted} among the inputs")
    if output_format == "json":
        _write(json.dumps([to_json(result) for result in results], indent=2) + "\n", None)
    else:
        _write("---\n".join(to_yaml(result) for result in results), None)
    sys.exit(1 if incomplete else 0)


@main.command("config")
@click.argument("path", default=".", type=click.Path(exists=True, path_type=Path))
@_config_options
def show_config(path: Path, config_file: str | None, isolated: bool) -> None:
    """Print the configuration that applies to PATH (default: the working folder), and
    where each value comes from."""
    from trainlint.config.files import Resolver, describe
    from trainlint.errors import ConfigError

    try:
        click.echo(describe(Resolver(config_file, isolated=isolated).for_path(path)), nl=False)
    except ConfigError as error:
        raise Failure(str(error)) from None


def _overrides(
    trainer_version: str | None, kubernetes_version: str | None, select: str | None,
    extend_select: str | None, ignore: str | None, preview: bool | None, **more: Any,
) -> dict[str, Any]:
    """The configuration keys the command line sets (`more` by their Python names). An
    empty `--select` (most often an unset variable, `--select "$RULES"`) is refused: it
    would run no rule and pass."""
    if select is not None and not _split(select):
        raise click.BadParameter("names no rule: it would run none", param_hint="--select")
    given = {
        "trainer-version": trainer_version, "kubernetes-version": kubernetes_version,
        "select": _split(select), "extend-select": _split(extend_select),
        "ignore": _split(ignore), "preview": preview,
        **{name.replace("_", "-"): value for name, value in more.items()},
    }
    return {key: value for key, value in given.items() if value is not None}


def _split(value: str | None) -> list[str] | None:
    return None if value is None else [part.strip() for part in value.split(",") if part.strip()]


def _color(choice: str, terminal: bool) -> bool:
    """`--color always|never`; `auto`: on a terminal, unless `NO_COLOR` turns it off, or
    `FORCE_COLOR` turns it on anywhere."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    return bool(os.environ.get("FORCE_COLOR")) or terminal


def _write(text: str, output_file: Path | None) -> None:
    if output_file is None:
        click.echo(text, nl=False, color=True)  # color was decided already: never strip it
        return
    try:
        output_file.parent.mkdir(parents=True, exist_ok=True)
        output_file.write_text(text, encoding="utf-8")
    except OSError as error:
        raise Failure(f"{output_file}: cannot write the report: {error.strerror}") from None


@main.command("rule")
@click.argument("selector")
def show_rule(selector: str) -> None:
    """Print the documentation of one rule, by code or name."""
    from trainlint.docs import rule_page
    from trainlint.rule import did_you_mean_rule, find_rule

    found = find_rule(selector)
    if found is None:
        raise click.BadParameter(
            f"no rule {selector!r}{did_you_mean_rule(selector, exact=True)} (see `trainlint rules`)"
        )
    click.echo(rule_page(found.load()), nl=False)


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table")
@click.option(
    "--preview", is_flag=True,
    help="Also list the preview rules, which are off by default (marked `preview`).",
)
def list_rules(fmt: str, preview: bool) -> None:
    """List the rules that run by default (with `--preview`, the preview rules too)."""
    import json

    from trainlint.rule import all_rules

    rules = [rule for rule in all_rules().values() if preview or not rule.preview]
    if fmt == "json":
        click.echo(json.dumps([_rule_entry(rule) for rule in rules], indent=2))
    elif fmt == "markdown":
        click.echo("| code | name | severity | releases | summary |\n|---|---|---|---|---|")
        for rule in rules:
            entry = _rule_entry(rule)
            click.echo(
                f"| {rule.code} | {rule.name}{' (preview)' * rule.preview} "
                f"| {rule.severity.value} | {rule.releases} | {entry['summary']} |"
            )
    else:
        width = max(len(rule.name) for rule in rules)
        for rule in rules:
            severity = rule.severity.value
            line = f"{rule.code}  {rule.name:<{width}}  {severity:<7}  {rule.releases}"
            click.echo(f"{line}  preview" if rule.preview else line)


def _rule_entry(rule: Rule) -> dict[str, str | bool]:
    return {
        "code": rule.code, "name": rule.name, "severity": rule.severity.value,
        "releases": rule.releases, "summary": rule.summary,
        "fix": rule.remediation or "", "preview": rule.preview,
    }


def _read(name: str, spread: Spread | None, stdin_filename: str) -> Loaded:
    """Read and parse a file (a long one in pieces on `spread`) or stdin."""
    from trainlint.files import read_bytes, read_stream
    from trainlint.loader import load_bytes, unreadable

    shown = stdin_filename if name == STDIN else name
    try:
        data = read_stream(sys.stdin.buffer) if name == STDIN else read_bytes(name)
    except OSError as error:
        return unreadable(shown, error)
    return load_bytes(data, shown, spread)


def run() -> None:
    """Entry point: any unexpected error is a clear message and exit 2, never a traceback."""
    from trainlint.run import process

    try:
        main()
    except SystemExit as end:
        process.leave(end.code)
    except Exception as error:  # the last line of defence
        click.echo(f"trainlint: internal error: {type(error).__name__}: {error}", err=True)
        process.leave(2)



@main.command()
@_config_options
@click.option(
    "-n", "--namespace", "namespaces", multiple=True, metavar="NAMESPACE",
    help="Audit this namespace (repeatable) [default: every namespace]; cluster-scoped "
    "runtimes are always audited.",
)
@_options(_SELECTION_OPTIONS)
@_options(_REPORT_OPTIONS)
@_options(_CLUSTER_OPTIONS)
@click.option(
    "--apply", "apply_reports", is_flag=True,
    help="Write the findings to the cluster as PolicyReports (one per namespace) and a "
    "ClusterPolicyReport, by server-side apply with field manager `trainlint`.",
)
def audit(
    config_file: str | None, isolated: bool, namespaces: tuple[str, ...],
    trainer_version: str | None, kubernetes_version: str | None, select: str | None,
    extend_select: str | None, ignore: str | None, preview: bool | None,
    output_format: list[Output] | None, color: str, output_file: Path | None,
    statistics: bool, fail_on: str | None, exit_zero: bool, kubeconfig: str | None,
    context_name: str | None, cluster_timeout: float, apply_reports: bool,
) -> None:
    """Check every TrainJob, TrainingRuntime and ClusterTrainingRuntime in the cluster,
    with its runtimes, PVCs, StorageClasses and PriorityClasses as context (list calls
    only, unless `--apply`; needs the `serve` extra).

    Exit status: 0 clean, 1 findings at or above `fail-on`, 2 usage or configuration
    error, or the cluster could not be read or written.
    """
    from trainlint.config.files import Resolver
    from trainlint.engine.run import lint
    from trainlint.errors import ConfigError

    overrides = _overrides(
        trainer_version, kubernetes_version, select, extend_select, ignore, preview,
        fail_on=fail_on, bundled_runtimes=False,  # the cluster has the runtimes it has
    )
    try:
        settings = Resolver(config_file, isolated=isolated, overrides=overrides).for_path(
            Path.cwd()
        ).settings
    except ConfigError as error:
        raise Failure(str(error)) from None
    try:
        from trainlint import audit as auditing
        from trainlint.webhook import listing
    except ImportError as error:
        raise Failure(
            f"{error.name} is missing: `audit` needs `pip install 'trainlint[serve]'`"
        ) from None
    try:
        found = auditing.split(listing.list_for_audit(
            kubeconfig, context_name, cluster_timeout, namespaces
        ))
    except listing.ClusterError as error:
        raise Failure(f"audit: {error}") from None
    findings = lint(found.inputs, settings, context=found.context)
    _report(
        findings, [item.source.name for item in found.inputs], output_format, output_file,
        statistics, lambda finding: False, lambda file: True, False, settings.docs_url, color,
        found.checked,
    )
    if apply_reports:
        from trainlint.report.policy_report import reports

        written = reports(findings, found.checked, settings.docs_url)
        try:
            deleted = listing.apply_reports(
                kubeconfig, context_name, cluster_timeout, written, namespaces
            )
        except listing.ClusterError as error:
            raise Failure(f"audit --apply: {error}") from None
        click.echo(f"trainlint: applied {_count(len(written), 'report')}: "
                   + ", ".join(_report_name(report) for report in written), err=True)
        if deleted:
            click.echo(f"trainlint: deleted {_count(len(deleted), 'report')} where nothing is "
                       "left to audit: " + ", ".join(_report_name(report) for report in deleted),
                       err=True)
    sys.exit(_status(findings, lambda _: settings, exit_zero=exit_zero))


def _report_name(report: dict[str, Any]) -> str:
    namespace = report["metadata"].get("namespace")
    return f"{report['kind']} {namespace}/{report['metadata']['name']}" if namespace else (
        f"{report['kind']} {report['metadata']['name']}"
    )


@main.command()
@click.option("--host", default="0.0.0.0", show_default=True, help="Address to listen on.")
@click.option("--port", default=9443, show_default=True, help="HTTPS port of `/validate`.")
@click.option("--metrics-port", default=8080, show_default=True,
              help="Plain-HTTP port of /metrics (and of the probes, unless --probe-port).")
@click.option("--probe-port", type=int, default=None,
              help="Plain-HTTP port of /healthz and /readyz alone, so that a NetworkPolicy "
                   "can open /metrics to Prometheus only.  [default: the metrics port]")
@click.option("--tls-cert", type=click.Path(dir_okay=False, path_type=Path),
              help="Serving certificate (PEM), reloaded when the file changes.")
@click.option("--tls-key", type=click.Path(dir_okay=False, path_type=Path),
              help="Its private key (PEM).")
@click.option("--self-signed", is_flag=True,
              help="Generate a CA and a certificate for local use instead.")
@click.option("--ca-out", type=click.Path(dir_okay=False, path_type=Path),
              help="With --self-signed: where to write the CA to trust.")
@click.option("--service-name", default="trainlint", show_default=True,
              help="The webhook Service; the certificate must name <service>.<namespace>.svc.")
@click.option("--namespace", default="trainlint-system", show_default=True,
              help="The Service's namespace.")
@click.option("--context-dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Read runtimes, PVCs and StorageClasses from manifests here (reloaded on "
                   "change) instead of watching the cluster.")
@click.option("--mode", type=click.Choice(["advise", "enforce"]), default="advise",
              show_default=True, help="advise never denies; enforce denies on error findings.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, exists=True),
              help="A trainlint configuration file (rules, severities, options).")
@click.option("--no-annotation-exemptions", is_flag=True,
              help="Ignore the trainlint.dev/ignore annotation: tenants cannot exempt objects.")
@click.option("--tls12", is_flag=True, help="Also accept TLS 1.2 (ECDHE with AEAD only).")
@click.option("--lame-duck", default=5.0, show_default=True, metavar="SECONDS",
              help="After SIGTERM, keep serving this long (not ready) before draining.")
@click.option("--max-connections", default=2048, show_default=True, type=click.IntRange(1),
              help="Open connections at most (sized for a 256Mi pod); past it, the one idle "
                   "longest is closed, or the new one when none is idle.")
def serve(
    host: str, port: int, metrics_port: int, probe_port: int | None,
    tls_cert: Path | None, tls_key: Path | None,
    self_signed: bool, ca_out: Path | None, service_name: str, namespace: str,
    context_dir: Path | None, mode: str, config_file: str | None,
    no_annotation_exemptions: bool, tls12: bool, lame_duck: float, max_connections: int,
) -> None:
    """Run the validating admission webhook (needs the `serve` extra)."""
    from trainlint.config.files import Resolver
    from trainlint.errors import ConfigError

    if self_signed == (tls_cert is not None or tls_key is not None):
        raise click.UsageError("give either --tls-cert and --tls-key, or --self-signed")
    if not self_signed and (tls_cert is None or tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    try:
        settings = Resolver(config_file, isolated=config_file is None).for_path(Path.cwd()).settings
    except (ConfigError, ValueError) as error:
        raise click.BadParameter(str(error), param_hint="--config") from None
    try:
        from trainlint import webhook
        from trainlint.webhook.tls import CertificateError
    except ImportError as error:
        raise Failure(
            f"{error.name} is missing: install the webhook with `pip install 'trainlint[serve]'`"
        ) from None
    options = webhook.ServeOptions(
        tls_cert=tls_cert, tls_key=tls_key, host=host, port=port, metrics_port=metrics_port,
        probe_port=probe_port,
        mode=webhook.Mode(mode), service_name=service_name, namespace=namespace,
        # The cluster knows which runtimes it has: the release's are not assumed.
        settings=replace(
            settings, annotation_exemptions=not no_annotation_exemptions, bundled_runtimes=False
        ),
        allow_tls12=tls12, lame_duck=lame_duck, max_connections=max_connections,
    )
    try:
        webhook.run(options, self_signed=self_signed, ca_out=ca_out, context_dir=context_dir)
    except CertificateError as error:
        raise Failure(f"cannot serve: {error}") from None
    except webhook.NoCredentials as error:
        raise Failure(
            f"cannot serve: no credentials for the cluster ({error}): in a pod, its service "
            "account's; elsewhere, the current context of $KUBECONFIG or ~/.kube/config; or "
            "read the context from manifests with --context-dir"
        ) from None
    except OSError as error:
        raise Failure(f"cannot serve: {error.strerror or error}") from None


@main.command()
@_config_options
@click.option("--trainer-version", metavar="VERSION",
              help="Trainer release the manifests target, over every configuration.")
@click.option("--kubernetes-version", metavar="VERSION",
              help="Kubernetes release of the cluster, over every configuration.")
@click.option("--select", metavar="CODES", help="Codes, prefixes or names to run.")
@click.option("--extend-select", metavar="CODES", help="Codes to run on top of `select`.")
@click.option("--ignore", metavar="CODES", help="Codes, prefixes or names to skip.")
@click.option("--preview", is_flag=True, default=None, help="Also run the preview rules.")
def lsp(
    config_file: str | None, isolated: bool, trainer_version: str | None,
    kubernetes_version: str | None, select: str | None, extend_select: str | None,
    ignore: str | None, preview: bool | None,
) -> None:
    """Run the language server on stdin and stdout (needs the `lsp` extra). Clients may
    also pass these settings as `initializationOptions`."""
    from trainlint.config.files import COMMAND_LINE, validate
    from trainlint.errors import ConfigError

    overrides = _overrides(
        trainer_version, kubernetes_version, select, extend_select, ignore, preview
    )
    try:
        validate(overrides, COMMAND_LINE, "--")
        from trainlint import lsp as server
    except ConfigError as error:
        raise Failure(str(error)) from None
    except ImportError as error:
        raise Failure(
            f"{error.name} is missing: install the language server with "
            "`pip install 'trainlint[lsp]'`"
        ) from None
    server.run(server.LspOptions(config_file, isolated, overrides))
