"""What an image costs in a model's context, estimated from its size in pixels, read from the file's header.

Providers count images differently (OpenAI in 512-pixel tiles, Anthropic by area, about width * height / 750, on an
image scaled to at most about 1.15 megapixels); both come to roughly 1,600 tokens at most for one image. The
estimate here is Anthropic's rule on the image as the providers scale it: ceil(w * h / 750) on at most 1,568 pixels
a side, at least 85 (OpenAI's smallest) and at most 1,600 (both scale a larger image down to about that). An image
whose size cannot be read (a header not understood) counts UNKNOWN_IMAGE_TOKENS. Plain Python:
providers/budget.py adds it to the message's estimate.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct

__all__ = ["UNKNOWN_IMAGE_TOKENS", "image_size", "image_tokens"]

MAX_IMAGE_TOKENS = 1_600
UNKNOWN_IMAGE_TOKENS = MAX_IMAGE_TOKENS
MIN_IMAGE_TOKENS = 85
LONGEST_SIDE = 1_568
PIXELS_PER_TOKEN = 750
# Enough of a file's start for its size: PNG and GIF say it in their first bytes, JPEG in a frame header after any
# metadata (which can be long), WebP in its first chunk.
_HEAD_BYTES = 64 * 1024


def image_tokens(base64_data: str) -> int:
    size = image_size(_head(base64_data))
    if size is None:
        return UNKNOWN_IMAGE_TOKENS
    width, height = size
    scale = min(1.0, LONGEST_SIDE / max(width, height))
    tokens = math.ceil((width * scale) * (height * scale) / PIXELS_PER_TOKEN)
    return min(MAX_IMAGE_TOKENS, max(MIN_IMAGE_TOKENS, tokens))


def _head(base64_data: str) -> bytes:
    chars = (_HEAD_BYTES // 3) * 4
    try:
        return base64.b64decode(base64_data[:chars])
    except (binascii.Error, ValueError):
        return b""


def image_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) of a PNG, GIF, JPEG or WebP from the start of its file, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n") and len(head) >= 24:
        return _positive(*struct.unpack(">II", head[16:24]))
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        return _positive(*struct.unpack("<HH", head[6:10]))
    if head.startswith(b"\xff\xd8"):
        return _jpeg_size(head)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _webp_size(head)
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 <= len(head):
        if head[at] != 0xFF:
            return None
        marker = head[at + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            at += 2
            continue
        length = struct.unpack(">H", head[at + 2 : at + 4])[0]
        # Start of frame (baseline, progressive, …; not DHT 0xC4, JPG 0xC8, DAC 0xCC): height then width.
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", head[at + 5 : at + 9])
            return _positive(width, height)
        at += 2 + length
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8X" and len(head) >= 30:
        width = 1 + int.from_bytes(head[24:27], "little")
        height = 1 + int.from_bytes(head[27:30], "little")
        return _positive(width, height)
    if chunk == b"VP8 " and len(head) >= 30:
        width, height = struct.unpack("<HH", head[26:30])
        return _positive(width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return _positive((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    return None


def _positive(width: int, height: int) -> tuple[int, int] | None:
    return (width, height) if width > 0 and height > 0 else None
