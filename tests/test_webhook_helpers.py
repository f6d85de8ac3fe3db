"""What the webhook tests share: a server on loopback in its own event loop thread, an HTTPS
client that dials like the API server, and a port of the API server's response checks."""

from __future__ import annotations

import asyncio
import http.client
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web

from trainlint.webhook.server import ServeOptions, Server, client_context
from trainlint.webhook.sources import ContextSource

T = TypeVar("T")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
SERVICE = "trainlint.trainlint-system.svc"


class Loop:
    """An event loop in a daemon thread: the server runs there, the test drives it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 10) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def start(self, options: ServeOptions, source: ContextSource) -> Server:
        async def start() -> Server:
            server = Server(options, source)
            await server.start()
            return server

        return self.run(start())

    def close(self) -> None:
        """Stop the loop once what still runs on it (a request a stand-in server is
        still answering, a watch) is cancelled: a task left pending on a stopped loop is
        destroyed at exit, with a warning for each."""

        async def cancel_the_rest() -> None:
            rest = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        try:
            self.run(cancel_the_rest(), timeout=5)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)
            if not self.thread.is_alive():
                self.loop.close()

    def serve_http(self, handler: Handler) -> tuple[web.AppRunner, str]:
        """Plain HTTP on a free loopback port, every request to `handler` (a stand-in
        for the API server): the runner to clean up, and the URL."""

        async def start() -> tuple[web.AppRunner, str]:
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", handler)
            runner = web.AppRunner(app, shutdown_timeout=0.1)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            return runner, f"http://127.0.0.1:{site.port}"

        return self.run(start())


class ApiServerConnection(http.client.HTTPSConnection):
    """Dials 127.0.0.1 but verifies the certificate for the service name, as the API
    server verifies `<service>.<namespace>.svc`; HTTP/1.1 keep-alive."""

    def __init__(self, port: int, ca: Path, *, context: ssl.SSLContext | None = None,
                 timeout: float = 5) -> None:
        super().__init__(SERVICE, port, context=context or client_context(ca), timeout=timeout)

    def connect(self) -> None:
        sock = socket.create_connection(("127.0.0.1", self.port), self.timeout)
        assert self._context is not None  # type: ignore[attr-defined]  # set by __init__
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]

    def review(self, body: bytes, *, timeout: str = "3s",
               content_type: str = "application/json") -> tuple[int, bytes]:
        self.request("POST", f"/validate?timeout={timeout}", body,
                     {"Content-Type": content_type})
        response = self.getresponse()
        return response.status, response.read()


def get(port: int, path: str) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Serving:
    """`trainlint serve` in a process of its own; `stderr` is its log, once it ended."""

    process: subprocess.Popen[str]
    port: int
    metrics_port: int
    probe_port: int
    ca: Path
    stderr: str = ""


@contextmanager
def serving(folder: Path, *arguments: str, probes_apart: bool = False) -> Iterator[Serving]:
    """The real command on loopback with a throwaway CA (the probes on a port of their
    own when `probes_apart`), once ready; killed at the end if still running."""
    ca = folder / "ca.crt"
    port, metrics_port = free_port(), free_port()
    probe_port = free_port() if probes_apart else metrics_port
    process = subprocess.Popen(
        [sys.executable, "-c", "from trainlint.cli import run; run()", "serve",
         "--self-signed", "--ca-out", str(ca), "--host", "127.0.0.1", "--port", str(port),
         "--metrics-port", str(metrics_port), "--probe-port", str(probe_port), *arguments],
        stderr=subprocess.PIPE, text=True,
    )
    served = Serving(process, port, metrics_port, probe_port, ca)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                if get(probe_port, "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "never ready"
            time.sleep(0.05)
        yield served
    finally:
        if process.poll() is None:
            process.kill()
        served.stderr = process.communicate()[1]


def peak_rss(pid: int) -> float:
    """The process's peak resident memory so far, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc")


# --- the API server's checks (k8s.io/apiserver admission/plugin/webhook/request and
# endpoints/filters/warning.go), ported so a test fails where the API server would ---

TOTAL_WARNING_RUNES = 4 * 1024
WARNING_RUNES = 256


def verify_admission_response(uid: str, answer: Any) -> dict[str, Any]:
    """VerifyAdmissionResponse for admission.k8s.io/v1, validating webhook."""
    assert isinstance(answer, dict), "webhook response was not an object"
    assert answer.get("apiVersion") == "admission.k8s.io/v1" and answer.get(
        "kind") == "AdmissionReview", (
        f"expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {answer}"
    )
    response = answer.get("response")
    assert isinstance(response, dict), "webhook response was absent"
    assert response.get("uid") == uid, f"expected response.uid={uid!r}, got {response.get('uid')!r}"
    assert "patchType" not in response, "validating webhook may not return response.patchType"
    assert not response.get("patch"), "validating webhook may not return response.patch"
    assert isinstance(response.get("allowed"), bool)
    for warning in response.get("warnings") or []:
        assert isinstance(warning, str)
    return response


def recorded_warnings(warnings: list[str]) -> list[str]:
    """What kubectl receives: the API server's warning recorder (dedup, then truncation
    once the total passes 4 KiB, then dropping)."""
    kept: list[str] = []
    seen: set[str] = set()
    written = 0
    truncating = False
    for text in warnings:
        if not text or text in seen or (truncating and written >= TOTAL_WARNING_RUNES):
            continue
        seen.add(text)
        shown = _truncate(text) if truncating else text
        if truncating and written + len(shown) > TOTAL_WARNING_RUNES:
            break
        kept.append(shown)
        written += len(shown)
        if written > TOTAL_WARNING_RUNES and not truncating:
            truncating = True
            kept = [_truncate(item) for item in kept]
            written = sum(len(item) for item in kept)
    return kept


def _truncate(text: str) -> str:
    return text if len(text) <= WARNING_RUNES else text[:WARNING_RUNES] + "..."

