"""Configuration: where it is found, what each key does, and how bad values are refused."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.test_suppression import RUNTIME
from trainlint.config import CONFIG_NAMES, ConfigError, Resolver, describe, discover
from trainlint.document import Source
from trainlint.engine import Finding, Settings, lint
from trainlint.loader import load
from trainlint.rule import Severity

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
        ".trainlint.toml: rules.TL402.min-seconds: "
        "Input should be a valid integer, unable to parse string as an integer"
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
