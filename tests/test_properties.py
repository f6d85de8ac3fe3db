"""Property tests: no input makes the loader or any rule raise; positions are on the key."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT, KubectlDumper, lint_text
from trainlint.config.settings import Settings
from trainlint.engine.run import lint
from trainlint.loader import load
from trainlint.model.check import QUANTITY_PATTERN, quantity_guess
from trainlint.release import RELEASES

EXAMPLES = [
    document
    for path in sorted((ROOT / "examples").rglob("*.yaml"))
    for document in yaml.safe_load_all(path.read_text())
]


def dump_all(documents: list[Any]) -> str:
    """YAML of `documents`, by libyaml: the pure-Python dumper took 25 ms a dump of the
    examples, more than linting them."""
    return yaml.dump_all(documents, Dumper=yaml.CSafeDumper)


EXAMPLES_TEXT = dump_all(EXAMPLES)
scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
versions = st.sampled_from(RELEASES)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    parent = copy
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = new
    return copy


#: Each example's key paths, the places a mutation may land.
PLACES = [st.sampled_from(_paths(document)) for document in EXAMPLES]


def _mutated(data: st.DataObject) -> list[Any]:
    """The examples, each with the value at one of its places replaced by any JSON value."""
    return [_replace(document, data.draw(place), data.draw(json_values))
            for document, place in zip(EXAMPLES, PLACES, strict=True)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_any_text_loads_and_lints(text: str) -> None:
    for finding in lint_text(text):
        assert finding.span.line >= 1 and finding.span.column >= 1


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), versions)
def test_mutated_realistic_manifests_never_crash_a_rule(data: st.DataObject, version: Any) -> None:
    text = dump_all(_mutated(data))
    for finding in lint_text(text, Settings(trainer_version=version)):
        assert 1 <= finding.span.line <= text.count("\n") + 1


_WORDS_OF_ANY_TYPE = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: rt, namespace: ml}
spec:
  mlPolicy: {numNodes: 2, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  containers:
                    - {name: node, image: x, command: COMMAND, args: ARGS}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: ml}
spec:
  runtimeRef: {name: rt, kind: TrainingRuntime}
  trainer: {command: COMMAND, args: ARGS}
"""


@pytest.mark.parametrize("value", ["true", "3", "text", "{a: 1}", "null", "[1, {a: b}]"])
@pytest.mark.parametrize("words", [
    ("[torchrun, --node-rank, $PET_NODE_RANK, train.py]", "VALUE"),
    ("VALUE", "[--output_dir, /tmp/out]"),
    ("[tune, run, full_finetune_distributed]", "VALUE"),
])
def test_a_command_or_args_of_any_type_crashes_no_rule(
        value: str, words: tuple[str, str]) -> None:
    """Rules read `command` and `args` as lists: any other value (refused by the API
    server, TL005 says so) is read as none (`args: true` made a rule raise)."""
    command, args = (part.replace("VALUE", value) for part in words)
    text = _WORDS_OF_ANY_TYPE.replace("COMMAND", command).replace("ARGS", args)
    for version in RELEASES:
        lint_text(text, Settings(trainer_version=version))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), versions)
def test_an_update_to_any_value_never_crashes_a_rule(data: st.DataObject, version: Any) -> None:
    """Update rules compare with the stored object: a mutated object against the realistic
    one it replaces, and the realistic one against the mutated one, raise nothing."""
    realistic = load(EXAMPLES_TEXT, "before.yaml").manifests
    mutated = load(dump_all(_mutated(data)), "after.yaml")
    lint([mutated], Settings(trainer_version=version), previous=realistic)
    lint([load(EXAMPLES_TEXT, "case.yaml")], Settings(trainer_version=version),
         previous=mutated.manifests)


@settings(max_examples=100, deadline=None)
@given(json_values, versions)
def test_any_json_value_as_a_spec_never_crashes(spec: Any, version: Any) -> None:
    for kind in ("TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"):
        body = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": kind,
                "metadata": {"name": "x"}, "spec": spec}
        lint_text(json.dumps(body), Settings(trainer_version=version))


keys = st.from_regex(r"[a-z][a-zA-Z]{0,7}", fullmatch=True)
trees = st.recursive(
    st.integers(0, 9),
    lambda inner: st.dictionaries(keys, inner, min_size=1, max_size=4)
    | st.lists(inner, min_size=1, max_size=3),
    max_leaves=15,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(keys, trees, min_size=1, max_size=4), st.booleans())
@example({"no": 0, "on": {"yes": [1]}}, False)  # YAML 1.1 booleans: dumped quoted
def test_positions_land_on_the_line_holding_the_key(tree: dict[str, Any], flow: bool) -> None:
    text = yaml.dump(tree, Dumper=KubectlDumper, default_flow_style=flow, width=10_000)
    manifest_text = "apiVersion: v1\nkind: ConfigMap\n" + ("" if flow else text)
    body = {"apiVersion": "v1", "kind": "ConfigMap", **tree}
    if flow:
        manifest_text = yaml.dump(body, Dumper=KubectlDumper, default_flow_style=False,
                                  width=10_000)
    manifest = load(manifest_text, "t.yaml").manifests[0]
    lines = manifest_text.splitlines()
    for path in _paths(body)[1:]:
        span = manifest.span(path)
        line = lines[span.line - 1]
        if isinstance(path[-1], str):  # a key the dumper quotes (`'no'`) starts at its quote
            written = (path[-1], f"'{path[-1]}'", f'"{path[-1]}"')
            assert line[span.column - 1:].startswith(written), (path, line)


#: Plain scalars that YAML 1.1 or go-yaml v2 read as something other than a string, and
#: near misses.
_TYPED = ["yes", "No", "ON", "off", "y", "n", "Y", "true", "False", "null", "~", "0x1F",
          "0o17", "017", "08", "00", "-0", "0b101", "1_000", "-12", "+3", "1:30", "1:30:00",
          "1.5e3", "-.inf", ".Inf", "3.", "1e3", "1E-2", ".5", "+.5", "._5", ".5_0", "1e400",
          "2026-01-01", "2026-01-01 10:00:00", "<<", "=", "0.5.1", "12abc", "-", "0x", "0o",
          "0b", "0x_1F", "-0x10", "+0o7", "1__0", "18446744073709551615",
          "18446744073709551616", "-9223372036854775808", "-9223372036854775809"]


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_plain_scalars_read_as_kubectl_reads_them(tmp_path: Path) -> None:
    """The loader resolves tags its own way, as go-yaml v2 does (kubectl's decoder, not
    PyYAML's YAML 1.1): every value of a ConfigMap of the typed scalars above and 1,500
    drawn from the characters numbers and booleans are made of reads as `kubectl label
    --local` (which decodes the file and prints it as JSON, with no cluster) prints it.
    JSON keeps no difference between 8 and 8.0, so numbers compare by value; it has no
    infinity or NaN either (kubectl refuses a file that holds one), so they are left out."""
    drawn = random.Random(24)
    candidates = [*_TYPED, *("".join(drawn.choice("0123456789.:-+_xobeEyYnNtrufalsi~")
                                     for _ in range(drawn.randint(1, 6))) for _ in range(1500))]
    values = [text for text in dict.fromkeys(candidates)
              if _one_scalar(text) and text.lstrip("+-").lower() not in {".nan", ".inf"}]
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: scalars}\nfoo:\n" + "".join(
        f"  k{index}: {value}\n" for index, value in enumerate(values))
    manifest = tmp_path / "scalars.yaml"
    manifest.write_text(text)
    done = subprocess.run(["kubectl", "label", "--local", "-f", str(manifest), "x=y", "-o",
                           "json"], capture_output=True, text=True, timeout=60, check=True)
    read = json.loads(done.stdout)["foo"]
    loaded = load(text, "scalars.yaml").manifests[0].written["foo"]
    differ = [(value, read.get(f"k{index}"), loaded.get(f"k{index}"))
              for index, value in enumerate(values)
              if not _same(read.get(f"k{index}"), loaded.get(f"k{index}"))]
    assert differ == []
    assert len(values) > 1000
    # As keys, the booleans and integers among them are the text kubectl gives them.
    keys = [value for index, value in enumerate(values) if not set(value) & set(".eE")
            and isinstance(loaded[f"k{index}"], int) and -(2**63) <= loaded[f"k{index}"] < 2**63]
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keys}\nfoo:\n" + "".join(
        f"  k{index}: {{{key}: x}}\n" for index, key in enumerate(keys))
    manifest.write_text(text)
    done = subprocess.run(["kubectl", "label", "--local", "-f", str(manifest), "x=y", "-o",
                           "json"], capture_output=True, text=True, timeout=60, check=True)
    read = json.loads(done.stdout)["foo"]
    loaded = load(text, "scalars.yaml").manifests[0].written["foo"]
    assert [list(read[f"k{index}"]) for index in range(len(keys))] == [
        list(loaded[f"k{index}"]) for index in range(len(keys))]
    assert len(keys) > 50


def _one_scalar(text: str) -> bool:
    """Whether `text` is one plain scalar as a mapping's value (no comment, no flow)."""
    try:
        found = yaml.safe_load(f"k: {text}\n")
    except yaml.YAMLError:
        return False
    return bool(text) and isinstance(found, dict) and list(found) == ["k"]


def _same(read: object, loaded: object) -> bool:
    if _number(read) and _number(loaded):
        return float(read) == float(loaded)  # type: ignore[arg-type]
    return type(read) is type(loaded) and read == loaded


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_TYPED) | st.text("0123456789.:-+_xobeEyYnNtrufalsi~ ", max_size=8))
@example("yes")
def test_a_quoted_scalar_is_the_text_it_spells(text: str) -> None:
    """Quoted, any scalar is text, whatever it spells."""
    for quoted in (f"'{text}'", json.dumps(text)):
        loaded = load(f"apiVersion: v1\nkind: ConfigMap\nvalue: {quoted}\n", "t.yaml")
        assert loaded.manifests[0].written["value"] == text


def test_examples_exist() -> None:
    assert EXAMPLES, Path(ROOT / "examples")


@given(st.from_regex(r"[+-]?[0-9.]{1,4}\s?[A-Za-z]{0,3}", fullmatch=True) | st.text(max_size=8))
@example("4KB")
@example("4Gi\n")
def test_a_quantity_guess_is_a_quantity_of_the_same_size(text: str) -> None:
    """What TL008 offers for a misspelt quantity is itself a quantity, and the one written:
    the same number, the same unit, a byte suffix dropped."""
    guess = quantity_guess(text)
    if guess is None:
        return
    assert guess != text and re.fullmatch(QUANTITY_PATTERN.strip("^$"), guess)
    number = re.match(r"[+-]?[0-9.]*", guess)
    assert number is not None and text.strip().startswith(number[0])
    assert guess[len(number[0]):].lower() == re.sub(
        r"b$", "", text.strip()[len(number[0]):].strip().lower()
    )
