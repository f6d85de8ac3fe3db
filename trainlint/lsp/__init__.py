"""`trainlint lsp`: the rules in the editor, as a Language Server Protocol server on stdio.

Importing this package loads pygls and lsprotocol (the `lsp` extra); only the `lsp`
command does.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import BinaryIO, cast

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
    # Returns once the client exits or goes away; stdout is closed.
    server.start_io(stdin=cast(BinaryIO, _Resynchronising(sys.stdin.buffer)))
    sys.stderr.flush()
    os._exit(0 if server.shut_down else 1)


class _Resynchronising:
    """Standard input as pygls's reader takes it, that finds the next message after one it
    could not frame. A header with no usable `Content-Length` makes that reader take the
    body that follows for header lines; the body has no line end of its own, so its first
    "line" runs on into the next message's header, which was lost with it (and the
    request it framed never answered). That line is given from the header it ends with."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def readline(self) -> bytes:
        line = self._stream.readline()
        start = line.rfind(b"Content-Length:")
        if start > 0 and line.endswith(b"\r\n"):
            logging.getLogger(__name__).warning(
                "skipped %d bytes that no usable Content-Length header framed", start)
            return line[start:]
        return line

    def read(self, size: int) -> bytes:
        return self._stream.read(size)
