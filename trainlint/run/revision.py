"""The objects as they were at a git revision, for `trainlint check --base REV`.

Every YAML and JSON file that git lists at REV is read (one `git ls-tree`, one `git
cat-file --batch`) and loaded with the project's loader, so an object still pairs with its
previous state after its file was renamed (as git's rename detection finds, one `git diff`)
or split (`Revision.paired`); what kustomize and
Helm build from at REV (`trainlint.config.builders`, judged on REV's files) holds no
previous state. Nothing is written, and no work tree is touched.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trainlint.config.builders import Builders, is_kustomization
from trainlint.document import Loaded, Manifest, decode
from trainlint.engine.index import pair

#: What git lists that trainlint reads (as `trainlint check` finds files in folders).
EXTENSIONS = (".yaml", ".yml", ".json")
#: A blob larger than this is no manifest (a vendored data file): it is not read.
MAX_BLOB = 16 * 1024 * 1024


class RevisionError(Exception):
    """No git repository, no git, or no such revision: a usage error (exit 2)."""


@dataclass(frozen=True)
class Revision:
    """The files and objects of a repository at one revision."""

    name: str
    #: The repository's top folder.
    top: Path
    #: Text of each YAML/JSON file at the revision, by path from the top.
    texts: dict[str, str]
    #: The objects of each file at the revision, by path from the top.
    objects: dict[str, list[Manifest]]
    #: The path at the revision of each file git finds renamed since, by its path now.
    renamed: dict[str, str] = field(default_factory=dict)
    #: Each folder of a checked file, its links resolved as git's `top` has them.
    _folders: dict[str, str] = field(default_factory=dict, init=False, repr=False)

    def path(self, name: str) -> str:
        """A checked file's path from the top, as git lists it (`name` as given)."""
        folder, base = os.path.split(os.path.abspath(name))  # noqa: PTH100 - strings
        real = self._folders.get(folder)
        if real is None:
            real = self._folders[folder] = os.path.realpath(folder)
        path = os.path.relpath(os.path.join(real, base), self.top)  # noqa: PTH118
        return Path(path).as_posix()

    def paired(self, inputs: Sequence[Loaded]) -> dict[int, Manifest]:
        """The state at the revision of each object of `inputs` (by its id) that has one:
        the object of its name in the file of the same path, or in the file git finds it
        renamed from; else, moved there (a file split, or renamed past recognition), the
        one object of its name at the revision if the inputs have one only, and its file
        is checked or gone (a file still there but not checked may still hold it: then it
        is a copy). Any other object is new to the update rules, and reported: which
        object it was would be a guess."""
        paths = {item.source.name: self.path(item.source.name) for item in inputs}
        checked = set(paths.values())
        where = {id(before): path for path, objects in self.objects.items()
                 for before in objects}
        paired = {
            now: before for now, before in pair(
                (manifest for item in inputs for manifest in item.manifests),
                (before for objects in self.objects.values() for before in objects),
            ).items()
            if where[id(before)] in checked or not (self.top / where[id(before)]).exists()
        }
        for item in inputs:
            path = paths[item.source.name]
            was = self.objects.get(self.renamed.get(path, path), [])
            paired.update(pair(item.manifests, was))
        return paired

    def changed_file(self, name: str, text: str) -> bool:
        """Whether a checked file (`name` as given) differs from the file at the same path
        at the revision, or is new."""
        return self.texts.get(self.path(name)) != text


def changed(manifest: Manifest, before: Manifest | None) -> bool:
    """Whether the object is new (or its state at the revision is not known), or differs
    from its state at the revision (`before`, as `Revision.paired` finds it)."""
    return before is None or before.body != manifest.body


def _git(
    args: list[str], cwd: Path | str, data: bytes | None = None,
    environment: dict[str, str] | None = None,
) -> bytes:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, input=data, capture_output=True, check=False,
            env={**os.environ, **environment} if environment else None,
        )
    except OSError as error:
        raise RevisionError(f"--base needs git: {error.strerror}") from None
    if done.returncode != 0:
        raise RevisionError(done.stderr.decode(errors="replace").strip() or "git failed")
    return done.stdout


def repository(name: str, paths: Sequence[str]) -> Path:
    """The top folder of the one repository that holds the checked `paths` (each path's
    own, not the current folder's: a submodule is a repository of its own). Paths in two
    repositories are a usage error: one revision names one repository's history."""
    folders: dict[str, str] = {}  # one git per folder: a hook names many files
    for path in paths:
        folder = path if os.path.isdir(path) else os.path.dirname(path)  # noqa: PTH112, PTH120
        folders.setdefault(folder or ".", path)
    tops: dict[Path, str] = {}
    for folder, path in folders.items():
        try:
            top = Path(_git(["rev-parse", "--show-toplevel"], folder).decode().strip())
        except RevisionError:
            shown = os.path.abspath(folder)  # noqa: PTH100 - a string
            raise RevisionError(f"--base {name}: {shown} is not in a git repository") from None
        tops.setdefault(top, path)
    if len(tops) > 1:
        (first, one), (second, other) = list(tops.items())[:2]
        raise RevisionError(f"--base {name}: the paths are in two git repositories, {first} "
                            f"({one}) and {second} ({other}): check each on its own")
    return next(iter(tops))


def read(name: str, paths: Sequence[str]) -> Revision:
    """The YAML and JSON files at revision `name` of the repository of the checked
    `paths` (files and folders: `repository`)."""
    top = repository(name, paths)
    try:
        commit = _git(["rev-parse", "--verify", "--quiet", "--end-of-options",
                       f"{name}^{{commit}}"], top).decode().strip()
    except RevisionError:
        raise RevisionError(
            f"--base {name}: no such revision in {top} (a remote branch needs `git fetch`)"
        ) from None
    every, listed = _blobs(_git(["ls-tree", "-r", "-z", "--full-tree", "-l", commit], top))
    request = "".join(f"{blob}\n" for blob, _ in listed).encode()
    contents = _batch(_git(["cat-file", "--batch"], top, request)) if listed else []
    data = {str(top / path): content for (_, path), content in zip(listed, contents, strict=True)}
    builders = _builders(every, data, top)
    texts: dict[str, str] = {}
    objects: dict[str, list[Manifest]] = {}
    for _, path in listed:
        where, shown = str(top / path), f"{name}:{path}"
        if builders.built(where) is not None:  # its text only: nothing in it is an object
            texts[path] = decode(data[where], shown)[0]
            continue
        loaded = _load(data[where], shown)
        texts[path] = loaded.source.text
        objects[path] = loaded.manifests
    return Revision(name, top, texts, objects, _renames(commit, top))


def _renames(commit: str, top: Path) -> dict[str, str]:
    """The manifests git finds renamed between `commit` and the work tree (its rename
    detection: a file moved with its text mostly kept), new path to old. The index is
    only read (`GIT_OPTIONAL_LOCKS=0`: a hook may run while another git command works)."""
    listing = _git(
        ["-c", "core.quotePath=false", "diff", "--no-ext-diff", "--name-status", "-z", "-M",
         "--diff-filter=R", commit, "--", *(f":(icase)*{suffix}" for suffix in EXTENSIONS)],
        top, environment={"GIT_OPTIONAL_LOCKS": "0"},
    )
    fields = listing.split(b"\0")
    return {
        fields[at + 2].decode(errors="surrogateescape"):
            fields[at + 1].decode(errors="surrogateescape")
        for at in range(0, len(fields) - 2, 3) if fields[at].startswith(b"R")
    }


def _builders(every: set[str], data: dict[str, bytes], top: Path) -> Builders:
    """What kustomize and Helm build from at the revision (not the work tree): a patch
    or a chart's template would otherwise be an object's previous state."""
    paths = {str(top / path) for path in every}

    def read(path: str) -> bytes:
        if path not in data:
            raise OSError(f"{path} is not read at the revision")
        return data[path]

    builders = Builders(paths.__contains__, read)
    builders.read_among(data)
    return builders


def _blobs(listing: bytes) -> tuple[set[str], list[tuple[str, str]]]:
    """The path of every file `git ls-tree -r -z -l` lists, and (blob id, path) of the
    manifests among them and of the kustomizations (`Kustomization` has no extension)."""
    every: set[str] = set()
    found = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        info, _, raw_path = entry.partition(b"\t")
        _, kind, blob, size = info.split()
        path = raw_path.decode(errors="surrogateescape")
        every.add(path)
        if (kind == b"blob" and (path.lower().endswith(EXTENSIONS) or is_kustomization(path))
                and size.isdigit() and int(size) <= MAX_BLOB):
            found.append((blob.decode(), path))
    return every, found


def _batch(output: bytes) -> list[bytes]:
    """The contents `git cat-file --batch` printed, in order."""
    contents, position = [], 0
    while position < len(output):
        header_end = output.index(b"\n", position)
        size = int(output[position:header_end].split()[2])
        start = header_end + 1
        contents.append(output[start : start + size])
        position = start + size + 1  # the newline after each content
    return contents


def _load(data: bytes, name: str) -> Loaded:
    from trainlint.loader import load

    text, problems = decode(data, name)
    return load(text, name, problems)
