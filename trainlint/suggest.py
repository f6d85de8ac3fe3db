"""\"Did you mean ...?\": the known name closest to a misspelt one, for every message that
refuses a name (rule selectors, configuration keys, options, formats)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(given: str, known: Iterable[str]) -> str | None:
    """The known name `given` most likely misspells, None when none is close: compared
    without case, with `0` read as `O` and `1` as `l` as typed (`TL3O1` is TL301)."""
    candidates = {_folded(name): name for name in known}
    found = difflib.get_close_matches(_folded(given), list(candidates), n=1, cutoff=0.75)
    return candidates[found[0]] if found else None


def did_you_mean(given: str, known: Iterable[str]) -> str:
    """` (did you mean `TL301`?)`, to end a message, or "" when nothing is close."""
    found = closest(given, known)
    return f" (did you mean `{found}`?)" if found else ""


def _folded(name: str) -> str:
    return name.upper().replace("O", "0").replace("L", "1").replace("I", "1")
