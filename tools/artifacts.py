"""Artifacts shaped like an MCP tool result: `{"content": [blocks], "structuredContent": {...}}`, where a block is
`{"type": "text", "text"}`, `{"type": "image", "mimeType", "data": base64}`, `{"type": "resource", ...}`, ….

Any tool may return one (response_format="content_and_artifact"); the card shows its images. Which images a page
shows is decided the same way here (the count in tool_call.completed) and in the page (static/chat/artifact.js):
PNG, JPEG, GIF or WebP only, valid base64, at most MAX_IMAGE_BYTES each once decoded, and bytes that start the
way that type's files do.

Images are measured apart from the rest: an artifact's other JSON is held to the stored cap of any result
(tools/results.py MAX_STORED_CHARS, 1 MiB), its images' base64 to MAX_ARTIFACT_IMAGE_CHARS in all, so an image of a
few megabytes reaches the card (it never goes to the model, and no snapshot or event carries it).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "IMAGE_TYPES",
    "MAX_ARTIFACT_IMAGE_CHARS",
    "MAX_IMAGE_BYTES",
    "ArtifactSize",
    "artifact_size",
    "image_blocks",
    "shown_images",
]

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_IMAGE_BYTES = 5 * 1024 * 1024
#: The base64 of every image of one artifact together: two images of the largest size.
MAX_ARTIFACT_IMAGE_CHARS = 2 * ((MAX_IMAGE_BYTES + 2) // 3) * 4


@dataclass(frozen=True)
class ArtifactSize:
    other: int  # characters of the artifact as compact JSON, its images' base64 left out
    images: int  # characters of its images' base64

    def fits(self, other_limit: int) -> bool:
        return self.other <= other_limit and self.images <= MAX_ARTIFACT_IMAGE_CHARS


def artifact_size(artifact: Any) -> ArtifactSize:
    """The artifact's size as JSON (compact, UTF-8 characters), its image data apart from the rest."""
    blocks = [b for b in image_blocks(artifact) if isinstance(b.get("data"), str)]
    if blocks:
        images = {id(b) for b in blocks}
        artifact = {**artifact, "content": [{**b, "data": ""} if id(b) in images else b for b in artifact["content"]]}
    other = len(json.dumps(artifact, ensure_ascii=False, separators=(",", ":"), default=str))
    return ArtifactSize(other=other, images=sum(len(b["data"]) for b in blocks))


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
