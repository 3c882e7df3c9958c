"""Artifacts shaped like an MCP tool result: `{"content": [blocks], "structuredContent": {...}}`, where a block is
`{"type": "text", "text"}`, `{"type": "image", "mimeType", "data": base64}`, `{"type": "resource", ...}`, ….

Any tool may return one (response_format="content_and_artifact"); the card shows its images. Which images a page
shows is decided the same way here (the count in tool_call.completed) and in the page (static/chat/artifact.js):
PNG, JPEG, GIF or WebP only, valid base64, at most MAX_IMAGE_BYTES each once decoded, and bytes that start the
way that type's files do.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

__all__ = ["IMAGE_TYPES", "MAX_IMAGE_BYTES", "image_blocks", "shown_images"]

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_IMAGE_BYTES = 5 * 1024 * 1024


def image_blocks(artifact: Any) -> list[dict[str, Any]]:
    """The artifact's content blocks of type image, whatever they hold."""
    if not isinstance(artifact, dict) or not isinstance(artifact.get("content"), list):
        return []
    return [block for block in artifact["content"] if isinstance(block, dict) and block.get("type") == "image"]


def shown_images(artifact: Any) -> list[tuple[str, bytes]]:
    """(type, bytes) of each image a page shows, in order."""
    shown = []
    for block in image_blocks(artifact):
        decoded = decode_image(block.get("mimeType"), block.get("data"))
        if decoded is not None:
            shown.append((block["mimeType"], decoded))
    return shown


def decode_image(mime: Any, data: Any) -> bytes | None:
    if mime not in IMAGE_TYPES or not isinstance(data, str) or len(data) > (MAX_IMAGE_BYTES * 4) // 3 + 4:
        return None
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    if not raw or len(raw) > MAX_IMAGE_BYTES or not _looks_like(mime, raw):
        return None
    return raw


def _looks_like(mime: str, raw: bytes) -> bool:
    if mime == "image/png":
        return raw.startswith(b"\x89PNG\r\n\x1a\n")
    if mime == "image/jpeg":
        return raw.startswith(b"\xff\xd8\xff")
    if mime == "image/gif":
        return raw.startswith((b"GIF87a", b"GIF89a"))
    return raw[:4] == b"RIFF" and raw[8:12] == b"WEBP"
