"""The name the model sees for an MCP tool: ``<server>__<tool>``.

Providers accept 1-64 characters of [A-Za-z0-9_-] (tools/base.py). A name that fits is kept as it is; one
that is too long, or had characters replaced, ends with a hash of the original pair, so it is stable across
processes and restarts and two tools never share a name because of the shortening.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["MAX_NAME", "SEPARATOR", "server_prefix", "tool_name"]

MAX_NAME = 64
SEPARATOR = "__"
_BAD = re.compile(r"[^A-Za-z0-9_-]")
_SUFFIX = 9  # "_" and 8 hex digits


def tool_name(server: str, tool: str) -> str:
    """The model-facing name of ``tool`` of ``server``."""
    plain = f"{server}{SEPARATOR}{tool}"
    cleaned = _BAD.sub("_", plain)
    if cleaned == plain and len(plain) <= MAX_NAME:
        return plain
    digest = hashlib.sha256(plain.encode()).hexdigest()[:8]
    return f"{cleaned[: MAX_NAME - _SUFFIX]}_{digest}"


def server_prefix(server: str) -> str:
    """How every tool name of ``server`` starts (server names keep to the allowed characters, 40 at most)."""
    return f"{_BAD.sub('_', server)}{SEPARATOR}"
