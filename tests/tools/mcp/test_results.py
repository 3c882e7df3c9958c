import base64

import mcp_types as types

from tools.artifacts import MAX_ARTIFACT_IMAGE_CHARS
from tools.mcp.results import ARTIFACT_BUDGET, convert_result


def test_text_goes_to_the_model_and_nothing_is_kept():
    converted = convert_result(types.CallToolResult(content=[types.TextContent(text="a"), types.TextContent(text="b")]))
    assert (converted.text, converted.artifact, converted.is_error) == ("a\nb", None, False)


def test_an_image_and_a_resource_are_kept_and_named():
    data = base64.b64encode(b"x" * 12_000).decode()
    result = types.CallToolResult(
        content=[
            types.ImageContent(data=data, mime_type="image/png"),
            types.EmbeddedResource(
                resource=types.TextResourceContents(uri="file:///a.txt", text="hi", mime_type="text/plain")
            ),
        ]
    )
    converted = convert_result(result)
    assert converted.text == "[image image/png, 12 kB]\n[resource file:///a.txt (text/plain, 2 B)]"
    assert [block["type"] for block in converted.artifact["content"]] == ["image", "resource"]
    assert converted.artifact["content"][0] == {"type": "image", "data": data, "mimeType": "image/png"}


def test_structured_content_alone_reaches_the_model_as_json():
    converted = convert_result(types.CallToolResult(content=[], structured_content={"temperature": 21}))
    assert converted.text == '{"temperature": 21}'
    assert converted.artifact == {"content": [], "structuredContent": {"temperature": 21}}


def test_an_image_of_a_few_megabytes_is_kept_for_the_card():
    data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"x" * 3_000_000).decode()
    converted = convert_result(types.CallToolResult(content=[types.ImageContent(data=data, mime_type="image/png")]))
    assert converted.text == "[image image/png, 3.0 MB]"
    assert converted.artifact["content"][0]["data"] == data


def test_images_over_the_artifacts_image_room_are_named_but_not_kept():
    data = "A" * (MAX_ARTIFACT_IMAGE_CHARS + 4)
    converted = convert_result(types.CallToolResult(content=[types.ImageContent(data=data, mime_type="image/png")]))
    assert converted.text.endswith("too large to keep]")
    assert converted.artifact is None


def test_a_resource_too_large_to_store_is_named_but_not_kept():
    text = "A" * (ARTIFACT_BUDGET + 10)
    resource = types.TextResourceContents(uri="file:///big.txt", text=text, mime_type="text/plain")
    converted = convert_result(types.CallToolResult(content=[types.EmbeddedResource(resource=resource)]))
    assert converted.text.endswith("too large to keep]")
    assert converted.artifact is None


def test_an_error_result():
    converted = convert_result(types.CallToolResult(content=[types.TextContent(text="no such file")], is_error=True))
    assert converted.is_error and converted.text == "no such file"
