"""Reading inputs as a hostile repository may lay them out, and where the checked tree ends.

A checked folder may hold a named pipe (reading it waits for a writer forever), a link to
`/dev/zero` (reading it never ends) or a link to a secret outside the repository (a code
frame would print it in the CI log). So only regular files are read, each at most
`MAX_FILE_BYTES`, and what lies outside the folders named on the command line is neither
quoted nor written. What trainlint keeps for itself (its cache) is replaced atomically,
so that concurrent runs never read a file half written.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, BinaryIO

if TYPE_CHECKING:
    from pathlib import Path

#: The largest input read whole. A Kubernetes object is at most 1.5 MiB (etcd's limit),
#: and checking a text whole takes about fifteen times its size in memory: a larger file
#: is read in slices of whole documents (`trainlint.loader.slices`), or refused.
MAX_FILE_BYTES = 32 * 1024 * 1024
#: The largest input read in slices: never held whole, it is bounded by the time it takes
#: (about a minute on one core).
MAX_SLICED_BYTES = 256 * 1024 * 1024
#: What a file that is not a regular one is, for messages.
_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
}
#: Opening never waits (a FIFO swapped in after the `stat` would) and never makes a
#: terminal the controlling one.
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)


class NotRegular(OSError):
    """A file that is not read, for it is no regular file; `strerror` says what it is."""


class TooLarge(OSError):
    """A file over `MAX_FILE_BYTES` (or `limit`), not read (or not read further)."""

    def __init__(self, limit: int = MAX_FILE_BYTES) -> None:
        super().__init__(errno.EFBIG, f"larger than {limit // (1024 * 1024)} MiB")


def read_bytes(name: str | os.PathLike[str]) -> bytes:
    """A regular file's bytes, at most `MAX_FILE_BYTES` (NotRegular, TooLarge otherwise).

    The file is looked at before it is opened, so a FIFO or a device is never opened, and
    again once open, since its name may have been pointed elsewhere in between. The size
    read is bounded too: a file of `/proc` says it is empty, and one may grow while read.
    """
    _check_regular(os.stat(name))  # noqa: PTH116 - stat and open the one name, as given
    handle = os.open(name, _OPEN_FLAGS)
    try:
        status = os.fstat(handle)
        _check_regular(status)
        if status.st_size > MAX_FILE_BYTES:
            raise TooLarge
        # One read for most files: a short one means the end was reached.
        data = os.read(handle, status.st_size + 1)
        if len(data) <= status.st_size:
            return data
        chunks = [data]
        size = len(data)
        while chunk := os.read(handle, min(1 << 20, MAX_FILE_BYTES + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_FILE_BYTES:
                raise TooLarge
        return b"".join(chunks)
    finally:
        os.close(handle)


def blocks(name: str, size: int = 1 << 20) -> Iterator[bytes]:
    """A regular file's bytes, `size` at a time, at most `MAX_SLICED_BYTES` (NotRegular,
    TooLarge otherwise): what reading a file in slices scans first."""
    _check_regular(os.stat(name))  # noqa: PTH116 - as in `read_bytes`
    handle = os.open(name, _OPEN_FLAGS)
    try:
        _check_regular(os.fstat(handle))
        read = 0
        while block := os.read(handle, size):
            read += len(block)
            if read > MAX_SLICED_BYTES:
                raise TooLarge(MAX_SLICED_BYTES)
            yield block
    finally:
        os.close(handle)


def read_range(name: str, start: int, end: int) -> bytes:
    """The bytes of a regular file from `start` up to `end`: one slice of it."""
    _check_regular(os.stat(name))  # noqa: PTH116 - as in `read_bytes`
    handle = os.open(name, _OPEN_FLAGS)
    try:
        _check_regular(os.fstat(handle))
        return os.pread(handle, end - start, start)
    finally:
        os.close(handle)


def read_stream(stream: BinaryIO) -> bytes:
    """All of a stream (standard input), at most `MAX_FILE_BYTES` (TooLarge otherwise)."""
    data = stream.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise TooLarge
    return data


#: Written into trainlint's cache folder, as pytest, mypy and ruff do with theirs: git
#: ignores the folder (a pre-commit hook must not see its own cache as a change) and backup
#: tools skip it. They also tell a folder trainlint made from anyone else's.
CACHE_MARKERS = {
    ".gitignore": "# Created by trainlint: this folder is a cache.\n*\n",
    "CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by trainlint.\n",
}


def is_cache_folder(folder: Path) -> bool:
    """Whether trainlint made `folder` for its cache: its cache tag is there, as trainlint
    writes it (atomically: whole or not at all). Another tool's tag, even one of the
    signature line alone, is not trainlint's, whatever else the folder holds."""
    try:
        return read_bytes(folder / "CACHEDIR.TAG") == CACHE_MARKERS["CACHEDIR.TAG"].encode()
    except OSError:
        return False


def may_hold_cache(folder: Path) -> bool:
    """Whether trainlint may keep its cache in `folder`: one it made, or none yet (missing,
    or empty). Any other folder holds someone else's files, which trainlint would mark
    ignored by git, and remove where their names are those of its own stale files."""
    try:
        return is_cache_folder(folder) or next(folder.iterdir(), None) is None
    except FileNotFoundError:
        return True
    except OSError:  # a file, or a folder it may not read
        return False


def write_atomically(path: Path, text: str) -> None:
    """Replace the file atomically: a concurrent run reads the old one or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # A name no other run picks, as `tempfile.mkstemp` would (whose import, with that of
    # `uuid`, a pre-commit run would pay for).
    temporary = path.parent / f".{path.name}.{os.urandom(16).hex()}.tmp"
    handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)


def _check_regular(status: os.stat_result) -> None:
    if not stat.S_ISREG(status.st_mode):
        kind = _KINDS.get(stat.S_IFMT(status.st_mode), "a special file")
        raise NotRegular(None, f"it is {kind}, not a regular file")


class Tree:
    """The folders a run checks: those named on the command line, and the folder of each
    file named. A file lies inside when its real path (every symbolic link followed) does:
    a link out of the tree is checked, but its text is never quoted nor written."""

    def __init__(self, paths: Iterable[str]) -> None:
        folders = {
            path if os.path.isdir(path) else os.path.dirname(path) or "."  # noqa: PTH112, PTH120
            for path in paths  # (names stay strings here, as in the rest of a run)
        }
        self._roots = tuple(_real(folder) for folder in folders)
        self._held: dict[str, bool] = {}

    def holds(self, name: str) -> bool:
        if name not in self._held:
            real = _real(name)
            self._held[name] = any(real.startswith(root) for root in self._roots)
        return self._held[name]


def _real(name: str) -> str:
    """The real path, ending with a separator: `/repo/` does not hold `/repository/`."""
    return os.path.realpath(name).rstrip(os.sep) + os.sep
