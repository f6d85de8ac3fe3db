"""The digest trainlint keeps what it remembers by (the cache's entries, CEL verdicts,
look-ups): BLAKE2b, from the module CPython builds it in. `hashlib.blake2b` is the same
function, but `hashlib` loads OpenSSL first, 2–3 ms of every start-up."""

from _blake2 import blake2b

__all__ = ["blake2b"]
