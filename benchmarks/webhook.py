"""Open-loop load on `trainlint serve` over loopback: p50/p99/p99.9 and RSS per rate.

Requests are sent on a fixed schedule whatever the server's speed (latency counts from the
scheduled time, so queueing shows), over HTTPS keep-alive connections opened as the API
server opens them: a new one whenever all are busy, up to a cap. Every run is bounded in
count and time. The server is pinned to one CPU, the client to another.

    python3 benchmarks/webhook.py                 # 200, 500, 1000 and 3000 requests/s
    python3 benchmarks/webhook.py --rates 500 --seconds 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "admission-review"
SERVICE = "trainlint.trainlint-system.svc"
#: The API server opens a connection whenever all are busy; what bounds them is its own
#: limit on mutating requests in flight (`--max-mutating-requests-inflight`, 200 by
#: default): 512 is two or three API servers at that limit. Fewer would queue requests in
#: this load generator, where the webhook cannot see them; more would model no real cluster.
MAX_CONNECTIONS = 512
TIMEOUT = 3.0


def review_body() -> bytes:
    """A ~4 KB TrainJob CREATE review that the full rule set checks against its runtime."""
    review = json.loads((FIXTURES / "trainjob-update-rwo-multi-node.json").read_text())
    job = review["request"]["object"]
    review["request"]["operation"] = "CREATE"
    review["request"]["oldObject"] = None
    job["spec"]["runtimeRef"] = {"name": "torch-distributed"}
    job["metadata"]["labels"].update({f"example.com/label-{i}": f"value-{i}" for i in range(12)})
    job["spec"]["trainer"].update({
        "numNodes": 2, "image": "ghcr.io/example/llm-sft:2025.06.1",
        "command": ["torchrun", "train.py"],
        "args": [f"--option-{i}=value-{i}" for i in range(20)],
        "env": [{"name": f"SETTING_{i}", "value": f"value-{i}"} for i in range(25)],
        "resourcesPerNode": {"limits": {"nvidia.com/gpu": 8, "memory": "512Gi"}},
    })
    body = json.dumps(review).encode()
    return body


@dataclass
class Result:
    rate: int
    sent: int
    latencies: list[float]
    late: int
    failed: int
    rss_mib: float
    peak_mib: float
    outcomes: dict[str, int]

    def quantile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else 0.0


class Pool:
    """Keep-alive connections, opened on demand as the API server does."""

    def __init__(self, port: int, context: ssl.SSLContext) -> None:
        self.port = port
        self.context = context
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self.opened = 0
        self.freed = asyncio.Condition()

    async def get(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        while True:
            if self.idle:
                return self.idle.pop()
            if self.opened < MAX_CONNECTIONS:
                self.opened += 1
                try:
                    return await asyncio.open_connection(
                        "127.0.0.1", self.port, ssl=self.context, server_hostname=SERVICE)
                except OSError:
                    self.opened -= 1
                    raise
            async with self.freed:
                await self.freed.wait()

    async def put(self, connection: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None
                  ) -> None:
        if connection is None:
            self.opened -= 1
        else:
            self.idle.append(connection)
        async with self.freed:
            self.freed.notify()


async def one(pool: Pool, request: bytes, due: float, result: Result) -> None:
    connection = None
    try:
        connection = await pool.get()
        reader, writer = connection
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        body = await reader.readexactly(length)
        took = time.monotonic() - due
        status = head.split(b" ", 2)[1].decode()
        answer = json.loads(body)["response"] if status == "200" else {}
        outcome = status if status != "200" else (
            "allowed" if answer["allowed"] else f"denied-{answer['status']['code']}")
        result.outcomes[outcome] = result.outcomes.get(outcome, 0) + 1
        result.latencies.append(took)
        if took > TIMEOUT:
            result.late += 1
        if head.lower().find(b"connection: close") >= 0:
            writer.close()
            connection = None
    except (OSError, asyncio.IncompleteReadError, ValueError, IndexError, KeyError):
        result.failed += 1
        connection = None
    finally:
        await pool.put(connection)


async def run_rate(port: int, ca: Path, rate: int, seconds: float, pid: int) -> Result:
    context = ssl.create_default_context(cafile=str(ca))
    pool = Pool(port, context)
    body = review_body()
    request = (
        f"POST /validate?timeout={int(TIMEOUT)}s HTTP/1.1\r\nHost: {SERVICE}:443\r\n"
        f"Content-Type: application/json\r\nAccept: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    count = int(rate * seconds)
    result = Result(rate, count, [], 0, 0, 0.0, 0.0, {})
    start = time.monotonic() + 0.2
    tasks = []
    for index in range(count):
        due = start + index / rate
        delay = due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(pool, request, due, result)))
    _, pending = await asyncio.wait(tasks, timeout=TIMEOUT + 5) if tasks else (set(), set())
    for task in pending:
        task.cancel()
    result.failed += len(pending)
    result.rss_mib, result.peak_mib = memory(pid)
    for _, writer in pool.idle:
        writer.close()
    return result


def memory(pid: int) -> tuple[float, float]:
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in {"VmRSS", "VmHWM"}:
            values[key] = int(value.split()[0]) / 1024
    return values["VmRSS"], values["VmHWM"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_server(folder: Path, cpu: int | None) -> tuple[subprocess.Popen[bytes], int, int, Path]:
    port, metrics = free_port(), free_port()
    ca = folder / "ca.crt"
    command = [sys.executable, "-c", "from trainlint.cli import run; run()", "serve",
               "--self-signed", "--ca-out", str(ca), "--host", "127.0.0.1",
               "--port", str(port), "--metrics-port", str(metrics), "--mode", "enforce",
               "--context-dir", str(FIXTURES / "context"), "--lame-duck", "0"]
    if cpu is not None:
        command = ["taskset", "--cpu-list", str(cpu), *command]
    server = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/readyz", timeout=1):
                return server, port, metrics, ca
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise SystemExit("the server did not become ready") from None
            time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", default="200,500,1000,3000")
    parser.add_argument("--seconds", type=float, default=10.0)
    arguments = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    server_cpu = cpus[0] if len(cpus) > 1 else None
    if server_cpu is not None:
        os.sched_setaffinity(0, set(cpus[1:]))
    print(f"request body {len(review_body())} bytes; server on CPU {server_cpu}; "
          f"{os.cpu_count()} CPUs, shared", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        server, port, _, ca = start_server(Path(folder), server_cpu)
        try:
            asyncio.run(run_rate(port, ca, 200, 1.0, server.pid))  # warm-up, not reported
            rows: list[dict[str, Any]] = []
            for rate in (int(r) for r in arguments.rates.split(",")):
                result = asyncio.run(run_rate(port, ca, rate, arguments.seconds, server.pid))
                row = {
                    "rate": rate, "sent": result.sent, "p50_ms": round(result.quantile(0.5), 2),
                    "p99_ms": round(result.quantile(0.99), 2),
                    "p99.9_ms": round(result.quantile(0.999), 2),
                    "max_ms": round(max(result.latencies, default=0) * 1000, 1),
                    "late": result.late, "failed": result.failed,
                    "rss_mib": round(result.rss_mib, 1), "peak_rss_mib": round(result.peak_mib, 1),
                    "outcomes": result.outcomes,
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
                time.sleep(1)
            alive = server.poll() is None
            print(f"server alive after the runs: {alive}")
        finally:
            server.terminate()
            server.wait(20)


if __name__ == "__main__":
    main()
