"""An MCP tool result as the app keeps it: text for the model, everything else as the call's artifact.

The artifact has the shape of an MCP result, which the tool card knows how to show (images displayed):
``{"content": [{"type": "image", "mimeType": "image/png", "data": "<base64>"}, ...], "structuredContent": ...}``.
Text blocks go to the model; each image, audio clip, embedded resource or resource link is named there in one
short line ("[image image/png, 12 kB]"), so the model knows it was produced without reading its bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from tools.artifacts import MAX_ARTIFACT_IMAGE_CHARS, artifact_size
from tools.results import MAX_STORED_CHARS

__all__ = ["Converted", "convert_result"]

# Room left in the stored artifact for the rest of the call's record.
ARTIFACT_BUDGET = MAX_STORED_CHARS - 4096


@dataclass(frozen=True)
class Converted:
    text: str  # what the model reads
    artifact: dict | None  # None: nothing but text
    is_error: bool


def convert_result(result: types.CallToolResult) -> Converted:
    texts: list[str] = []
    kept: list[dict[str, Any]] = []
    budget, image_budget = ARTIFACT_BUDGET, MAX_ARTIFACT_IMAGE_CHARS
    structured = result.structured_content
    if structured is not None:
        budget -= len(json.dumps(structured, ensure_ascii=False, default=str))
    for block in result.content:
        if isinstance(block, types.TextContent):
            texts.append(block.text)
            continue
        wire = block.model_dump(by_alias=True, exclude_none=True, mode="json")
        size = artifact_size({"content": [wire]})
        summary = _summary(block)
        if size.other <= budget and size.images <= image_budget:
            kept.append(wire)
            budget -= size.other
            image_budget -= size.images
        else:  # a result larger than what a call may store: named for the model, not kept
            summary = summary[:-1] + ", too large to keep]"
        texts.append(summary)
    if structured is not None and not any(isinstance(b, types.TextContent) for b in result.content):
        # The spec asks servers for a text form too; when there is none the model reads the JSON.
        texts.insert(0, json.dumps(structured, ensure_ascii=False, default=str))
    artifact: dict[str, Any] | None = None
    if kept or structured is not None:
        artifact = {"content": kept}
        if structured is not None and budget >= 0:
            artifact["structuredContent"] = structured
    text = "\n".join(texts)
    if not text:
        text = "(the tool returned nothing)" if not result.is_error else "The tool reported an error without a message."
    return Converted(text=text, artifact=artifact, is_error=bool(result.is_error))


def _summary(block: Any) -> str:
    if isinstance(block, types.ImageContent | types.AudioContent):
        return f"[{block.type} {block.mime_type}, {_size(_decoded_bytes(block.data))}]"
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        mime = f"{resource.mime_type}, " if resource.mime_type else ""
        if isinstance(resource, types.TextResourceContents):
            size = len(resource.text.encode())
        else:
            size = _decoded_bytes(resource.blob)
        return f"[resource {resource.uri} ({mime}{_size(size)})]"
    if isinstance(block, types.ResourceLink):
        return f"[resource link {block.name}: {block.uri}]"
    return f"[{getattr(block, 'type', 'content')}]"


def _decoded_bytes(data: str) -> int:
    return len(data) * 3 // 4 - data.count("=", max(0, len(data) - 2))


def _size(count: int) -> str:
    if count < 1000:
        return f"{count} B"
    if count < 1_000_000:
        return f"{round(count / 1000)} kB"
    return f"{count / 1_000_000:.1f} MB"
