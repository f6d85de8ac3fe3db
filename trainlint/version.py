"""trainlint's release: what `--version` prints and what tells cached results apart."""

__version__ = "0.1.0"
