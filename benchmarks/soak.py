"""Soak `trainlint serve` on loopback: idle and active connections held at once, and a
certificate rotation with the certificate written before its key; prints the failed
handshakes, the tail latency of the active clients and the server's peak RSS.

Active clients send a review on their kept-alive connection on a fixed schedule
(latency counts from the scheduled time), first alone (the baseline), then with the idle
clients: those connect, make the TLS handshake and send nothing; each one the server
closes (at its header deadline, or to make room) is opened again a second later, so that
as many are held all along. While both run, the serving certificate is replaced as a
Secret update can land it: the new certificate first, its key only some seconds later;
a prober makes a fresh handshake every 50 ms throughout and notes which certificate it
got. Every phase is bounded in time and in count; nothing leaves the loopback interface.

    python3 benchmarks/soak.py                     # 1,000 active, then + 1,000 idle: ~60 s
    python3 benchmarks/soak.py --idle 200 --active 200 --baseline-seconds 8 --seconds 30
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from webhook import FIXTURES, SERVICE, free_port, memory, review_body

from trainlint.webhook import tls

#: The server polls its certificate files every 5 s: the half-written pair stays on disk
#: for more than two polls.
HALF_WRITTEN = 12.0
PROBE_EVERY = 0.05
REOPEN_AFTER = 1.0
TIMEOUT = 3.0


@dataclass
class Tally:
    """What the clients saw."""

    #: Latencies of the reviews due before the idle clients came, and after.
    alone: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    idle_from: float = float("inf")
    sent: int = 0
    failed_requests: int = 0
    idle_opened: int = 0
    idle_refused: int = 0
    probes: int = 0
    #: Failed handshakes while the new certificate lay beside the old key, and after.
    failed_half_written: int = 0
    failed_other: int = 0
    served: dict[str, int] = field(default_factory=dict)
    half_written: bool = False
    #: When the key was written, and when a handshake first got the new certificate.
    key_written: float = 0.0
    new_served: float = 0.0

    @staticmethod
    def quantile(latencies: list[float], q: float) -> float:
        ordered = sorted(latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else 0.0


def raise_open_files(needed: int) -> None:
    """Sockets on both sides of loopback: the soft limit raised up to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise SystemExit(f"{needed} open files are needed, the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))


def start_server(folder: Path, cert: Path, key: Path, cpu: int | None
                 ) -> tuple[subprocess.Popen[bytes], int, int]:
    port, metrics = free_port(), free_port()
    command = [sys.executable, "-c", "from trainlint.cli import run; run()", "serve",
               "--tls-cert", str(cert), "--tls-key", str(key), "--host", "127.0.0.1",
               "--port", str(port), "--metrics-port", str(metrics), "--mode", "enforce",
               "--context-dir", str(FIXTURES / "context"), "--lame-duck", "0"]
    if cpu is not None:
        command = ["taskset", "--cpu-list", str(cpu), *command]
    log = (folder / "server.log").open("wb")
    server = subprocess.Popen(command, stderr=log)
    deadline = time.monotonic() + 20
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/readyz", timeout=1):
                return server, port, metrics
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise SystemExit("the server did not become ready") from None
            time.sleep(0.1)


def counters(metrics: int) -> dict[str, float]:
    """The server's error counters by reason (evictions, refusals, deadlines...)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5) as page:
        text = page.read().decode()
    found = {}
    for line in text.splitlines():
        if line.startswith("trainlint_webhook_errors_total{"):
            reason = line.split('reason="', 1)[1].split('"', 1)[0]
            found[reason] = float(line.rsplit(" ", 1)[1])
    return found


async def hold_idle(port: int, context: ssl.SSLContext, until: float, tally: Tally) -> None:
    """One idle client: connect, handshake, send nothing; once closed, again."""
    while time.monotonic() < until:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(
                "127.0.0.1", port, ssl=context, server_hostname=SERVICE), TIMEOUT)
        except (OSError, TimeoutError):
            tally.idle_refused += 1
            await asyncio.sleep(REOPEN_AFTER)
            continue
        tally.idle_opened += 1
        with contextlib.suppress(OSError, TimeoutError):  # closed by the server, or the end
            await asyncio.wait_for(reader.read(1), max(until - time.monotonic(), 0))
        writer.close()
        await asyncio.sleep(REOPEN_AFTER)


async def keep_active(port: int, context: ssl.SSLContext, request: bytes, start: float,
                      every: float, until: float, tally: Tally) -> None:
    """One active client: a review every `every` seconds on a kept-alive connection
    (opened again when the server closed it)."""
    connection: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    due = start
    while due < until:
        await asyncio.sleep(max(due - time.monotonic(), 0))
        tally.sent += 1
        try:
            if connection is None:
                connection = await asyncio.wait_for(asyncio.open_connection(
                    "127.0.0.1", port, ssl=context, server_hostname=SERVICE), TIMEOUT)
            reader, writer = connection
            writer.write(request)
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            body = await asyncio.wait_for(reader.readexactly(length), TIMEOUT)
            if not head.startswith(b"HTTP/1.1 200") or b'"uid"' not in body:
                raise ValueError(head[:40])
            (tally.alone if due < tally.idle_from else tally.latencies).append(
                time.monotonic() - due)
        except (OSError, TimeoutError, ValueError, IndexError, asyncio.IncompleteReadError):
            tally.failed_requests += 1
            if connection is not None:
                connection[1].close()
            connection = None
        due += every
    if connection is not None:
        connection[1].close()


async def probe(port: int, context: ssl.SSLContext, names: dict[bytes, str], until: float,
                tally: Tally) -> None:
    """A fresh handshake every PROBE_EVERY seconds: which certificate, or a failure."""
    while time.monotonic() < until:
        tally.probes += 1
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(
                "127.0.0.1", port, ssl=context, server_hostname=SERVICE), TIMEOUT)
            sslobj = writer.get_extra_info("ssl_object")
            der = sslobj.getpeercert(binary_form=True) if sslobj is not None else None
            served = names.get(der or b"", "unknown")
            tally.served[served] = tally.served.get(served, 0) + 1
            if served == "new" and not tally.new_served:
                tally.new_served = time.monotonic()
            writer.close()
        except (OSError, TimeoutError):
            if tally.half_written:
                tally.failed_half_written += 1
            else:
                tally.failed_other += 1
        await asyncio.sleep(PROBE_EVERY)


async def rotate(live: Path, second: tls.SelfSigned, at: float, tally: Tally) -> None:
    """The new certificate at `at`, its key HALF_WRITTEN seconds later."""
    await asyncio.sleep(max(at - time.monotonic(), 0))
    (live / "tls.crt").write_bytes(second.cert.read_bytes())
    tally.half_written = True
    await asyncio.sleep(HALF_WRITTEN)
    (live / "tls.key").write_bytes(second.key.read_bytes())
    tally.half_written = False
    tally.key_written = time.monotonic()


async def soak(port: int, pid: int, bundle: Path, live: Path, second: tls.SelfSigned,
               names: dict[bytes, str], arguments: argparse.Namespace) -> dict[str, object]:
    context = ssl.create_default_context(cafile=str(bundle))
    tally = Tally()
    body = review_body()
    request = (
        f"POST /validate?timeout={int(TIMEOUT)}s HTTP/1.1\r\nHost: {SERVICE}:443\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    start = time.monotonic() + 1
    idle_from = tally.idle_from = start + arguments.baseline_seconds
    end = idle_from + arguments.seconds
    every = arguments.active / arguments.rate
    active = [asyncio.create_task(keep_active(
        port, context, request, start + index / arguments.rate, every, end, tally))
        for index in range(arguments.active)]
    prober = asyncio.create_task(probe(port, context, names, end, tally))
    await asyncio.sleep(max(idle_from - time.monotonic(), 0))
    alone_rss, _ = memory(pid)
    idle = [asyncio.create_task(hold_idle(port, context, end, tally))
            for _ in range(arguments.idle)]
    await rotate(live, second, idle_from + arguments.seconds / 4, tally)
    await asyncio.gather(*active, prober, *idle)
    _, peak = memory(pid)
    return {
        "active_clients": arguments.active, "rate": arguments.rate, "sent": tally.sent,
        "answered": len(tally.alone) + len(tally.latencies),
        "failed_requests": tally.failed_requests,
        "p50_ms_alone": round(tally.quantile(tally.alone, 0.5), 2),
        "p99_ms_alone": round(tally.quantile(tally.alone, 0.99), 2),
        "rss_mib_alone": round(alone_rss, 1),
        "idle_clients": arguments.idle, "idle_connections_opened": tally.idle_opened,
        "idle_refused": tally.idle_refused,
        "p50_ms_with_idle": round(tally.quantile(tally.latencies, 0.5), 2),
        "p99_ms_with_idle": round(tally.quantile(tally.latencies, 0.99), 2),
        "max_ms_with_idle": round(max(tally.latencies, default=0) * 1000, 1),
        "handshakes_probed": tally.probes,
        "failed_handshakes_half_written": tally.failed_half_written,
        "failed_handshakes_otherwise": tally.failed_other,
        "certificates_served": tally.served,
        "new_certificate_served_s_after_its_key": (
            round(tally.new_served - tally.key_written, 1) if tally.new_served else None),
        "peak_rss_mib": round(peak, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=int, default=1000, help="idle clients")
    parser.add_argument("--active", type=int, default=1000, help="active clients")
    parser.add_argument("--rate", type=float, default=200.0,
                        help="reviews per second, all active clients together")
    parser.add_argument("--baseline-seconds", type=float, default=15.0,
                        help="seconds of the active clients alone")
    parser.add_argument("--seconds", type=float, default=40.0,
                        help="seconds with the idle clients too (the rotation falls in them)")
    arguments = parser.parse_args()
    if arguments.seconds < HALF_WRITTEN * 2:
        parser.error(f"--seconds must leave room for the rotation: {HALF_WRITTEN * 2} or more")
    raise_open_files(2 * (arguments.idle + arguments.active) + 512)
    cpus = sorted(os.sched_getaffinity(0))
    server_cpu = cpus[0] if len(cpus) > 1 else None
    if server_cpu is not None:
        os.sched_setaffinity(0, set(cpus[1:]))
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        names = tls.service_names("trainlint", "trainlint-system")
        first, second = tls.generate(root / "a", names), tls.generate(root / "b", names)
        live = root / "live"
        live.mkdir()
        shutil.copy(first.cert, live / "tls.crt")
        shutil.copy(first.key, live / "tls.key")
        bundle = root / "bundle.crt"
        bundle.write_bytes(first.ca.read_bytes() + second.ca.read_bytes())
        served = {ssl.PEM_cert_to_DER_cert(pair.cert.read_text()): label
                  for pair, label in ((first, "old"), (second, "new"))}
        server, port, metrics = start_server(root, live / "tls.crt", live / "tls.key",
                                             server_cpu)
        print(f"server on CPU {server_cpu}; {os.cpu_count()} CPUs, shared; "
              f"{arguments.idle} idle and {arguments.active} active clients", flush=True)
        try:
            row = asyncio.run(soak(port, server.pid, bundle, live, second, served, arguments))
            row["server_counters"] = counters(metrics)
            row["server_alive"] = server.poll() is None
            print(json.dumps(row, indent=1), flush=True)
        finally:
            server.terminate()
            server.wait(20)


if __name__ == "__main__":
    main()
