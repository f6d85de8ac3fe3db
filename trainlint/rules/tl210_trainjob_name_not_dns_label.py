from __future__ import annotations

import re
from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.rule import rule

LABEL_FORMAT = "[a-z]([-a-z0-9]*[a-z0-9])?"
#: apimachinery's `IsDNS1035Label` text (the double space is its own).
LABEL_ERROR = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    f"'abc-123', regex used for validation is '{LABEL_FORMAT}')"
)


@rule(
    "TL210", "trainjob-name-not-dns-label", kinds={"TrainJob"}, severity=Severity.ERROR,
    until="2.0",
    remediation="Use a lowercase name of at most 63 characters that starts with a letter.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    On v2.0, checks that a TrainJob's name is an RFC 1035 label: lowercase letters, digits
    and `-`, starting with a letter, ending with a letter or digit, at most 63 characters.
    (From v2.1 the CRD itself checks this; trainlint's schema rules report it there.)

    ## Why is this bad?
    The v2.0 Trainer webhook denies the TrainJob ("a DNS-1035 label must consist of lower
    case alphanumeric characters or '-', ..."): the name becomes the JobSet's and the
    headless service's, which must be DNS labels.

    ## When it stays silent
    From v2.1, where the CRD itself checks the name (the schema rules report it).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: SFT-Run-1
    spec:
      runtimeRef:
        name: torch-distributed
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
    ```
    """
    name = job.name
    if not name:
        return
    details = []
    if len(name) > 63:
        details.append("must be no more than 63 characters")
    if not re.fullmatch(LABEL_FORMAT, name):
        details.append(LABEL_ERROR)
    for detail in details:
        yield Problem(
            ("metadata", "name"),
            f"name `{name}` is not an RFC 1035 label: the Trainer webhook denies the TrainJob "
            f'("{detail}")',
        )
