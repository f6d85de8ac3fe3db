"""How soon `trainlint lsp` publishes diagnostics after a change to a 500-line file.

    python3 benchmarks/lsp.py [--changes 40] [--pause 0.15]

A real server process and pygls's client over stdio, as an editor runs them. The file is
copies of `examples/finetune-broken` (runtime, PVC, TrainJob), each in a namespace of its
own, so every rule does its whole work; every change edits one TrainJob's `numNodes`, and
changes come `--pause` seconds apart, as keystrokes do. A change's latency runs from
sending `didChange` to receiving the `publishDiagnostics` of that version: the check and
the round trip through both processes (a change after a pause is checked at once; the
debounce, 20 ms, holds back only changes that follow each other closer than that). A
burst of changes 2 ms apart is measured too, from its last change, and the check alone
in-process. Target: under 50 ms after a change.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "finetune-broken"
LINES = 500
TARGET = 0.050
_BESIDE = Path(sys.executable).with_name("trainlint")
TRAINLINT = str(_BESIDE) if _BESIDE.exists() else shutil.which("trainlint") or "trainlint"


def manifest_file() -> str:
    """At least `LINES` lines: copies of the example, a namespace each."""
    parts: list[str] = []
    copy = 0
    while sum(part.count("\n") for part in parts) < LINES:
        for name in ("runtime", "storage", "trainjob"):
            text = (EXAMPLE / f"{name}.yaml").read_text()
            parts.append(text.replace("llm-sft-broken", f"team-{copy}"))
        copy += 1
    return "---\n".join(parts)


async def latencies(
    folder: Path, text: str, rounds: int, pause: float, burst: int
) -> tuple[list[float], int]:
    """Seconds from the last change of each round (`burst` changes 2 ms apart) to the
    diagnostics of its version, and how many times diagnostics were published for the
    changes."""
    client = LanguageClient("benchmark", "1")
    arrived: dict[int, float] = {}
    event = asyncio.Event()

    def published(_: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        if params.version is not None:
            arrived[params.version] = time.perf_counter()
            event.set()

    on: Callable[[Callable[..., None]], object] = client.feature(
        types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
    )
    on(published)
    await client.start_io(TRAINLINT, "lsp", cwd=str(folder))
    root = str(from_fs_path(str(folder)))
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=root,
        workspace_folders=[types.WorkspaceFolder(root, "benchmark")],
    ))
    client.initialized(types.InitializedParams())
    uri = str(from_fs_path(str(folder / "manifests.yaml")))
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        types.TextDocumentItem(uri, "yaml", 1, text)
    ))
    await _arrival(event, arrived, 1)
    found = []
    version = 1
    for _ in range(rounds):
        for change in range(burst):
            if change:
                await asyncio.sleep(0.002)
            version += 1
            sent = time.perf_counter()
            client.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                [types.TextDocumentContentChangeWholeDocument(edited(text, version))],
            ))
        await _arrival(event, arrived, version)
        found.append(arrived[version] - sent)
        await asyncio.sleep(pause)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()  # type: ignore[no-untyped-call]  # unannotated in pygls
    return found, len(arrived) - 1


def edited(text: str, version: int) -> str:
    """The file with one TrainJob's `numNodes` changed, differently from the version
    before."""
    return text.replace("numNodes: 2", f"numNodes: {2 + version % 7}", 1)


async def _arrival(event: asyncio.Event, arrived: dict[int, float], version: int) -> None:
    async with asyncio.timeout(30):
        while version not in arrived:
            event.clear()
            await event.wait()


def check_alone(folder: Path, text: str, rounds: int) -> list[float]:
    """Seconds the worker spends checking the file after a change, in this process."""
    from trainlint.lsp.workspace import LspOptions, Workspace

    workspace = Workspace(LspOptions(), print)
    workspace.configure(LspOptions(), [folder])
    name = str(folder / "manifests.yaml")
    found = []
    for version in range(rounds + 1):
        started = time.perf_counter()
        workspace.open(name, edited(text, version), version)
        workspace.check(name)
        found.append(time.perf_counter() - started)
    return found[1:]  # the first imports the rules


def describe(label: str, seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return (f"{label:<44} median {statistics.median(seconds) * 1000:5.1f} ms   "
            f"p90 {p90 * 1000:5.1f} ms   max {ordered[-1] * 1000:5.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=40)
    parser.add_argument("--pause", type=float, default=0.15, help="seconds between changes")
    arguments = parser.parse_args()
    text = manifest_file()
    with tempfile.TemporaryDirectory(prefix="trainlint-lsp-") as folder:
        root = Path(folder)
        print(f"{text.count(chr(10))}-line file, {text.count('kind:')} objects, "
              f"{arguments.changes} changes {arguments.pause:g} s apart")
        single, _ = asyncio.run(latencies(root, text, arguments.changes, arguments.pause, 1))
        print(describe("change → its diagnostics", single))
        bursts = max(arguments.changes // 4, 1)
        burst, published = asyncio.run(latencies(root, text, bursts, arguments.pause, 4))
        print(describe("burst of 4 changes → the last one's", burst)
              + f"   ({published} publishes for {4 * bursts} changes)")
        print(describe("the check alone, in-process", check_alone(root, text, arguments.changes)))
        median = statistics.median(single)
        verdict = "met" if median < TARGET else "NOT met"
        print(f"target: diagnostics under {TARGET * 1000:.0f} ms after a change: {verdict} "
              f"(median {median * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
