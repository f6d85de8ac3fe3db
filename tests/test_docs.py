"""The documentation site: rule pages written from the rules and kept in sync, a strict
mkdocs build, and the links reports make to it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_cli import trainlint
from tests.test_suppression import RUNTIME
from trainlint import docs
from trainlint.rule import all_rules

RULES_FOLDER = ROOT / "docs" / "rules"


def test_committed_rule_pages_are_what_the_generator_writes(tmp_path: Path) -> None:
    written = tmp_path / "rules"
    result = subprocess.run(
        [sys.executable, "-m", "trainlint.docs", str(written)],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{written}: {len(all_rules()) + 1} pages written\n"
    committed = {path.name: path.read_text() for path in RULES_FOLDER.glob("*.md")}
    generated = {path.name: path.read_text() for path in written.glob("*.md")}
    stale = sorted(name for name in committed.keys() | generated.keys()
                   if committed.get(name) != generated.get(name))
    assert not stale, f"docs/rules is out of date ({stale}): run `python -m trainlint.docs`"


def test_every_rule_has_a_page_and_preview_rules_are_marked() -> None:
    index = (RULES_FOLDER / "index.md").read_text()
    for rule in all_rules().values():
        page = (RULES_FOLDER / f"{rule.code}.md").read_text()
        assert page.startswith(f"# {rule.code} {rule.name}\n")
        assert rule.doc in page
        assert ("Preview: off by default" in page) == rule.preview, rule.code
        row = f"| [{rule.code}]({rule.code}.md) | {rule.name}{' (preview)' * rule.preview} |"
        assert row in index, rule.code


def test_writing_again_changes_nothing_and_drops_pages_of_removed_rules(tmp_path: Path) -> None:
    assert len(docs.write(tmp_path)) == len(all_rules()) + 1
    (tmp_path / "TL999.md").write_text("# a rule that is gone\n")
    (tmp_path / "TL301.md").write_text("edited by hand\n")
    assert docs.write(tmp_path) == ["TL999.md", "TL301.md"]
    assert docs.write(tmp_path) == []


def test_trainlint_rule_prints_the_page() -> None:
    result = trainlint("rule", "TL301", cwd=ROOT)
    assert result.returncode == 0
    assert result.stdout == (RULES_FOLDER / "TL301.md").read_text()


def test_the_site_builds_strictly_with_a_page_per_rule(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which(
        "mkdocs"
    )
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (the `docs` extra)")
    site = tmp_path / "site"
    result = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, capture_output=True, text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for rule in all_rules().values():
        html = (site / "rules" / rule.code / "index.html").read_text()
        assert f"{rule.code} {rule.name}" in html
    assert "TL301" in (site / "rules" / "index.html").read_text()


def test_sarif_links_point_at_the_configured_site(tmp_path: Path) -> None:
    (tmp_path / "runtime.yaml").write_text(RUNTIME)
    default = json.loads(
        trainlint("check", "--no-cache", "--output-format", "sarif", "runtime.yaml",
                  cwd=tmp_path).stdout
    )
    driver = default["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://trainlint.dev"
    assert {rule["helpUri"] for rule in driver["rules"]} == {
        f"https://trainlint.dev/rules/{rule['id']}/" for rule in driver["rules"]
    }
    (tmp_path / ".trainlint.toml").write_text('docs-url = "https://docs.example.com/trainlint/"\n')
    mirrored = json.loads(
        trainlint("check", "--no-cache", "--output-format", "sarif", "runtime.yaml",
                  cwd=tmp_path).stdout
    )
    driver = mirrored["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://docs.example.com/trainlint"
    assert "https://docs.example.com/trainlint/rules/TL301/" in {
        rule["helpUri"] for rule in driver["rules"]
    }


def test_docs_url_must_be_a_web_address(tmp_path: Path) -> None:
    (tmp_path / "runtime.yaml").write_text(RUNTIME)
    (tmp_path / ".trainlint.toml").write_text('docs-url = "docs/site"\n')
    result = trainlint("check", "--no-cache", "runtime.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert re.search(r"\.trainlint\.toml: docs-url: 'docs/site' is not an http\(s\) address",
                     result.stderr), result.stderr


def test_readme_documents_the_site_the_links_point_at() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "https://trainlint.dev/rules/TL301/" in readme
    assert "`docs-url`" in readme
