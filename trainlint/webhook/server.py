"""The HTTPS server: aiohttp behind TLS connections of our own (`connections`), probes
and metrics on plain ports.

Every request gets an AdmissionReview or a 4xx; nothing here answers 5xx or shows a
traceback. The rules run inline for ordinary objects (they take well under a millisecond)
and in a worker thread, bounded by the API server's deadline, for large ones.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import re
import signal
import ssl
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from trainlint.config.settings import Settings
from trainlint.model import validations
from trainlint.rule import all_rules
from trainlint.webhook import admission, tls
from trainlint.webhook.admission import BadReview, Decision, Mode, Review, printable
from trainlint.webhook.connections import HTTP_READ_BUFFER, Connections, TLSConnection
from trainlint.webhook.metrics import Metrics
from trainlint.webhook.sources import ContextSource
from trainlint.webhook.store import KINDS, Store

log = logging.getLogger("trainlint.webhook")

#: The API server sends objects up to 3 MiB (etcd's limit is 1.5 MiB, plus the old object).
MAX_BODY = 3 * 1024 * 1024
#: Request bodies held at once, across connections: ten of the largest, or thousands of
#: the usual few KiB.
MAX_BODIES = 32 * 1024 * 1024
#: Requests waiting for room in it at most: each holds its connection's full buffers.
MAX_WAITING = 256
#: The most characters of a request's own string (uid, namespace...) written to the log.
LOGGED = 253
#: Bodies above this are checked in a worker thread, so the deadline can still be kept.
INLINE_BODY = 64 * 1024
#: The API server's default and maximum webhook timeouts.
DEFAULT_TIMEOUT = 10.0
MAX_TIMEOUT = 30.0
#: Event-loop lag above which requests are answered without running the rules: far above
#: the lag of a server keeping up (a few ms at 1,000 requests/s), and low enough that a
#: queue three times its capacity is answered within the API server's deadline.
SHED_LAG = 0.1
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass
class ServeOptions:
    """What `trainlint serve` is told on its command line."""

    tls_cert: Path | None = None
    tls_key: Path | None = None
    host: str = "0.0.0.0"
    port: int = 9443
    metrics_port: int = 8080
    #: Where /healthz and /readyz are served: the metrics port when None, or a port of
    #: their own, so a NetworkPolicy can open /metrics to Prometheus alone.
    probe_port: int | None = None
    mode: Mode = Mode.ADVISE
    settings: Settings = field(default_factory=Settings)
    service_name: str = "trainlint"
    namespace: str = "trainlint-system"
    allow_tls12: bool = False
    #: Seconds of serving after SIGTERM while endpoints drop the pod, then of draining.
    lame_duck: float = 5.0
    drain: float = 10.0
    cert_poll: float = 5.0
    #: From a connection's first byte (its TLS handshake included), or a request's, to
    #: the end of the request's headers.
    header_timeout: float = 10.0
    #: Between requests: longer than the 90 s idle timeout of Go's HTTP client, which the
    #: API server dials with: it closes an idle connection first, and never sends a request
    #: down one being closed.
    keepalive: float = 130.0
    #: Open connections at most, sized for the Deployment's 256Mi: ~55 MiB at rest, 32 MiB
    #: of bodies (`MAX_BODIES`), 58 KiB a connection at most (measured: 33 KiB idle, 45
    #: kept alive, 58 before its TLS handshake; 82 with its buffers full, which at most
    #: `MAX_WAITING` are). Filled with the costliest mix, the server peaks at ~180 MiB.
    #: Past it, the connection idle longest is closed; when none is idle, the new one.
    max_connections: int = 2048

    @property
    def dns_name(self) -> str:
        return f"{self.service_name}.{self.namespace}.svc"


def deadline_budget(value: str | None) -> float:
    """`?timeout=3s` (a Go duration) → seconds to answer in, leaving room for the reply."""
    seconds = DEFAULT_TIMEOUT
    if value and _DURATION.fullmatch(value.replace("µs", "us")) is None:
        value = None
    if value:
        seconds = sum(float(n) * _UNITS[u] for n, u in _DURATION.findall(value))
    seconds = min(max(seconds, 0.0), MAX_TIMEOUT)
    return seconds - min(seconds * 0.2, 0.5)


class LagMonitor:
    """How late the event loop runs: the queue a new request waits in, as it grows."""

    def __init__(self, interval: float = 0.01) -> None:
        self.interval = interval
        self._expected = time.monotonic()
        self._last = 0.0

    @property
    def lag(self) -> float:
        return max(self._last, time.monotonic() - self._expected)

    async def run(self) -> None:
        while True:
            self._expected = time.monotonic() + self.interval
            await asyncio.sleep(self.interval)
            self._last = max(0.0, time.monotonic() - self._expected)


class Webhook:
    """The `/validate` handler and its collaborators."""

    def __init__(self, options: ServeOptions, store: Store, metrics: Metrics) -> None:
        self.options = options
        self.store = store
        self.metrics = metrics
        self.monitor = LagMonitor()
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="trainlint-large")
        self.large = asyncio.Semaphore(4)
        self.bodies = BodyBudget(MAX_BODIES, MAX_WAITING)
        self.shutting_down = False

    async def validate(self, request: web.Request) -> web.Response:
        started = time.monotonic()
        deadline = started + deadline_budget(request.query.get("timeout"))
        self.metrics.in_flight.inc()
        try:
            # Behind as the request is taken up: the time it then takes itself (a large or
            # deep body) is no reason to shed it.
            behind = self.monitor.lag > SHED_LAG
            return await self._validate(request, started, deadline, behind)
        finally:
            self.metrics.in_flight.dec()
            self.metrics.latency.observe(time.monotonic() - started)

    async def _validate(
        self, request: web.Request, started: float, deadline: float, behind: bool
    ) -> web.Response:
        if request.content_type != "application/json":
            return self._refuse(
                415, "unsupported_media_type", "Content-Type must be application/json"
            )
        if request.content_length is not None and request.content_length > MAX_BODY:
            return self._refuse(413, "too_large", f"body over {MAX_BODY} bytes", close=True)
        size = MAX_BODY if request.content_length is None else request.content_length
        if not await self.bodies.take(size, deadline):
            return self._refuse(429, "overloaded", "too many request bodies in flight; retry",
                                close=True)
        try:
            return await self._answer(request, started, deadline, behind)
        finally:
            self.bodies.give(size)

    async def _answer(
        self, request: web.Request, started: float, deadline: float, behind: bool
    ) -> web.Response:
        try:
            body = await asyncio.wait_for(read_body(request), max(deadline - time.monotonic(), 0))
        except _TooLarge:
            return self._refuse(413, "too_large", f"body over {MAX_BODY} bytes", close=True)
        except (TimeoutError, ConnectionError) as error:
            # aiohttp keeps a lost connection's error on its body stream: the traceback
            # would tie the stream, these frames and the connection (with its TLS buffers,
            # memory the collector does not see) in a cycle that outlives the connection.
            error.__traceback__ = None
            return self._refuse(408, "slow_body", "body not received in time", close=True)
        try:
            review = admission.parse(body)
        except BadReview as error:
            return self._malformed(error)
        decision = await self.decide(review, len(body), deadline, behind=behind)
        self._record(review, decision, started)
        return self._reply(review.uid, decision)

    def _malformed(self, error: BadReview) -> web.Response:
        """Not an AdmissionReview: answered as one when the body is a JSON object."""
        if error.uid is None:
            return self._refuse(400, "bad_request", str(error))
        decision = admission.malformed(error, self.options.mode)
        self.metrics.errors.labels(decision.reason).inc()
        log.info(json.dumps({"uid": bounded(error.uid), "decision": decision.verdict,
                             "reason": decision.reason, "error": bounded(str(error))}))
        return self._reply(error.uid, decision)

    @staticmethod
    def _reply(uid: str, decision: Decision) -> web.Response:
        data = json.dumps(admission.response(uid, decision), separators=(",", ":"))
        return web.Response(body=data.encode(), content_type="application/json")

    async def decide(
        self, review: Review, size: int, deadline: float, *, behind: bool = False
    ) -> Decision:
        """Inline when small; in a worker bounded by the deadline when large; not at all
        (a fast, honest answer) when the loop was too far `behind` or workers are all busy."""
        mode = self.options.mode
        early = admission.unchecked(review, mode)
        if early is not None:
            return early
        busy = size > INLINE_BODY and self.large.locked()
        if behind or busy:
            return admission.not_checked(review, mode, "trainlint is overloaded; retry",
                                         "overloaded")
        try:
            if size <= INLINE_BODY:
                return self._decide(review)
            async with self.large:
                loop = asyncio.get_running_loop()
                work = loop.run_in_executor(self.pool, self._decide, review)
                return await asyncio.wait_for(work, max(deadline - time.monotonic(), 0))
        except TimeoutError:
            return admission.not_checked(
                review, mode, "the check did not finish before the API server's deadline",
                "timeout")
        except Exception:  # a rule crashed on an input nobody foresaw
            log.exception("rule evaluation failed for %s", bounded(review.uid))
            return admission.not_checked(review, mode, "internal error in trainlint", "internal")

    def _decide(self, review: Review) -> Decision:
        return admission.decide(
            review, self.options.settings, self.options.mode, self.store.context_for
        )

    def _record(self, review: Review, decision: Decision, started: float) -> None:
        self.metrics.count(review.kind, review.operation, decision.verdict)
        if decision.reason and decision.reason != "skipped":
            self.metrics.errors.labels(decision.reason).inc()
        for code in decision.codes:
            self.metrics.findings.labels(code).inc()
        log.info(json.dumps({
            "uid": bounded(review.uid), "kind": bounded(review.kind),
            "namespace": bounded(review.namespace), "name": bounded(review.name),
            "operation": bounded(review.operation), "dryRun": review.dry_run,
            "decision": decision.verdict, "codes": list(decision.codes),
            "reason": decision.reason or None,
            "duration_ms": round((time.monotonic() - started) * 1000, 3),
        }))

    def _refuse(
        self, status: int, reason: str, message: str, *, close: bool = False
    ) -> web.Response:
        self.metrics.errors.labels(reason).inc()
        response = web.Response(status=status, text=f"trainlint: {message}\n")
        if close:
            response.force_close()
        return response

    def ready(self) -> bool:
        return not self.shutting_down and all(self.store.synced.values())

    async def healthz(self, _: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def readyz(self, _: web.Request) -> web.Response:
        if self.ready():
            return web.Response(text="ok\n")
        waiting = [kind for kind, synced in self.store.synced.items() if not synced]
        why = "shutting down" if self.shutting_down else f"caches not synced: {', '.join(waiting)}"
        return web.Response(status=503, text=f"not ready: {why}\n")

    async def metrics_page(self, _: web.Request) -> web.Response:
        for kind, count in self.store.sizes().items():
            self.metrics.cache_objects.labels(kind).set(count)
            self.metrics.cache_synced.labels(kind).set(1 if self.store.synced[kind] else 0)
        response = web.Response(body=generate_latest(self.metrics.registry))
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response


def bounded(text: str) -> str:
    """A request's own string as logged: at most a Kubernetes name's length (253), so a
    hostile request cannot write megabytes into the log."""
    return admission.clip(text, LOGGED)


class BodyBudget:
    """Bytes of request bodies held at once, across connections. A request takes its
    Content-Length (the most a body may be, when chunked) before its body is read, or
    waits for room until its deadline; past `waiting` waiting requests, it is turned away
    at once (its connection closed, its buffers freed). With the connection cap, this
    bounds memory when clients send large bodies, or send them slowly."""

    def __init__(self, limit: int, waiting: int) -> None:
        self.limit = limit
        self.used = 0
        self.most_waiting = waiting
        self.waiting = 0
        self._room: list[asyncio.Future[None]] = []

    async def take(self, size: int, deadline: float) -> bool:
        """Room for `size` bytes, by `deadline` (monotonic); False when none came in time."""
        while self.used + size > self.limit:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.waiting >= self.most_waiting:
                return False
            room = asyncio.get_running_loop().create_future()
            self._room.append(room)
            self.waiting += 1
            try:
                await asyncio.wait_for(room, remaining)
            except TimeoutError:
                return False
            finally:
                self.waiting -= 1
                if room in self._room:
                    self._room.remove(room)
        self.used += size
        return True

    def give(self, size: int) -> None:
        self.used -= size
        rooms, self._room = self._room, []
        for room in rooms:
            if not room.done():
                room.set_result(None)


class _TooLarge(Exception):
    pass


async def read_body(request: web.Request) -> bytes:
    """The body, refused as soon as it passes MAX_BODY (chunked bodies have no length)."""
    chunks = []
    size = 0
    async for chunk in request.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > MAX_BODY:
            raise _TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


@web.middleware
async def never_5xx(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """The last line of defence: an unexpected error is a 400 and a log line, not a 500."""
    try:
        return await handler(request)
    except web.HTTPException:
        raise
    except Exception:
        log.exception("unexpected error on %s", request.path)
        return web.Response(status=400, text="trainlint: the request could not be handled\n")


class _HttpLog(logging.Logger):
    """What aiohttp says of requests it could not parse: one JSON line at most a warning,
    never a traceback (a client's bytes are no server error), counted as `bad_http`."""

    def __init__(self, counted: Callable[[], None]) -> None:
        super().__init__(f"{log.name}.http")
        self.parent = log
        self.counted = counted

    def handle(self, record: logging.LogRecord) -> None:
        error = record.exc_info[1] if record.exc_info else None
        what = f"{type(error).__name__}: {error}" if error else record.getMessage()
        record.msg = json.dumps({"event": "bad-http", "error": bounded(printable(what))})
        record.args, record.exc_info, record.exc_text, record.stack_info = None, None, None, None
        if record.levelno > logging.WARNING:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        if error is not None:
            self.counted()
        super().handle(record)


class _Factory:
    """aiohttp's server object, its handlers behind TLS connections of our own."""

    def __init__(self, server: web.Server, context: ssl.SSLContext,
                 connections: Connections) -> None:
        self._server = server
        self._context = context
        self._connections = connections

    def __call__(self) -> TLSConnection:
        return TLSConnection(asyncio.get_running_loop(), self._server(), self._context,
                             self._connections)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)


class _GuardedRunner(web.AppRunner):
    def __init__(self, app: web.Application, context: ssl.SSLContext,
                 connections: Connections, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._context = context
        self._connections = connections

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        proxy = _Factory(server, self._context, self._connections)
        return proxy  # type: ignore[return-value]  # it stands in for the server


class Server:
    """One webhook server: HTTPS `/validate`, plain-HTTP probes and metrics, background tasks."""

    def __init__(self, options: ServeOptions, source: ContextSource) -> None:
        self.options = options
        self.source = source
        self.metrics = Metrics()
        all_rules()  # import every rule now, not on the first request
        validations.prepare()  # and the CEL engine that the CRD rules run on
        self.store = Store()
        self.webhook = Webhook(options, self.store, self.metrics)
        if options.tls_cert is None or options.tls_key is None:
            raise tls.CertificateError("a certificate and its key are required")
        self.reloader = tls.Reloader(options.tls_cert, options.tls_key, options.dns_name,
                                     allow_tls12=options.allow_tls12)
        self.context = self.reloader.context
        self.metrics.certificate_expiry.set(self.reloader.expires)
        self.connections = Connections(
            options.max_connections, options.header_timeout,
            lambda reason: self.metrics.errors.labels(reason).inc(),
        )
        self._tasks: list[asyncio.Task[None]] = []
        self._runners: list[web.AppRunner] = []
        self.port = 0
        self.metrics_port = 0
        self.probe_port = 0

    async def start(self) -> None:
        webhook = self.webhook
        app = web.Application(client_max_size=MAX_BODY, middlewares=[never_5xx])
        app.router.add_post("/validate", webhook.validate)
        http_log = _HttpLog(self.metrics.errors.labels("bad_http").inc)
        main = _GuardedRunner(
            app, self.context, self.connections, access_log=None,
            keepalive_timeout=self.options.keepalive, shutdown_timeout=self.options.drain,
            read_bufsize=HTTP_READ_BUFFER, logger=http_log,
        )
        # TLS is the connections' own (TLSConnection): the site listens on plain TCP.
        self.port = await self._serve(main, self.options.port, backlog=1024)
        probes = web.Application(middlewares=[never_5xx])
        probes.router.add_get("/healthz", webhook.healthz)
        probes.router.add_get("/readyz", webhook.readyz)
        separate = self.options.probe_port not in (None, self.options.metrics_port)
        metrics = web.Application(middlewares=[never_5xx]) if separate else probes
        metrics.router.add_get("/metrics", webhook.metrics_page)
        self.metrics_port = await self._serve(
            web.AppRunner(metrics, access_log=None, shutdown_timeout=1.0, logger=http_log),
            self.options.metrics_port)
        self.probe_port = self.metrics_port
        if separate:
            assert self.options.probe_port is not None
            self.probe_port = await self._serve(
                web.AppRunner(probes, access_log=None, shutdown_timeout=1.0, logger=http_log),
                self.options.probe_port)
        for job in (self.source.run(self.store), webhook.monitor.run(), self._poll_certificate()):
            self._tasks.append(asyncio.create_task(job))

    async def _serve(self, runner: web.AppRunner, port: int, backlog: int = 128) -> int:
        """Serve `runner` on `port` (0: any free one); the port it got."""
        await runner.setup()
        self._runners.append(runner)
        site = web.TCPSite(runner, self.options.host, port, backlog=backlog,
                           reuse_address=True)
        await site.start()
        return site.port

    async def _poll_certificate(self) -> None:
        while True:
            await asyncio.sleep(self.options.cert_poll)
            try:
                if self.reloader.poll():
                    self.metrics.certificate_expiry.set(self.reloader.expires)
                    log.info(json.dumps({"event": "certificate-reloaded",
                                         "expires": self.reloader.expires}))
            except tls.CertificateError as error:
                log.warning(json.dumps({"event": "certificate-not-reloaded",
                                        "error": str(error)}))

    async def stop(self, lame_duck: float | None = None) -> None:
        """Lame duck (not ready, still serving), then stop accepting and drain."""
        self.webhook.shutting_down = True
        await asyncio.sleep(self.options.lame_duck if lame_duck is None else lame_duck)
        for runner in reversed(self._runners):
            await runner.cleanup()
        self.connections.close_all()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.webhook.pool.shutdown(wait=False, cancel_futures=True)


async def serve_forever(options: ServeOptions, source: ContextSource,
                        started: Callable[[Server], None] | None = None) -> None:
    """Run until SIGTERM or SIGINT, then shut down gracefully."""
    server = Server(options, source)
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    log.info(json.dumps({"event": "serving", "port": server.port,
                         "metrics_port": server.metrics_port,
                         "probe_port": server.probe_port, "mode": options.mode.value,
                         "kinds": list(KINDS)}))
    if started is not None:
        started(server)
    _quiet_collector()
    await stop.wait()
    log.info(json.dumps({"event": "shutting-down", "lame_duck_seconds": options.lame_duck}))
    await server.stop()


def _quiet_collector() -> None:
    """What exists once serving starts (rules, compiled schemas) lives as long as the
    server: it is frozen out of the cyclic collector, and young collections are made rarer.
    A request leaves almost no cycles (reference counting frees it); a collection walking
    the heap in the middle of requests is what made the tail (p99 at 1,000 requests/s:
    18 ms before, 3–6 ms after)."""
    gc.freeze()
    gc.set_threshold(20_000, 50, 1_000)


def client_context(ca: Path) -> ssl.SSLContext:
    """What the API server does: verify the chain and the service name."""
    context = ssl.create_default_context(cafile=str(ca))
    context.set_alpn_protocols(["http/1.1"])
    return context
