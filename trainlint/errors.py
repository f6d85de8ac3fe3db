"""Errors that cross floors: raised low, reported by the front ends."""

from __future__ import annotations


class ConfigError(Exception):
    """A configuration that cannot be used; the message names the file and the key."""
