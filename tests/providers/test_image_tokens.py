"""An image's share of the context estimate, from its size in pixels (providers/image_tokens.py)."""

import base64
import struct

import pytest

from providers.budget import estimate_message
from providers.image_tokens import MAX_IMAGE_TOKENS, UNKNOWN_IMAGE_TOKENS, image_size, image_tokens
from providers.types import ChatMessage, ImagePart
from tests.attachments.files import png


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def jpeg_head(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + bytes(9)
    frame = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, height, width, 3) + bytes(9)
    return b"\xff\xd8" + app0 + frame


def gif_head(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + bytes(3)


def webp_vp8x_head(width: int, height: int) -> bytes:
    return (
        b"RIFF"
        + bytes(4)
        + b"WEBPVP8X"
        + bytes(8)
        + (width - 1).to_bytes(3, "little")
        + (height - 1).to_bytes(3, "little")
    )


@pytest.mark.parametrize(
    ("head", "size"),
    [
        (png(30, 20), (30, 20)),
        (jpeg_head(640, 480), (640, 480)),
        (gif_head(7, 9), (7, 9)),
        (webp_vp8x_head(1000, 500), (1000, 500)),
    ],
)
def test_the_size_is_read_from_each_formats_header(head, size):
    assert image_size(head) == size


def test_a_photo_costs_by_its_area():
    assert image_tokens(b64(jpeg_head(1000, 750))) == 1000


def test_a_large_image_costs_what_providers_scale_it_to_and_a_tiny_one_the_least():
    assert image_tokens(b64(jpeg_head(6000, 4000))) == MAX_IMAGE_TOKENS
    assert image_tokens(b64(png(2, 2))) == 85


def test_an_unreadable_image_counts_as_a_large_one():
    assert image_tokens(b64(b"not an image at all")) == UNKNOWN_IMAGE_TOKENS
    assert image_tokens("%%% not base64") == UNKNOWN_IMAGE_TOKENS


def test_a_message_with_an_image_is_estimated_larger_by_the_images_cost():
    text_only = ChatMessage(role="user", content="What is this?")
    with_image = ChatMessage(
        role="user", content="What is this?", images=[ImagePart("image/jpeg", b64(jpeg_head(1000, 750)))]
    )
    assert estimate_message(with_image) == estimate_message(text_only) + 1000
