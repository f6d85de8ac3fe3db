"""The `trainlint` command (and `python -m trainlint`): the CLI, imported with the cycle
collector off.

Importing the CLI and click allocates enough to set the collector off 13 to 18 times, 2 %
of a pre-commit run, for a few dozen objects of garbage: what importing makes lives as
long as the process. It is frozen (never scanned again) before the collector is turned
back on for the commands that run long (`lsp`, `serve`); `check` turns it off for its
whole run.
"""

import gc
import re

#: What PyYAML's pure-Python reader, on import, compiles to find characters YAML may not
#: hold (`yaml.reader.Reader.NON_PRINTABLE`), and the same set written as the few ranges it
#: leaves out.
NON_PRINTABLE = "[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]"
NON_PRINTABLE_RANGES = "[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uD800-\uDFFF\uFFFE\uFFFF]"


def seed_yaml_pattern() -> None:
    """Put the pattern PyYAML compiles on import into `re`'s cache, compiled from its
    ranges: the import then finds it compiled.

    Python compiles PyYAML's negated class by visiting every code point it spans, 58
    million instructions (a tenth of `trainlint check one.yaml`) for a reader trainlint
    never runs (libyaml reads); the ranges compile in 4.5 million, and match the same
    characters (a test compares them over every code point). Where `re` keeps no such
    cache, nothing is seeded and PyYAML compiles its own."""
    cache = getattr(re, "_cache", None)
    if isinstance(cache, dict):
        cache[str, NON_PRINTABLE, 0] = re.compile(NON_PRINTABLE_RANGES)


def main() -> None:
    gc.disable()
    seed_yaml_pattern()
    from trainlint.cli import run

    gc.freeze()
    gc.enable()
    run()


if __name__ == "__main__":
    main()
