"""A key set to null is a key not written: the API server prunes nulls (no field of these
kinds is nullable) before defaulting, validating and storing, so the controller and the
webhooks never see one. Every failing rule case of `rules/`, with some keys set to null and,
apart, the same keys removed, gives the same findings, but for TL005's report of each null."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tests.test_rule_cases import _cases, case_settings
from trainlint.document import KeyPath
from trainlint.engine.run import lint
from trainlint.loader import load

#: The rules of the text itself, not of objects.
TEXT_RULES = ("TL001", "TL002", "TL003", "TL004")
#: Every this many leaves of a document is set to null (or removed).
STRIDE = 2


def _leaves(value: Any, prefix: KeyPath = ()) -> Iterator[KeyPath]:
    """The paths of the mapping keys under `value` that hold a scalar or an empty mapping
    or list (`torch: {}`, whose null spelling `torch:` is common); not those of the
    object's identity (`apiVersion`, `kind`) nor of `metadata`, which no schema prunes."""
    if isinstance(value, dict):
        for key, item in value.items():
            if prefix or key not in ("apiVersion", "kind", "metadata"):
                if isinstance(item, dict | list) and item:
                    yield from _leaves(item, (*prefix, key))
                else:
                    yield (*prefix, key)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from _leaves(item, (*prefix, position))


def _chosen(document: dict[str, Any]) -> list[KeyPath]:
    return list(_leaves(document))[::STRIDE]


def _with(documents: list[Any], null: bool) -> str:
    changed = copy.deepcopy(documents)
    for document in changed:
        if isinstance(document, dict):
            for *parents, key in _chosen(document):
                holder = document
                for part in parents:
                    holder = holder[part]
                if null:
                    holder[key] = None
                else:
                    del holder[key]
    return yaml.safe_dump_all(changed, sort_keys=False)


def _found(text: str, case: dict[str, Any], code: str) -> set[tuple[object, ...]]:
    findings = lint([load(text, "case.yaml")], case_settings(code, case))
    return {(f.code, f.path, f.message) for f in findings if f.code != "TL005"}


def _failing_cases() -> list[Any]:
    """The `fail:` cases of one state (no `before:`) of the rules that judge objects, not
    text (TL001-TL004's aliases would expand here): a rule's findings are there, and what
    a null might change (`pass:` cases hold fewer keys to try)."""
    kept = []
    for param in _cases():
        code, case = param.values
        if code in TEXT_RULES:
            continue
        try:
            documents = list(yaml.safe_load_all(case.get("fail", "")))
        except yaml.YAMLError:
            continue
        if "before" not in case and any(isinstance(found, dict) for found in documents):
            kept.append(param)
    return kept


@pytest.mark.parametrize(("code", "case"), _failing_cases())
def test_null_is_not_written(code: str, case: dict[str, Any]) -> None:
    documents = list(yaml.safe_load_all(case["fail"]))
    assert _found(_with(documents, null=True), case, code) == _found(
        _with(documents, null=False), case, code
    )
