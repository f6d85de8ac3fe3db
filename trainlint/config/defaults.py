"""Every default of the configuration, once: the keys' defaults, and the command line's."""

from __future__ import annotations

#: The Kubernetes release assumed when none is configured: a current 1.3x.
DEFAULT_KUBERNETES_VERSION = "1.33"
#: Skipped when walking folders unless `exclude` says otherwise (hidden folders always are).
DEFAULT_EXCLUDE = ("node_modules/", "venv/", "__pycache__/")
#: Relative to the configuration's folder (or the working folder without one).
DEFAULT_CACHE_DIR = ".trainlint_cache"
#: Where the documentation site (built from `docs/` by mkdocs) is published; config
#: `docs-url` points the links at another copy of it.
DOCS_URL = "https://trainlint.dev"
