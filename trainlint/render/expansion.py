"""What Kubernetes expands in a container's values: `$(NAME)` references.

The kubelet expands a reference in `command`, `args` and an env variable's `value` from
the container's own variables (those of `envFrom`, then those of `env`, a value only
from the ones before it) and the Service links of the namespace; a reference it cannot
resolve stays as written. The image's environment (`PATH`, `HOME`) is never among them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: The names of the variables Kubernetes gives a pod for each Service of its namespace
#: (`<NAME>_SERVICE_HOST`, `<NAME>_SERVICE_PORT[_<PORT>]`, `<NAME>_PORT[_<n>_<PROTO>[_...]]`):
#: which Services exist is not known here.
SERVICE_LINK = re.compile(
    r"[A-Z0-9_]+_(?:SERVICE_HOST|SERVICE_PORT(?:_[A-Z0-9_]+)?"
    r"|PORT(?:_\d+_(?:TCP|UDP|SCTP)(?:_PROTO|_PORT|_ADDR)?)?)"
)


def references(text: str) -> Iterator[str]:
    """The names of the `$(NAME)` references in `text`, as Kubernetes' expansion reads
    them (`$$` writes a `$`; a `$(` never closed is text)."""
    at = text.find("$")
    while at != -1:
        following = text[at + 1:at + 2]
        if following == "(":
            end = text.find(")", at + 2)
            if end == -1:
                return
            yield text[at + 2:end]
            at = end
        elif following == "$":
            at += 1
        at = text.find("$", at + 1)
