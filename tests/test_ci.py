"""CI runs the suite the way the README tells a newcomer to."""

from __future__ import annotations

import subprocess

from tests.conftest import ROOT


def readme_command(section: str) -> str:
    """The one-line `sh` block that opens a README section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split(f"\n## {section}\n", 1)[1].split("```sh\n", 1)[1].split("\n```", 1)[0]
    assert "\n" not in block, block
    return block


def test_ci_runs_the_readme_test_command() -> None:
    command = readme_command("Run the tests")
    assert command.endswith("python3 -m pytest")
    assert f"\n    {command} && return\n" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_ci_script_parses_and_refuses_unknown_options() -> None:
    result = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run"), "--fastest"],
        capture_output=True, text=True, check=False,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "usage: bash .ci/run [--locked | --newest | --lowest | --lock]\n"

