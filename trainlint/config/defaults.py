"""Every default of the configuration, once: `Settings`, the configuration files and the
command line read them here (the command line at start-up: this imports next to nothing)."""

from __future__ import annotations

from typing import Any

from trainlint.release import NEWEST

#: The Trainer release assumed when none is configured: the newest trainlint knows.
DEFAULT_TRAINER_VERSION = NEWEST
#: The Kubernetes release assumed when none is configured: a current 1.3x.
DEFAULT_KUBERNETES_VERSION = "1.33"
#: The rules that run, and those whose fixes `--fix` applies, unless told otherwise.
DEFAULT_SELECT = ("ALL",)
DEFAULT_FIXABLE = ("ALL",)
#: The least severity that fails a run (a `Severity`).
DEFAULT_FAIL_ON = "warning"
#: Skipped when walking folders unless `exclude` says otherwise (hidden folders always are).
DEFAULT_EXCLUDE = ("node_modules/", "venv/", "__pycache__/")
#: Relative to the configuration's folder (or the working folder without one).
DEFAULT_CACHE_DIR = ".trainlint_cache"
#: Where the documentation site (built from `docs/` by mkdocs) is published; config
#: `docs-url` points the links at another copy of it.
DOCS_URL = "https://trainlint.dev"
#: The name findings give to what is read from standard input (`--stdin-filename`).
DEFAULT_STDIN_NAME = "<stdin>"

#: Every key a configuration may set, with its value when none does (lists and tables
#: are copied before they are extended).
DEFAULTS: dict[str, Any] = {
    "trainer-version": f"{DEFAULT_TRAINER_VERSION[0]}.{DEFAULT_TRAINER_VERSION[1]}",
    "kubernetes-version": DEFAULT_KUBERNETES_VERSION,
    "select": list(DEFAULT_SELECT), "extend-select": [], "ignore": [], "per-file-ignores": {},
    "exclude": list(DEFAULT_EXCLUDE), "extend-exclude": [], "respect-gitignore": True,
    "cache-dir": DEFAULT_CACHE_DIR, "context": [], "bundled-runtimes": True,
    "severity": {}, "rules": {}, "fail-on": DEFAULT_FAIL_ON,
    "fixable": list(DEFAULT_FIXABLE), "unfixable": [], "preview": False,
    "device-resources": {}, "docs-url": DOCS_URL,
}
