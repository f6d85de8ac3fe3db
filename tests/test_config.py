"""Configuration: where it is found, what each key does, and how bad values are refused."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.test_suppression import RUNTIME
from trainlint.config import keys
from trainlint.config.files import CONFIG_NAMES, Resolver, describe, discover
from trainlint.config.settings import Settings
from trainlint.document import Source
from trainlint.engine.run import lint
from trainlint.errors import ConfigError
from trainlint.finding import Finding
from trainlint.loader import load
from trainlint.problem import Severity

NO_GRACE = RUNTIME.replace("                  terminationGracePeriodSeconds: 120\n", "")


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path) -> Iterator[Path]:
    """Every test runs in its own folder, as a user's project."""
    before = Path.cwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(before)


def write(path: str, text: str) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return target


def run(*paths: str, resolver: Resolver | None = None) -> list[Finding]:
    """Lint as `trainlint check` does: each file with its own configuration."""
    resolver = resolver or Resolver()
    inputs = {name: load(Path(name).read_text(), name) for name in discover(paths, resolver)}

    def settings_for(source: Source) -> Settings:
        return resolver.for_path(Path(source.name)).settings_for(Path(source.name))

    return lint(inputs.values(), settings_for=settings_for)


def codes(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(finding.file, finding.code) for finding in findings]


def error(text: str, name: str = ".trainlint.toml") -> str:
    for old in CONFIG_NAMES:
        Path(old).unlink(missing_ok=True)
    write(name, text)
    with pytest.raises(ConfigError) as raised:
        Resolver().for_path(Path("x.yaml"))
    return str(raised.value)


# --- finding the file ---


def test_pyproject_table_is_read() -> None:
    write("pyproject.toml", '[project]\nname = "x"\n\n[tool.trainlint]\nselect = ["TL301"]\n')
    write("rt.yaml", NO_GRACE)
    assert codes(run("rt.yaml")) == [("rt.yaml", "TL301")]


def test_pyproject_without_the_table_is_passed_over(in_tmp: Path) -> None:
    write(".trainlint.yaml", "select: [TL402]\n")
    write("sub/pyproject.toml", '[project]\nname = "x"\n')
    write("sub/rt.yaml", NO_GRACE)
    assert codes(run("sub")) == [("sub/rt.yaml", "TL402")]
    assert Resolver().for_path(Path("sub")).path == in_tmp / ".trainlint.yaml"


def test_another_projects_pyproject_that_is_no_toml_is_passed_over(in_tmp: Path) -> None:
    """A cookiecutter template's `pyproject.toml` holds Jinja: no TOML, and none of ours
    (it never names trainlint), so the files beside it are checked as usual."""
    write(".trainlint.yaml", "select: [TL402]\n")
    write("{{cookiecutter.slug}}/pyproject.toml",
          '# checked with trainlint\n[project]\nname = "{{ cookiecutter.slug }}"\n'
          'dependencies = [\n  "trainlint>=0.1",\n]\n{% if cookiecutter.docs %}\n'
          'docs = ["sphinx"]\n{% endif %}\n')
    write("{{cookiecutter.slug}}/rt.yaml", NO_GRACE)
    assert codes(run("{{cookiecutter.slug}}")) == [("{{cookiecutter.slug}}/rt.yaml", "TL402")]


def test_nearest_file_wins_and_files_are_not_merged() -> None:
    write(".trainlint.toml", 'select = ["TL301"]\nignore = ["TL402"]\n')
    write("team/.trainlint.toml", 'select = ["TL402"]\n')
    write("rt.yaml", NO_GRACE)
    write("team/rt.yaml", NO_GRACE)
    assert codes(run(".")) == [("rt.yaml", "TL301"), ("team/rt.yaml", "TL402")]


def test_toml_before_yaml_before_pyproject_in_one_folder(in_tmp: Path) -> None:
    write("pyproject.toml", '[tool.trainlint]\nselect = ["TL1"]\n')
    write(".trainlint.yaml", "select: [TL2]\n")
    assert Resolver().for_path(in_tmp).path == in_tmp / ".trainlint.yaml"
    write(".trainlint.toml", 'select = ["TL3"]\n')
    assert Resolver().for_path(in_tmp).path == in_tmp / ".trainlint.toml"


def test_config_option_and_isolated() -> None:
    write(".trainlint.toml", 'select = ["TL402"]\n')
    write("other.toml", "")
    write("ci/strict.yaml", "select: [TL301]\n")
    write("rt.yaml", NO_GRACE)
    assert codes(run("rt.yaml", resolver=Resolver("ci/strict.yaml"))) == [("rt.yaml", "TL301")]
    isolated = codes(run("rt.yaml", resolver=Resolver(isolated=True)))
    assert ("rt.yaml", "TL301") in isolated and ("rt.yaml", "TL402") in isolated
    with pytest.raises(ConfigError, match=r"^missing\.toml: no trainlint configuration"):
        Resolver("missing.toml")


# --- each key ---


def test_trainer_and_kubernetes_version() -> None:
    write(".trainlint.toml", 'trainer-version = "v2.1.0"\nkubernetes-version = "v1.31"\n')
    settings = Resolver().for_path(Path("x.yaml")).settings
    assert (settings.trainer_version, settings.kubernetes_version) == ((2, 1), "1.31")


def test_ignore_and_extend_select_and_command_line_layers() -> None:
    write(".trainlint.toml", 'select = ["TL301"]\nextend-select = ["TL402"]\nignore = ["TL301"]\n')
    write("rt.yaml", NO_GRACE)
    assert codes(run("rt.yaml")) == [("rt.yaml", "TL402")]
    # --select replaces select, --ignore adds to ignore.
    resolver = Resolver(overrides={"select": ["TL3"], "ignore": ["TL402"]})
    assert resolver.for_path(Path("rt.yaml")).settings.ignore == ("TL301", "TL402")
    assert resolver.for_path(Path("rt.yaml")).settings.select == ("TL3", "TL402")


def test_an_empty_select_is_judged_once_the_command_line_is_layered() -> None:
    """A file's emptied `select` runs no rule; the command line's `--select` replacing it, or
    an `--extend-select` adding to it, makes a run that checks something."""
    write("pyproject.toml", "[tool.trainlint]\nselect = []\n")
    with pytest.raises(ConfigError) as raised:
        Resolver().for_path(Path("x.yaml"))
    assert str(raised.value) == (
        "pyproject.toml: tool.trainlint.select: names no rule, and no `extend-select` adds "
        "one: no rule would run (to check no file here, `exclude` it)"
    )
    for layered, selected in (({"select": ["TL301"]}, ("TL301",)),
                            ({"extend-select": ["TL402"]}, ("TL402",))):
        assert Resolver(overrides=layered).for_path(Path("x.yaml")).settings.select == selected


def test_per_file_ignores_match_relative_to_the_config_folder() -> None:
    write(".trainlint.toml", '[per-file-ignores]\n"smoke/*.yaml" = ["TL301"]\n"*.json" = ["ALL"]\n')
    write("smoke/rt.yaml", NO_GRACE)
    write("prod/rt.yaml", NO_GRACE)
    found = codes(run("."))
    assert ("prod/rt.yaml", "TL301") in found
    assert ("smoke/rt.yaml", "TL402") in found
    assert ("smoke/rt.yaml", "TL301") not in found


def test_exclude_and_extend_exclude() -> None:
    write(".trainlint.toml", 'extend-exclude = ["charts/*/templates/", "*.generated.yaml"]\n')
    for name in ("a.yaml", "charts/x/templates/t.yaml", "b.generated.yaml", "node_modules/m.yaml",
                 ".hidden/h.yaml", "charts/x/values.yaml"):
        write(name, "kind: ConfigMap\napiVersion: v1\n")
    assert list(discover(["."], Resolver())) == ["a.yaml", "charts/x/values.yaml"]
    # Excluded files are skipped even when named, so the pre-commit hook honours them;
    # so are excluded folders.
    assert list(discover(["b.generated.yaml", "a.yaml"], Resolver())) == ["a.yaml"]
    assert list(discover(["node_modules", "charts/x"], Resolver())) == ["charts/x/values.yaml"]
    write(".trainlint.toml", 'exclude = ["a.yaml"]\n')  # replaces the defaults
    assert list(discover(["."], Resolver())) == [
        "b.generated.yaml", "charts/x/values.yaml", "charts/x/templates/t.yaml",
        "node_modules/m.yaml",
    ]


@given(
    patterns=st.lists(st.sampled_from(
        ["node_modules/", "venv/", "build/", "b", "*.yaml", "a/b/", "!keep/", "!a.yaml"]
    ), max_size=4),
    parts=st.lists(st.sampled_from(["node_modules", "venv", "build", "a", "b", "keep",
                                    "a.yaml"]), min_size=1, max_size=4),
    folder=st.booleans(),
)
def test_folder_names_are_excluded_as_pathspec_would(
    patterns: list[str], parts: list[str], folder: bool
) -> None:
    """Plain folder-name patterns skip pathspec; the answer must be pathspec's."""
    from pathspec import GitIgnoreSpec

    root = Path("/project")
    configuration = Resolver(isolated=True).for_path(Path.cwd())
    configuration = dataclasses.replace(configuration, root=root, exclude=tuple(patterns))
    relative = "/".join(parts)
    expected = GitIgnoreSpec.from_lines(patterns).match_file(relative + "/" * folder)
    assert configuration.excluded(root / relative, folder=folder) == expected


def test_gitignore_is_respected_unless_turned_off() -> None:
    Path(".git").mkdir()
    write(".gitignore", "build/\n*.local.yaml\n")
    write("deploy/.gitignore", "!keep.local.yaml\n")
    for name in ("build/out.yaml", "a.local.yaml", "deploy/keep.local.yaml", "deploy/job.yaml"):
        write(name, "kind: ConfigMap\n")
    assert list(discover(["."], Resolver())) == ["deploy/job.yaml", "deploy/keep.local.yaml"]
    # Walking from inside the repository still reads the .gitignore above.
    assert list(discover(["deploy"], Resolver())) == ["deploy/job.yaml", "deploy/keep.local.yaml"]
    write(".trainlint.toml", "respect-gitignore = false\n")
    assert len(list(discover(["."], Resolver()))) == 4


def test_severity_by_code_name_or_prefix() -> None:
    write(".trainlint.yaml", "severity:\n  ephemeral-checkpoint-volume: warning\n  TL4: error\n")
    write("rt.yaml", NO_GRACE)
    severities = {finding.code: finding.severity for finding in run("rt.yaml")}
    assert severities["TL301"] == Severity.WARNING
    assert severities["TL402"] == Severity.ERROR


def test_rule_options_by_code_or_name() -> None:
    write(".trainlint.toml", "[rules.TL402]\nmin-seconds = 180\n")
    write("rt.yaml", RUNTIME)  # 120 s: enough by default, too little for 180
    assert ("rt.yaml", "TL402") in codes(run("rt.yaml"))
    write(".trainlint.toml", "[rules.missing-termination-grace-period]\nmin-seconds = 100\n")
    assert ("rt.yaml", "TL402") not in codes(run("rt.yaml"))


def test_fail_on() -> None:
    write(".trainlint.toml", 'fail-on = "error"\n')
    settings = Resolver().for_path(Path("x.yaml")).settings
    assert settings.fail_on == Severity.ERROR


def test_describe_names_the_origin_of_each_value() -> None:
    write(
        "pyproject.toml",
        '[tool.trainlint]\nignore = ["TL402"]\n[tool.trainlint.rules.TL402]\nmin-seconds = 90\n',
    )
    text = describe(Resolver(overrides={"ignore": ["TL301"]}).for_path(Path()))
    assert text.startswith("# trainlint configuration from pyproject.toml\n")
    assert 'ignore = ["TL402", "TL301"]  # pyproject.toml [tool.trainlint], command line\n' in text
    assert 'trainer-version = "2.3"  # default\n' in text
    assert "min-seconds" in text and '"min-seconds" = 90' in text


# --- refusals ---


def test_unknown_key_names_file_and_key() -> None:
    message = error('[tool.trainlint]\nselct = ["TL301"]\n', "pyproject.toml")
    assert message.startswith(
        "pyproject.toml: tool.trainlint.selct: unknown key (did you mean `select`?) (known: "
    )
    far = error('[tool.trainlint]\nwhatever = 1\n', "pyproject.toml")
    assert far.startswith("pyproject.toml: tool.trainlint.whatever: unknown key (known: ")


def test_bad_values_name_the_key() -> None:
    assert error('select = ["TL999"]\n') == (
        ".trainlint.toml: select: no rule matches 'TL999' (see `trainlint rules`)"
    )
    assert error("trainer-version = 2.3\n") == (
        '.trainlint.toml: trainer-version: write the version as a string: "2.3", not 2.3'
    )
    assert "unknown Trainer release '1.9'" in error('trainer-version = "1.9"\n')
    assert error('kubernetes-version = "1.x"\n') == (
        ".trainlint.toml: kubernetes-version: '1.x' is not a Kubernetes release like \"1.33\""
    )
    assert error('fail-on = "info"\n').startswith(".trainlint.toml: fail-on: Input should be")
    assert error('[severity]\nTL301 = "fatal"\n').startswith(".trainlint.toml: severity.TL301: ")
    assert error('[per-file-ignores]\n"a/*" = ["TL0000"]\n') == (
        ".trainlint.toml: per-file-ignores: no rule matches 'TL0000' (did you mean `TL00`?) "
        "(see `trainlint rules`)"
    )


def test_bad_rule_options_name_the_option() -> None:
    assert error('[rules.TL402]\nmin-seconds = "soon"\n') == (
        '.trainlint.toml: rules.TL402.min-seconds: Input should be a valid integer, not "soon"'
    )
    assert error("[rules.TL402]\nmax-seconds = 1\n") == (
        ".trainlint.toml: rules.TL402.max-seconds: unknown option (did you mean "
        "`min-seconds`?) (known: env-name-parts, env-names, flags, min-seconds)"
    )
    assert error("[rules.TL002]\nx = 1\n") == (
        ".trainlint.toml: rules.TL002: TL002 (duplicate-key) takes no options"
    )
    assert error("[rules.TL999]\nx = 1\n") == (
        ".trainlint.toml: rules.TL999: no rule has this code or name (see `trainlint rules`)"
    )


def test_values_are_strict_json_types() -> None:
    """What YAML or TOML spells otherwise is refused, not converted: "yes" is no boolean,
    "60", 60.0 and true are no integers."""
    assert error('respect-gitignore = "yes"\n') == (
        '.trainlint.toml: respect-gitignore: Input should be a valid boolean, not "yes"'
    )
    assert error("respect-gitignore: 1\n", ".trainlint.yaml") == (
        ".trainlint.yaml: respect-gitignore: Input should be a valid boolean, not 1"
    )
    for written in ('"90"', "90.0", "true"):
        assert error(f"[rules.TL402]\nmin-seconds = {written}\n") == (
            f".trainlint.toml: rules.TL402.min-seconds: Input should be a valid integer, "
            f"not {written}"
        )
    assert error("[rules.TL303]\nlocal-provisioners = [1]\n") == (
        ".trainlint.toml: rules.TL303.local-provisioners[0]: Input should be a valid string, "
        "not 1"
    )
    assert error("cache-dir = 2024-01-01\n") == (
        ".trainlint.toml: cache-dir: a date is not a value any key takes"
    )
    assert error("severity:\n  1: error\n", ".trainlint.yaml") == (
        ".trainlint.yaml: severity: the key 1 is not a string"
    )


def test_rule_options_out_of_range_are_refused() -> None:
    assert error("[rules.TL402]\nmin-seconds = -5\n") == (
        ".trainlint.toml: rules.TL402.min-seconds: must be from 31 to 9223372036854775807, "
        "not -5 (a pod without the setting gets 30 s already)"
    )
    assert "not 30 " in error("[rules.TL402]\nmin-seconds = 30\n")
    assert "not 9223372036854775808 " in error(
        "rules:\n  TL402:\n    min-seconds: 9223372036854775808\n", ".trainlint.yaml"
    )
    assert error("[rules.TL405]\nmax-restarts = -1\n") == (
        ".trainlint.toml: rules.TL405.max-restarts: must be from 0 to 2147483647, not -1 "
        "(JobSet's maxRestarts is an int32)"
    )
    assert error('[rules.TL007]\nmanager = "migrated"\n') == (
        ".trainlint.toml: rules.TL007.manager: the Trainer webhook denies 'migrated' as a "
        'runtime patch manager (must be a domain-prefixed path (such as "acme.io/foo"))'
    )
    for option in ("env-name-parts", "env-names", "flags"):
        assert error(f'[rules.TL301]\n{option} = ["CKPT", ""]\n') == (
            f".trainlint.toml: rules.TL301.{option}: must not hold an empty string"
        )
    assert error('[rules.TL303]\nlocal-provisioners = [""]\n') == (
        ".trainlint.toml: rules.TL303.local-provisioners: must not hold an empty string"
    )
    write(".trainlint.toml", '[rules.TL402]\nmin-seconds = 31\n[rules.TL405]\nmax-restarts = 0\n')
    options = Resolver().for_path(Path("x.yaml")).settings.rule_options
    assert keys.dump_options(options["TL402"])["min-seconds"] == 31
    assert keys.dump_options(options["TL405"]) == {"max-restarts": 0}


def test_a_refused_minimum_is_never_written_by_fix() -> None:
    """The issue's case: `min-seconds = -5` made `--fix` write a negative grace period."""
    write(".trainlint.toml", "[rules.TL402]\nmin-seconds = -5\n")
    write("rt.yaml", NO_GRACE)
    result = subprocess.run(
        ["trainlint", "check", "--fix", "rt.yaml"], capture_output=True, text=True, check=False
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.startswith("Error: .trainlint.toml: rules.TL402.min-seconds: must be ")
    assert Path("rt.yaml").read_text() == NO_GRACE


def test_patterns_are_compiled_when_read() -> None:
    assert error('exclude = ["["]\n') == (
        ".trainlint.toml: exclude: '[' matches no path as a gitignore pattern "
        "(an unclosed `[`: write `\\[` for a bracket)"
    )
    assert error('extend-exclude = ["#notes"]\n') == (
        ".trainlint.toml: extend-exclude: '#notes' matches no path as a gitignore pattern"
    )
    assert error('exclude = ["a/[z-a]"]\n').startswith(
        ".trainlint.toml: exclude: 'a/[z-a]' is not a gitignore pattern: bad character range"
    )
    assert error('exclude = ["!"]\n').startswith(
        ".trainlint.toml: exclude: '!' is not a gitignore pattern: "
    )
    assert error('[per-file-ignores]\n"[" = ["TL301"]\n').startswith(
        ".trainlint.toml: per-file-ignores: '[' matches no path"
    )
    assert error('[per-file-ignores]\n"!a/*" = ["TL301"]\n') == (
        ".trainlint.toml: per-file-ignores: '!a/*': a negated pattern on its own matches no file"
    )
    write(".trainlint.toml", 'exclude = ["gen/", "!gen/keep.yaml", "[ab].yaml"]\n')
    assert Resolver().for_path(Path("x.yaml")).excluded("a.yaml")


def test_device_resources_are_resource_names() -> None:
    for name in ("gpu", "nvidia.com gpu", "Nvidia.com/gpu", "nvidia.com/"):
        assert error(f'[device-resources]\n"{name}" = "gpu"\n') == (
            f".trainlint.toml: device-resources: {name!r} is not a device-plugin resource "
            'name like "nvidia.com/gpu"'
        )
    assert error('[device-resources]\n"example.com/vgpu" = true\n').startswith(
        ".trainlint.toml: device-resources.example.com/vgpu: Input should be "
    )
    write(".trainlint.toml", '[device-resources]\n"example.com/v_gpu.2" = "gpu"\n')
    settings = Resolver().for_path(Path("x.yaml")).settings
    assert settings.device_resources == {"example.com/v_gpu.2": "gpu"}


@pytest.mark.parametrize("cache_dir", ["", ".", "./", "sub/..", "..", "../..", "/"])
def test_cache_dir_must_be_a_folder_of_its_own(cache_dir: str) -> None:
    """The cache folder gets a `.gitignore` of `*`: the project's own folder must not."""
    assert error(f"cache-dir = {json.dumps(cache_dir)}\n") == (
        f".trainlint.toml: cache-dir: {cache_dir!r} is not a folder of its own: trainlint "
        'marks the cache folder ignored by git; name one such as ".trainlint_cache"'
    )


def test_kubernetes_version_needs_installed_schemas() -> None:
    from trainlint.model.k8s import versions

    oldest = versions()[0]
    too_old = f"1.{int(oldest.split('.')[1]) - 1}"
    assert error(f'kubernetes-version = "{too_old}"\n') == (
        f".trainlint.toml: kubernetes-version: no schemas for Kubernetes {too_old} "
        f"(oldest: {oldest})"
    )


@pytest.mark.parametrize("name", [".trainlint.yaml", ".trainlint.toml"])
@pytest.mark.parametrize("depth", [11, 500, 100_000])
def test_deep_nesting_is_refused_clearly(name: str, depth: int) -> None:
    """Too deep for any key, or for the parser's recursion: a configuration error."""
    nested = "[" * depth + "]" * depth
    text = f"exclude: {nested}\n" if name.endswith("yaml") else f"exclude = {nested}\n"
    message = error(text, name)
    if depth == 11:
        assert message == (
            f"{name}: exclude[0][0][0][0][0][0][0][0][0]: nested more than 10 levels deep; "
            "no key takes such a value"
        )
    elif depth == 100_000:
        assert message == f"{name}: invalid {name[11:].upper()}: nested too deeply to read"
    else:  # read, or not, by the parser's recursion: either way a clear refusal
        assert message.startswith(f"{name}: "), message
        assert "nested" in message


def test_deep_nesting_in_the_command_output() -> None:
    """The issue's case, through the command: exit 2 and a message, no internal error."""
    write(".trainlint.yaml", "rules: " + "[" * 5000 + "]" * 5000 + "\n")
    write("rt.yaml", NO_GRACE)
    result = subprocess.run(["trainlint", "check", "rt.yaml"], capture_output=True, text=True,
                            check=False)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "Error: .trainlint.yaml: invalid YAML: nested too deeply to read\n"


def test_alias_bombs_and_cycles_are_refused_quickly() -> None:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for name, previous in zip("bcdefgh", "abcdefg", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    bomb = "\n".join(lines).replace("a: &a", "rules:\n  TL402:\n    flags: &a", 1)
    assert error(bomb + "\n", ".trainlint.yaml") == (
        ".trainlint.yaml: more than 100,000 values (YAML aliases count as copies); no "
        "configuration needs that many"
    )
    assert error("exclude: &a [*a]\n", ".trainlint.yaml").endswith(
        ": nested more than 10 levels deep; no key takes such a value"
    )


def test_syntax_errors_give_the_position() -> None:
    assert error('ignore = []\nselect = = ["TL301"]\n') == (
        ".trainlint.toml:2:10: invalid TOML: Invalid value"
    )
    assert error("select: [TL301\n", ".trainlint.yaml").startswith(
        ".trainlint.yaml:2:1: invalid YAML: "
    )
    assert error("- TL301\n", ".trainlint.yaml") == (
        ".trainlint.yaml: the file must be a table of keys"
    )
    assert error("[tool]\ntrainlint = 3\n", "pyproject.toml") == (
        "pyproject.toml: tool.trainlint must be a table of keys"
    )
    assert error('select = ["TL301", ""]\n') == (
        ".trainlint.toml: select: an empty selector names no rule (`ALL` selects every rule)"
    )
    assert error("select = []\n") == (
        ".trainlint.toml: select: names no rule, and no `extend-select` adds one: no rule "
        "would run (to check no file here, `exclude` it)"
    )
    assert error("select: [TL301]\nrules:\n  TL402: {}\nselect: [TL402]\n", ".trainlint.yaml") == (
        ".trainlint.yaml:4:1: invalid YAML: duplicate key `select`: one of its values would be "
        "lost"
    )


def test_command_line_values_are_checked_like_files() -> None:
    with pytest.raises(ConfigError) as raised:
        Resolver(overrides={"select": ["nope"]})
    assert str(raised.value) == (
        "command line: --select: no rule matches 'nope' (see `trainlint rules`)"
    )


def test_readme_example_configuration_is_valid(in_tmp: Path) -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("## Configuration and CI", 1)[1].split("```toml\n", 1)[1].split("```")[0]
    write("pyproject.toml", block)
    configuration = Resolver().for_path(in_tmp)
    assert configuration.settings.trainer_version == (2, 2)
    assert configuration.settings.fail_on == Severity.ERROR
