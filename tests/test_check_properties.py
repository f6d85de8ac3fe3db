"""Every path of `check` finds what `lint` finds with every file read first, in one process.

`trainlint.run.check` reads files in batches (a long file in slices), checks each one with
the objects its process knows so far, and judges afterwards what each looked up against
the whole run's index; the cache serves files whose look-ups still hold. Generated
repositories of runtimes, TrainJobs and claims that name each other (or not), with
suppressions, several documents to a file, a document that stops libyaml, files read as
context or given as the cluster's objects, and files named so that a TrainJob's comes
before or after its runtime's at random, are checked in every mode (one process or two,
batches of one file, tiny slices, cold, warm and edited caches): the findings must be
`lint`'s, to the span and the message, and so must what the command says besides them
(objects, fragments, runtimes found nowhere)"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_cache import CHECKPOINTED
from trainlint import loader
from trainlint.config.settings import Settings
from trainlint.document import Fragment, Loaded, Manifest, Source
from trainlint.engine import index
from trainlint.engine.run import Run, lint
from trainlint.files import read_bytes
from trainlint.finding import Finding
from trainlint.loader import load_bytes, unreadable
from trainlint.run import check as checking
from trainlint.run import parallel
from trainlint.run.cache import Cache

# Few names, some more likely than others, so that objects often find each other
# ("": no namespace written, which is `default`).
NAMESPACES = ("ml", "ml", "ml", "research", "default", "")
#: The runtimes TrainJobs name: one of the run's (the first, the likeliest), one the release
#: installs (`torch-distributed`), one found nowhere.
RUNTIMES = ("torch-ckpt", "torch-ckpt", "torch-ckpt", "torch-plain", "torch-distributed",
            "missing")
CLAIMS = ("ckpt", "ckpt", "data")
DIRECTORIES = ("/mnt/ckpt/a", "/mnt/ckpt/a", "/mnt/ckpt/a", "/mnt/ckpt/b", "/mnt/ckpt/shared")
#: What suppressions name: the rules across objects, others a runtime or TrainJob may
#: take, and a code of no rule (TL091).
CODES = ("TL307", "TL308", "TL201", "TL309", "TL301", "TL101", "TL102", "TL090", "TL999")
SUPPRESSIONS = st.one_of(
    st.none(), st.none(), st.none(),
    st.tuples(st.sampled_from(("line", "file", "annotation")), st.sampled_from(CODES),
              st.integers(min_value=0, max_value=30)),
)
#: A document libyaml stops at.
BROKEN = "apiVersion: v1\nkind: [\n"


def suppressed(text: str, suppression: tuple[str, str, int] | None) -> str:
    """`text` (one object) with a suppression of one code: a comment at the end of one of
    its lines, a file-wide comment, or the object's annotation."""
    if suppression is None:
        return text
    how, code, line = suppression
    if how == "file":
        return f"# trainlint: disable-file={code}\n{text}"
    lines = text.splitlines()
    if how == "line":
        line %= len(lines)
        lines[line] += f"  # trainlint: disable={code}"
        return "\n".join(lines) + "\n"
    at = next(number for number, found in enumerate(lines) if found.startswith("metadata:"))
    name = lines[at].removeprefix("metadata: {").removesuffix("}")
    fields = [field.split(": ") for field in name.split(", ")]
    lines[at : at + 1] = ["metadata:", *(f"  {key}: {value}" for key, value in fields),
                          f'  annotations: {{trainlint.dev/ignore: "{code}"}}']
    return "\n".join(lines) + "\n"


def runtime(kind: str, name: str, namespace: str, claim: str, labelled: bool,
            fixed: str | None) -> str:
    """test_cache's checkpointing runtime on two nodes, of either kind, its trainer job
    labelled or not, its pods on `claim`, checkpointing to a `fixed` directory or not."""
    text = CHECKPOINTED.replace("claimName: ckpt", f"claimName: {claim}")
    if not labelled:
        text = text.replace("{trainer.kubeflow.org/trainjob-ancestor-step: trainer}", "{app: x}")
    if fixed is not None:
        text = text.replace("[{name: node, image: busybox, ",
                            f"[{{name: node, image: busybox, env: [{{name: CKPT_DIR, "
                            f"value: {fixed}}}], ")
    where = f", namespace: {namespace}" if kind == "TrainingRuntime" and namespace else ""
    return text.replace("kind: TrainingRuntime", f"kind: {kind}").replace(
        "metadata: {name: torch-ckpt, namespace: ml}", f"metadata: {{name: {name}{where}}}"
    ).replace("mlPolicy: {torch: {}}", "mlPolicy: {numNodes: 2, torch: {}}")


def metadata(name: str, namespace: str) -> str:
    return f"metadata: {{name: {name}, namespace: {namespace}}}" if namespace else (
        f"metadata: {{name: {name}}}")


def trainjob(name: str, namespace: str, kind: str, runtime_name: str, directory: str) -> str:
    return f"""\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
{metadata(name, namespace)}
spec:
  runtimeRef: {{kind: {kind}, name: {runtime_name}}}
  trainer:
    numNodes: 2
    env: [{{name: CKPT_DIR, value: {directory}}}]
"""


def claim(name: str, namespace: str, mode: str) -> str:
    return f"""\
apiVersion: v1
kind: PersistentVolumeClaim
{metadata(name, namespace)}
spec:
  accessModes: [{mode}]
  resources: {{requests: {{storage: 10Gi}}}}
"""


RUNTIME_KINDS = st.sampled_from(("TrainingRuntime", "TrainingRuntime", "ClusterTrainingRuntime"))
RUNTIME = st.builds(
    runtime, RUNTIME_KINDS, st.sampled_from(("torch-ckpt", "torch-ckpt", "torch-plain")),
    st.sampled_from(NAMESPACES),
    st.sampled_from(CLAIMS), st.sampled_from((True, True, True, False)),
    st.sampled_from((None, None, "/mnt/ckpt/shared")))
TRAINJOB = st.builds(
    trainjob, st.sampled_from(("a", "b", "c")), st.sampled_from(NAMESPACES), RUNTIME_KINDS,
    st.sampled_from(RUNTIMES), st.sampled_from(DIRECTORIES))
CLAIM = st.builds(claim, st.sampled_from(CLAIMS), st.sampled_from(NAMESPACES),
                  st.sampled_from(("ReadWriteOnce", "ReadWriteMany")))
#: An object, TrainJobs the likeliest, with a suppression or not.
#: Objects of few fields: a claim of no name, a TrainJob that names no runtime, a
#: ConfigMap with characters of more than one byte before a key.
ODD = st.sampled_from((
    "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {namespace: ml}\nspec: {}\n",
    "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: a, "
    "namespace: ml}\nspec: {trainer: {numNodes: 2}}\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\u00e9}\ndata: {\u2615: x, bogus: 1}\n",
))
OBJECTS = st.builds(suppressed, st.one_of(RUNTIME, TRAINJOB, TRAINJOB, CLAIM, ODD),
                    SUPPRESSIONS)


def listed(objects: list[str]) -> str:
    """Objects as the items of a `kind: List` (their key paths start with `items`)."""
    items = ["- " + "\n  ".join(text.splitlines()) + "\n" for text in objects]
    return "apiVersion: v1\nkind: List\nitems:\n" + "".join(items)


#: Two TrainJobs writing one directory on their runtime's claim (TL307), each a file of its
#: own, with a suppression or not, their runtime among the files or not.
SHARING = st.builds(
    lambda kind, directory, first, second, known: [
        suppressed(trainjob("x", "ml", kind, "torch-ckpt", directory), first),
        suppressed(trainjob("y", "ml", kind, "torch-ckpt", directory), second),
        *([runtime(kind, "torch-ckpt", "ml", "ckpt", True, None)] if known else [])],
    RUNTIME_KINDS, st.sampled_from(DIRECTORIES), SUPPRESSIONS, SUPPRESSIONS,
    st.sampled_from((True, True, False)))
#: A document that looks like part of an object: not checked, but told of.
FRAGMENT = "metadata: {name: part}\nspec: {}\n"
#: A claim on one line, which a document's `---` may begin (with a field of no schema
#: some of the time: TL006).
FLOW = st.builds(
    lambda name, namespace, bogus: (
        f"{{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {{name: {name}, "
        f"namespace: {namespace}}}, spec: {{accessModes: [ReadWriteOnce], "
        f"resources: {{requests: {{storage: 1Gi}}}}{', bogus: 1' if bogus else ''}}}}}\n"),
    st.sampled_from(CLAIMS), st.sampled_from(NAMESPACES), st.booleans())
#: What may come between two documents: comments (a suppression that applies to the line
#: of the next `---`), a document end marker, a directive (after which no slice starts).
BETWEEN = st.sampled_from(("", "", "", "...\n", "# note\n", "# trainlint: disable=TL006\n",
                           "# trainlint: disable=TL006\n\n# note\n", "...\n%YAML 1.1\n"))


def joined(documents: list[tuple[str, str]]) -> str:
    """Documents one after the other, each after what comes `between` it and the one
    before: a document on one line begins on its `---` line."""
    text = ""
    for number, (document, between) in enumerate(documents):
        if number:
            text += between + ("--- " if document.startswith("{") else "---\n")
        text += document
    return text


#: A file: one object or a few (documents, or the items of a List), now and then one
#: that stops libyaml or a fragment, or nothing; its lines ended by LF or CRLF, its
#: bytes after a BOM or not.
FILES = st.builds(
    lambda text, ending, bom: ("\ufeff" if bom else "") + text.replace("\n", ending),
    st.one_of(
        OBJECTS, OBJECTS, OBJECTS,
        st.lists(st.tuples(st.one_of(OBJECTS, OBJECTS, OBJECTS, FLOW), BETWEEN),
                 min_size=2, max_size=4).map(joined),
        st.lists(OBJECTS, min_size=1, max_size=3).map(listed),
        st.lists(st.tuples(st.one_of(OBJECTS, st.just(BROKEN), st.just(FRAGMENT), FLOW),
                           BETWEEN), min_size=2, max_size=3).map(joined),
        st.just(""),
    ),
    st.sampled_from(("\n", "\n", "\n", "\r\n")),
    st.sampled_from((False, False, False, True)),
)

#: The settings a file may have (the first most often): every rule; some rules off and
#: annotations not honoured; the first release, without its bundled runtimes.
SETTINGS = (
    Settings(),
    Settings(ignore=("TL201", "TL090", "TL302"), annotation_exemptions=False),
    Settings(trainer_version=(2, 0), bundled_runtimes=False),
)


#: What a file is to a run: one of its inputs, a file of its context (`--context`), the
#: objects of the cluster (`--from-cluster`: never cached, `cli.check`), or an input
#: listed but gone before it is read.
INPUT, CONTEXT, CLUSTER, GONE = range(4)


class Repository(NamedTuple):
    """Generated files: their texts, the name each takes (its number: names sort in
    another order than the texts were drawn), each one's settings (an index of
    `SETTINGS`), and what each is to the run."""

    texts: list[str]
    order: list[int]
    settings: list[int]
    roles: list[int]

    def written(self, folder: Path) -> Files:
        folder.mkdir()
        files = Files(folder)
        for text, number, chosen, role in zip(
                self.texts, self.order, self.settings, self.roles, strict=True):
            files.write(f"{number:02d}.yaml", text, chosen, role)
            if role == GONE:
                (folder / f"{number:02d}.yaml").unlink()
        return files


class Files:
    """A repository on disk: what each file is to the run, and its settings."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.settings: dict[str, int] = {}
        self.roles: dict[str, int] = {}

    def write(self, name: str, text: str, settings: int = 0, role: int = INPUT) -> None:
        path = self.folder / name
        if path.exists():  # a later time, as an edit has (see test_cache_properties)
            before = path.stat()
            path.write_text(text)
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
        else:
            path.write_text(text)
        self.settings[str(path)] = settings
        self.roles[str(path)] = INPUT if role == GONE else role

    def remove(self, name: str, *, listed: bool = False) -> None:
        """A file deleted, and no longer listed unless `listed`."""
        (self.folder / name).unlink(missing_ok=True)
        if not listed:
            del self.settings[str(self.folder / name)], self.roles[str(self.folder / name)]

    def named(self, *roles: int) -> list[str]:
        return sorted(name for name, role in self.roles.items() if role in roles)

    @property
    def names(self) -> list[str]:
        return self.named(INPUT)

    @property
    def context_names(self) -> list[str]:
        return self.named(CONTEXT)

    def cluster(self) -> list[Manifest]:
        return [manifest for name in self.named(CLUSTER) for manifest in read(name).manifests]

    def settings_of(self, name: str) -> Settings:
        return SETTINGS[self.settings[name]]


def read(name: str) -> Loaded:
    """A file read as the command reads it, whole."""
    try:
        data = read_bytes(name)
    except OSError as error:
        return unreadable(name, error)
    return load_bytes(data, name)


@st.composite
def repositories(draw: st.DrawFn, *, cluster: bool = True) -> Repository:
    texts = draw(st.lists(FILES, min_size=1, max_size=8))
    if draw(st.booleans()):
        texts += draw(SHARING)
    count = len(texts)
    order = draw(st.permutations(range(count)))
    chosen = draw(st.lists(st.sampled_from((0, 0, 0, 1, 2)), min_size=count, max_size=count))
    roles = [INPUT] * count
    if count > 1:
        others = (CONTEXT, CLUSTER, GONE) if cluster else (CONTEXT, GONE)
        roles = draw(st.lists(st.sampled_from((INPUT,) * 6 + others), min_size=count,
                              max_size=count))
    return Repository(texts, list(order), chosen, roles)


#: What a finding is, for the comparison: what every report shows of it.
Seen = tuple[Any, ...]


def seen(findings: Sequence[Finding]) -> list[Seen]:
    return [(f.code, Path(f.file).name, tuple(f.span), f.message, f.path, f.object,
             f.severity, f.remediation, None if f.fix is None else (f.fix.title, f.fix.safe))
            for f in findings]


class Found(NamedTuple):
    """What a run finds, and what it says besides: how many objects, which fragments,
    which runtimes were found nowhere."""

    findings: list[Seen]
    objects: int
    fragments: list[tuple[str, Fragment]]
    unchecked: dict[str, int]


def reference(files: Files) -> Found:
    """What `lint` finds with every file read first, in one process (and what the
    command says of such a run: `cli._Summary.of`)."""
    inputs = [read(name) for name in files.names]
    context = [*(manifest for name in files.context_names for manifest in read(name).manifests),
               *files.cluster()]

    def settings_for(source: Source) -> Settings:
        return files.settings_of(source.name)

    findings = lint(inputs, settings_for=settings_for, context=context)
    run = Run(inputs, settings_for=settings_for, context=context)
    return Found(
        seen(findings), sum(len(item.manifests) for item in inputs),
        [(Path(item.source.name).name, fragment) for item in inputs for fragment in item.fragments],
        run.unchecked(inputs),
    )


def checked(files: Files, jobs: int = 1, cache: Path | None = None) -> Found:
    outcome = checking.check(files.names, files.settings_of, jobs,
                             None if cache is None else Cache(cache), files.context_names,
                             files.cluster())
    return Found(seen(outcome.findings), outcome.objects,
                 [(Path(name).name, fragment) for name, fragment in outcome.fragments],
                 outcome.unchecked)


@contextlib.contextmanager
def patched(module: object, **values: int) -> Iterator[None]:
    """Module constants set for a while (hypothesis runs many examples in one test:
    pytest's monkeypatch would undo them only at its end)."""
    before = {name: getattr(module, name) for name in values}
    for name, value in values.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            setattr(module, name, value)


class Mode(NamedTuple):
    """How `check` runs: on how many processes, in batches of one unit (peeking at
    `peek` bytes beyond: one unit at the least) and keeping one unit parsed after its
    batch, or as it would, and with files of more than 64 bytes cut into slices of about
    `slices` bytes, or not."""

    jobs: int = 1
    small: bool = False
    peek: int = 0
    slices: int | None = None

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            if self.small:  # and little kept: a look-up reads its object's file again
                stack.enter_context(patched(checking, BATCH_BYTES=1, MIN_BATCH_BYTES=1,
                                            PEEK_BYTES=self.peek, KEPT=1, KEPT_CHARACTERS=1))
                stack.enter_context(patched(index, RECENT=1))
            if self.jobs > 1:  # two processes, whatever few units, batches shared one by one
                stack.enter_context(patched(checking, MIN_INPUTS=1, SPREAD_BYTES=0))
                stack.enter_context(patched(parallel, MIN_INPUTS=1, MIN_CHUNK=1))
            if self.slices is not None:
                stack.enter_context(patched(loader, SLICED_BYTES=64, SLICE_BYTES=self.slices))
            yield


def modes(jobs: Sequence[int] = (1,)) -> st.SearchStrategy[Mode]:
    return st.builds(
        Mode, st.sampled_from(jobs), st.booleans(), st.sampled_from((0, 0, 300, 2048)),
        st.one_of(st.none(), st.integers(min_value=1, max_value=700)))


#: An edit between two runs: a file rewritten, removed, gone (still listed), added (an
#: input or context), renamed, given other settings, or read as context instead of
#: checked (or the other way round).
EDITS = st.tuples(
    st.sampled_from(("rewrite", "rewrite", "remove", "gone", "add", "rename", "settings",
                     "role")),
    st.integers(min_value=0), FILES, st.sampled_from((0, 0, 1, 2)),
    st.sampled_from((INPUT, INPUT, CONTEXT)))
Edit = tuple[str, int, str, int, int]


def edited(files: Files, edit: Edit) -> None:
    how, position, text, chosen, role = edit
    every = sorted(files.settings)
    path = every[position % len(every)]
    name, was, settings_ = Path(path).name, files.roles[path], files.settings[path]
    if how == "rewrite":
        files.write(name, text, settings_, was)
    elif how in ("remove", "gone", "rename", "role") and (
            len(files.names) == 1 and was == INPUT):
        return  # the last input stays
    elif how in ("remove", "gone"):
        files.remove(name, listed=how == "gone" and was == INPUT)
    elif how == "add":
        files.write(f"{position % 50:02d}-new.yaml", text, chosen, role)
    elif how == "rename" and Path(path).exists():  # the same bytes under another name
        moved = str(files.folder / f"{position % 50:02d}-moved.yaml")
        Path(path).rename(moved)
        del files.settings[path], files.roles[path]
        files.settings[moved], files.roles[moved] = settings_, was
    elif how == "settings" and was == INPUT:
        files.settings[path] = chosen
    elif how == "role" and was in (INPUT, CONTEXT):
        files.roles[path] = CONTEXT if was == INPUT else INPUT


HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]


@settings(max_examples=40, deadline=None, suppress_health_check=HEALTH)
@given(repository=repositories(), mode=modes())
def test_one_process_finds_what_lint_finds(repository: Repository, mode: Mode) -> None:
    """Files read in one batch, or one at a time peeking at a few more (in slices, some of
    the time): a look-up that missed an object read later is judged stale and checked
    again."""
    with tempfile.TemporaryDirectory() as temporary:
        files = repository.written(Path(temporary) / "repo")
        expected = reference(files)
        assert checked(files) == expected
        with mode.applied():
            assert checked(files) == expected


@settings(max_examples=40, deadline=None, suppress_health_check=HEALTH)
@given(repository=repositories(cluster=False), mode=modes(),
       edits=st.lists(EDITS, min_size=1, max_size=2))
def test_a_cache_cold_warm_and_edited_finds_what_lint_finds(
    repository: Repository, mode: Mode, edits: list[Edit]
) -> None:
    """A cold run fills the cache, a warm one is served from it, and after a file is
    rewritten, removed or added (or its settings change) the files whose look-ups no
    longer hold are checked again; the next run is the last one again."""
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        files = repository.written(root / "repo")
        with mode.applied():
            expected = reference(files)
            assert checked(files, cache=root / "cache") == expected
            assert checked(files, cache=root / "cache") == expected
            for edit in edits:
                edited(files, edit)
                expected = reference(files)
                assert checked(files, cache=root / "cache") == expected
            assert checked(files, cache=root / "cache") == expected


@settings(max_examples=15, deadline=None, suppress_health_check=HEALTH)
@given(repository=repositories(cluster=False), mode=modes((2,)), cached=st.booleans(),
       edit=EDITS)
def test_two_processes_find_what_lint_finds(
    repository: Repository, mode: Mode, cached: bool, edit: Edit
) -> None:
    """Batches shared out to two processes, each knowing only the files it read: what
    each missed is judged against the whole run (and with a cache, after an edit)."""
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        files = repository.written(root / "repo")
        cache = root / "cache" if cached else None
        with mode.applied():
            assert checked(files, 2, cache) == reference(files)
            if cached:
                edited(files, edit)
                assert checked(files, 2, cache) == reference(files)


@settings(max_examples=40, deadline=None, suppress_health_check=HEALTH)
@given(files=st.lists(FILES, min_size=1, max_size=10),
       size=st.integers(min_value=1, max_value=700), cached=st.booleans(),
       jobs=st.sampled_from((1, 1, 1, 2)), edit=EDITS)
def test_one_long_file_in_tiny_slices_finds_what_lint_finds(
    files: list[str], size: int, cached: bool, jobs: int, edit: Edit
) -> None:
    """Every document in one file, cut into slices of a document or a few, checked in
    batches of one slice (on two processes, some of the time): its findings are settled
    over the whole file, with the whole file's suppressions; with a cache, warm and then
    after a document is added at its end."""
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        repository = Files(root)
        repository.write("stream.yaml", "---\n".join(files))
        cache = root / "cache" if cached else None
        with Mode(jobs, small=True, slices=size).applied():
            assert checked(repository, jobs, cache) == reference(repository)
            if cached:
                assert checked(repository, jobs, cache) == reference(repository)
                repository.write("stream.yaml", "---\n".join([*files, edit[2]]))
                assert checked(repository, jobs, cache) == reference(repository)
