from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import TooComplex
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL003", "document-too-complex", reports=TooComplex, severity=Severity.ERROR,
    remediation="Write the object out plainly: no alias chains, no deep nesting.",
)
def check(problem: TooComplex) -> Iterator[Problem]:
    """## What it does
    Refuses documents nested more than 200 levels deep, composing to more than 500,000
    nodes or expanding (through aliases) to more than 250,000, and files larger than
    32 MiB, and reports where. Deep or huge documents are refused while they are read: when
    that stops the parser, the rest of the file is not checked either.

    ## Why is this bad?
    No Kubernetes object looks like this. Such input is a mistake or an attack ("billion
    laughs"); the API server limits it too. Checking it would take unbounded time and memory.

    ## When it stays silent
    Below the nesting and size limits, however large the file.

    ## Example
    ```yaml
    a: &a [x, x, x, x, x, x, x, x, x, x]
    b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
    c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
    d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
    e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
    f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
    ```

    Use instead:
    ```yaml
    a: [x, x, x, x, x, x, x, x, x, x]
    ```
    """
    yield Problem((), problem.message)
