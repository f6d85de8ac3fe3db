"""The `trainlint` command (and `python -m trainlint`): the CLI, imported with the cycle
collector off.

Importing the CLI and click allocates enough to set the collector off 13 to 18 times, 2 %
of a pre-commit run, for a few dozen objects of garbage: what importing makes lives as
long as the process. It is frozen (never scanned again) before the collector is turned
back on for the commands that run long (`lsp`, `serve`); `check` turns it off for its
whole run.
"""

import gc


def main() -> None:
    gc.disable()
    from trainlint.cli import run

    gc.freeze()
    gc.enable()
    run()


if __name__ == "__main__":
    main()
