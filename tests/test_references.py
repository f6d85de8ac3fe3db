"""`$(NAME)` references are read as Kubernetes' expansion reads them (TL103, TL505)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trainlint.render.expansion import references


def looked_up(text: str) -> list[str]:
    """The names Kubernetes' expansion (third_party/forked/golang/expansion, `Expand`)
    asks its mapping for, step by step as it scans: the oracle."""
    names = []
    cursor = 0
    while cursor < len(text):
        if text[cursor] == "$" and cursor + 1 < len(text):
            rest = text[cursor + 1:]
            advance = 1
            if rest[0] == "(":
                close = rest.find(")", 1)
                if close != -1:
                    names.append(rest[1:close])
                    advance = close + 1
            cursor += advance
        cursor += 1
    return names


@pytest.mark.parametrize(("text", "names"), [
    ("--rdzv-endpoint=$(MASTER_ADDR):$(MASTER_PORT)", ["MASTER_ADDR", "MASTER_PORT"]),
    ("$$(MASTER_ADDR)", []),
    ("$$$(RANK)", ["RANK"]),
    ("$(RANK", []),
    ("$a$(RANK)", ["RANK"]),
    ("$(hostname -i)", ["hostname -i"]),
    ("$()", [""]),
    ("cost: 5$", []),
])
def test_references(text: str, names: list[str]) -> None:
    assert list(references(text)) == names == looked_up(text)


@given(st.text(alphabet="$()AB_ x", max_size=40))
def test_references_are_what_kubernetes_looks_up(text: str) -> None:
    assert list(references(text)) == looked_up(text)
