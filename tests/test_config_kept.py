"""Validated configurations kept in cache folders (`trainlint.config.kept`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from trainlint.config import kept
from trainlint.config.files import Resolver
from trainlint.errors import ConfigError
from trainlint.files import CACHE_MARKERS

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = '[project]\nname = "demo"\n\n[tool.trainlint]\nignore = ["TL402"]\n'
#: Resolves the working folder's configuration with `keep`, in a process of its own, and
#: prints what it ignores and whether pydantic was imported.
PROBE = (
    "import json, sys; from pathlib import Path; from trainlint.config.files import Resolver; "
    "r = Resolver(keep=True, overrides=json.loads(sys.argv[1])); "
    "print(list(r.for_path(Path('.')).settings.ignore), 'pydantic' in sys.modules)"
)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def probe(overrides: dict[str, Any] | None = None) -> str:
    return subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(overrides or {})],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout


def made(folder: Path) -> Path:
    """A cache folder as a run makes it (with trainlint's markers)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in CACHE_MARKERS.items():
        (folder / name).write_text(text)
    return folder


def kept_file(folder: Path) -> dict[str, Any]:
    stored: dict[str, Any] = json.loads(kept.path_in(folder).read_text())
    return stored


def test_a_configuration_is_validated_once_then_read_without_pydantic(tmp_path: Path) -> None:
    Path("pyproject.toml").write_text(PYPROJECT)
    made(tmp_path / ".trainlint_cache")
    assert probe() == "['TL402'] True\n"
    assert probe() == "['TL402'] False\n"
    assert list(kept_file(tmp_path / ".trainlint_cache").values()) == [{"ignore": ["TL402"]}]
    Path("pyproject.toml").write_text(PYPROJECT.replace("TL402", "TL401"))
    assert probe() == "['TL401'] True\n"
    assert probe() == "['TL401'] False\n"


def test_the_command_line_keys_are_kept_too() -> None:
    made(Path(".trainlint_cache"))
    assert probe({"ignore": ["TL301"]}) == "['TL301'] True\n"
    assert probe({"ignore": ["TL301"]}) == "['TL301'] False\n"


def test_the_folder_the_configuration_names_keeps_it(tmp_path: Path) -> None:
    Path("pyproject.toml").write_text(PYPROJECT + 'cache-dir = "build/lint"\n')
    made(tmp_path / "build" / "lint")
    assert probe() == "['TL402'] True\n"
    assert probe() == "['TL402'] False\n"
    assert kept.path_in(tmp_path / "build" / "lint").is_file()


def test_no_folder_is_made_for_it(tmp_path: Path) -> None:
    Path("pyproject.toml").write_text(PYPROJECT)
    assert probe() == "['TL402'] True\n"
    assert probe() == "['TL402'] True\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["pyproject.toml"]


def test_a_refused_configuration_is_refused_every_time(tmp_path: Path) -> None:
    made(tmp_path / ".trainlint_cache")
    Path("pyproject.toml").write_text(PYPROJECT)
    Resolver(keep=True).for_path(tmp_path)
    Path("pyproject.toml").write_text(PYPROJECT.replace("TL402", "TL999"))
    for _ in range(2):
        with pytest.raises(ConfigError, match=r"ignore: no rule matches 'TL999'"):
            Resolver(keep=True).for_path(tmp_path)
    assert list(kept_file(tmp_path / ".trainlint_cache").values()) == [{"ignore": ["TL402"]}]


@pytest.mark.parametrize("stored", [
    {"ignore": "TL402"},  # a string where the key takes a list
    {"ignore": ["TL402"], "unknown-key": True},
    ["ignore"],
])
def test_what_is_read_back_is_used_only_in_the_shape_of_keys(
    tmp_path: Path, stored: object
) -> None:
    folder = made(tmp_path / ".trainlint_cache")
    Path("pyproject.toml").write_text(PYPROJECT)
    Resolver(keep=True).for_path(tmp_path)
    [key] = kept_file(folder)
    kept.path_in(folder).write_text(json.dumps({key: stored}))
    assert Resolver(keep=True).for_path(tmp_path).settings.ignore == ("TL402",)
    assert kept_file(folder) == {key: {"ignore": ["TL402"]}}


def test_a_folder_keeps_the_newest_configurations(tmp_path: Path) -> None:
    calls = []

    def validate(number: int) -> dict[str, Any]:
        calls.append(number)
        return {"ignore": [f"TL{number:03}"]}

    made(tmp_path)
    for number in range(kept.MAX_KEPT + 3):
        kept.validated(tmp_path, f"text {number}", partial(validate, number))
    assert len(kept_file(tmp_path)) == kept.MAX_KEPT
    kept.validated(tmp_path, f"text {kept.MAX_KEPT + 2}", lambda: validate(-1))  # kept
    kept.validated(tmp_path, "text 0", lambda: validate(0))  # the oldest: dropped
    assert calls == [*range(kept.MAX_KEPT + 3), 0]


def test_a_run_keeps_it_from_its_second_run_and_no_cache_neither_reads_nor_writes(
    tmp_path: Path,
) -> None:
    """The first run makes the cache folder after its configuration is read; the second
    keeps the configuration there; `--no-cache` leaves the folder as it finds it."""
    Path("pyproject.toml").write_text(PYPROJECT)
    Path("job.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    folder = tmp_path / ".trainlint_cache"

    def check(*options: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "trainlint", "check", "--allow-empty", *options, "job.yaml"],
            capture_output=True, text=True, check=False,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert done.returncode == 0, done.stderr

    check("--no-cache")
    assert not folder.exists()
    check()
    assert not kept.path_in(folder).exists()
    check()
    assert len(kept_file(folder)) == 1
    kept.path_in(folder).unlink()
    check("--no-cache")
    assert not kept.path_in(folder).exists()
