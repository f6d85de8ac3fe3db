"""The HTTPS site's connections: TLS with small buffers, deadlines from the first byte,
and a cap that makes room by closing the longest idle connection.

asyncio's own TLS protocol reads into a 256 KiB buffer allocated for every connection
as it is accepted: a thousand idle sockets held over 250 MiB, more than the pod's
memory limit. Here a connection costs tens of KiB, a client that connects and sends
nothing (or only part of its headers) is dropped at the header deadline, the TLS
handshake included, and a connection with a request in progress is never closed to make
room for another.
"""

from __future__ import annotations

import asyncio
import ssl
from asyncio import sslproto
from collections.abc import Callable
from typing import Any

#: The most TLS bytes read from the socket at once (asyncio reads 256 KiB): an HTTP
#: request is a few KiB, and a TLS record at most 16 KiB.
READ_SIZE = 8 * 1024
#: Encrypted bytes buffered while the HTTP side reads no more (asyncio allows 256 KiB).
TLS_READ_HIGH_WATER = 8 * 1024
#: What aiohttp buffers of a body not yet read: its reading pauses at twice this.
HTTP_READ_BUFFER = 4 * 1024
#: The most bytes a request's line and headers may take (the API server sends well under
#: 1 KiB): aiohttp would hold up to 128 headers of 8 KiB, a megabyte, for each connection.
MAX_HEAD = 8 * 1024
#: How long a closing connection may wait for the client's close_notify (asyncio waits
#: 30 s, holding the connection's memory).
SHUTDOWN_TIMEOUT = 2.0


class Connections:
    """The open connections, against the cap. A new connection past the cap closes the
    one idle longest (one that never sent a request goes first); when every connection
    has a request in progress, the new one is refused."""

    def __init__(self, limit: int, header_timeout: float,
                 count: Callable[[str], None]) -> None:
        self.limit = limit
        self.header_timeout = header_timeout
        #: Told why a connection was refused or closed early: `too_many_connections`,
        #: `idle_connection_closed`, `header_timeout`, `headers_too_large`.
        self.count = count
        #: In the order accepted.
        self.open: dict[TLSConnection, None] = {}

    def admit(self, connection: TLSConnection) -> bool:
        if len(self.open) >= self.limit:
            idle = [other for other in self.open if not other.busy]
            if not idle:
                self.count("too_many_connections")
                return False
            victim = min(idle, key=lambda other: (other.served, other.last_active))
            self.gone(victim)
            victim.drop()
            self.count("idle_connection_closed")
        self.open[connection] = None
        return True

    def gone(self, connection: TLSConnection) -> None:
        self.open.pop(connection, None)

    def close_all(self) -> None:
        for connection in list(self.open):
            self.gone(connection)
            connection.drop()


class TLSConnection(sslproto.SSLProtocol):
    """One accepted connection: asyncio's TLS protocol with small buffers, in front of
    aiohttp's handler, with the header deadline running from the moment it is accepted.

    A request's headers must be complete within the header deadline of the connection's
    first byte (or, on a kept-alive connection, of the request's first byte); between
    requests, aiohttp's keep-alive timeout applies."""

    max_size = READ_SIZE

    def __init__(self, loop: asyncio.AbstractEventLoop, handler: Any, context: ssl.SSLContext,
                 connections: Connections) -> None:
        self.clock = loop
        self.handler = handler
        self.connections = connections
        self.served = False
        self.last_active = loop.time()
        #: Bytes received since a request was last being answered: its line and headers.
        self.head = 0
        self.deadline: asyncio.TimerHandle | None = None
        self.socket: asyncio.Transport | None = None
        # No waiter (asyncio passes None too, where nobody awaits the handshake), and a
        # deadline in seconds: the stubs want a Future and an int. The handshake deadline
        # is a backstop: the connection's own header deadline, which counts, comes first.
        super().__init__(
            loop, _Requests(handler, self), context, None,  # type: ignore[arg-type]
            server_side=True, ssl_shutdown_timeout=SHUTDOWN_TIMEOUT,
            ssl_handshake_timeout=2 * connections.header_timeout,  # type: ignore[arg-type]
        )

    @property
    def busy(self) -> bool:
        """Whether a request is being answered (or waits, pipelined): never closed early."""
        return bool(self.handler._messages) or bool(self.handler._request_in_progress)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.socket = transport
        super().connection_made(transport)
        if not self.connections.admit(self):
            transport.abort()
            return
        self.deadline = self.clock.call_later(self.connections.header_timeout, self._expire)

    def connection_lost(self, exc: BaseException | None) -> None:
        self.connections.gone(self)
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None
        super().connection_lost(exc)

    def received(self, size: int) -> None:
        """HTTP bytes arrived: a request is complete (no deadline while it is answered),
        or one has begun (its headers are due within the header deadline, in MAX_HEAD)."""
        self.last_active = self.clock.time()
        if self.busy:
            self.served = True
            self.head = 0
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None
            return
        self.head += size
        if self.head > MAX_HEAD:
            self.connections.count("headers_too_large")
            self.drop()
        elif self.deadline is None:
            self.deadline = self.clock.call_later(self.connections.header_timeout,
                                                  self._expire)

    def _expire(self) -> None:
        self.deadline = None
        if not self.busy:
            self.connections.count("header_timeout")
            self.drop()

    def drop(self) -> None:
        """Close at once: nothing is in flight, and a client that sent nothing in time is
        owed no TLS goodbye."""
        if self.socket is not None:
            self.socket.abort()


class _Requests(asyncio.Protocol):
    """aiohttp's handler as the TLS protocol's application, telling the connection when
    HTTP bytes arrive."""

    def __init__(self, handler: Any, connection: TLSConnection) -> None:
        self.handler = handler
        self.connection = connection

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, sslproto._SSLProtocolTransport)
        transport.set_read_buffer_limits(TLS_READ_HIGH_WATER)
        self.handler.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.handler.data_received(data)
        self.connection.received(len(data))

    def eof_received(self) -> bool | None:
        result: bool | None = self.handler.eof_received()
        return result

    def connection_lost(self, exc: Exception | None) -> None:
        self.handler.connection_lost(exc)

    def pause_writing(self) -> None:
        self.handler.pause_writing()

    def resume_writing(self) -> None:
        self.handler.resume_writing()
