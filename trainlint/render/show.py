"""A render as text: YAML with the origin of every value as a comment, or JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from trainlint.document import KeyPath, dotted
from trainlint.render import Render
from trainlint.render.tree import Origin


def heading(result: Render) -> str:
    """What a rendered document is: the TrainJob, its runtime, the release."""
    release = f"Trainer v{result.version[0]}.{result.version[1]}"
    runtime = result.runtime.describe() if result.runtime is not None else "an unknown runtime"
    if result.job is None:
        return f"the JobSet every TrainJob gets from {runtime} ({release})"
    return f"the JobSet of {result.job.describe()} on {runtime} ({release})"


def to_yaml(result: Render) -> str:
    """The rendered JobSet (and what the controller creates beside it) as YAML, each
    value followed by a comment that says where it came from."""
    parts = [f"# {heading(result)}\n" + "".join(_lines(result.jobset, (), 0, result.origin))]
    for kind, name, data, origin in result.extras:
        body = {"apiVersion": "v1", "kind": kind, "metadata": {"name": name}, "data": data}
        parts.append(f"# created beside it, {origin.describe()}\n"
                     + "".join(_lines(body, (), 0, lambda path, at=origin: at)))
    return "---\n".join(parts)


def to_json(result: Render) -> dict[str, Any]:
    """The rendered JobSet and, for every value in it, where it came from."""
    origins = {
        dotted(path): _origin_entry(result.origin(path)) for path, _ in leaves(result.jobset, ())
    }
    return {
        "description": heading(result),
        "trainerVersion": f"v{result.version[0]}.{result.version[1]}",
        "trainJob": _object(result.job),
        "runtime": _object(result.runtime),
        "jobSet": result.jobset,
        "origins": origins,
        "created": [
            {"kind": kind, "name": name, "data": data, "origin": _origin_entry(origin)}
            for kind, name, data, origin in result.extras
        ],
    }


def _object(manifest: Any) -> dict[str, Any] | None:
    if manifest is None:
        return None
    return {"kind": manifest.kind, "name": manifest.name, "namespace": manifest.namespace,
            "file": manifest.source.name}


def _origin_entry(origin: Origin) -> dict[str, Any]:
    entry: dict[str, Any] = {"description": origin.describe()}
    if origin.manifest is not None:
        span = origin.manifest.span(origin.path)
        entry.update(object=_object(origin.manifest), path=dotted(origin.path), line=span.line,
                     column=span.column)
    if origin.note is not None:
        entry["note"] = origin.note
    return entry


def leaves(value: Any, path: KeyPath = ()) -> Iterator[tuple[KeyPath, Any]]:
    """(path, value) of every scalar, empty mapping and empty list below `value`."""
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            yield from leaves(inner, (*path, key))
    elif isinstance(value, list) and value:
        for index, inner in enumerate(value):
            yield from leaves(inner, (*path, index))
    else:
        yield path, value


def _lines(value: Any, path: KeyPath, indent: int, origin_of: Any) -> Iterator[str]:
    """Block-style YAML lines of a mapping's entries, scalars commented with origins."""
    pad = " " * indent
    for key, inner in value.items():
        here = (*path, key)
        yield from _entry(f"{pad}{_scalar(key)}:", inner, here, indent, origin_of)


def _entry(head: str, value: Any, path: KeyPath, indent: int, origin_of: Any) -> Iterator[str]:
    if isinstance(value, dict) and value:
        yield head + "\n"
        yield from _lines(value, path, indent + 2, origin_of)
    elif isinstance(value, list) and value:
        yield head + "\n"
        yield from _items(value, path, indent + 2, origin_of)
    else:
        yield f"{head} {_scalar(value)}  # {origin_of(path).describe()}\n"


def _items(values: list[Any], path: KeyPath, indent: int, origin_of: Any) -> Iterator[str]:
    pad = " " * indent
    for index, item in enumerate(values):
        here = (*path, index)
        if isinstance(item, dict) and item:
            lines = list(_lines(item, here, indent + 2, origin_of))
            yield f"{pad}- {lines[0].lstrip()}"
            yield from lines[1:]
        elif isinstance(item, list) and item:
            yield f"{pad}-\n"
            yield from _items(item, here, indent + 2, origin_of)
        else:
            yield f"{pad}- {_scalar(item)}  # {origin_of(here).describe()}\n"


_WRITTEN = {None: "null", True: "true", False: "false"}


def _scalar(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return _WRITTEN[value]
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict | list):
        return "{}" if isinstance(value, dict) else "[]"
    text = str(value)
    if "\n" in text or "\r" in text:
        return json.dumps(text, ensure_ascii=False)  # one line, escaped
    import yaml

    dumped: str = yaml.safe_dump(text, width=float("inf"), allow_unicode=True)
    return dumped.removesuffix("\n...\n").removesuffix("\n")
