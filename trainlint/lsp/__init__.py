"""`trainlint lsp`: the rules in the editor, as a Language Server Protocol server on stdio.

Importing this package loads pygls and lsprotocol (the `lsp` extra); only the `lsp`
command does.
"""

from __future__ import annotations

import logging
import os
import sys

from trainlint.lsp.server import build
from trainlint.lsp.workspace import LspOptions

__all__ = ["LspOptions", "run"]


def run(options: LspOptions) -> None:
    """Serve one client on stdin and stdout until it exits (status 0 after a `shutdown`
    request, else 1, as the protocol asks); logs go to stderr."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    server = build(options)
    server.start_io()  # returns once the client exits or goes away; stdout is closed
    sys.stderr.flush()
    os._exit(0 if server.shut_down else 1)
