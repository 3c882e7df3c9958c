// The parts of an artifact shaped like an MCP tool result ({content: [blocks], structuredContent}) that a tool card
// shows besides the JSON viewer: its images, and its structured content. The same rules as tools/artifacts.py:
// PNG, JPEG, GIF or WebP only, valid base64, at most MAX_IMAGE_BYTES each once decoded, and bytes that start the way
// that type's files do. An image becomes a Blob and an <img> of its blob: URL (the page's CSP allows `blob:` images
// and nothing else new); SVG, which can hold script, is never one of them.

import { el, isJsonObject } from "./dom.js";
import { _, format, ngettext } from "./i18n.js";

export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The image blocks of an MCP-shaped artifact, whatever they hold ([] for any other artifact). */
export function imageBlocks(artifact) {
  if (!isJsonObject(artifact) || !Array.isArray(artifact.content)) return [];
  return artifact.content.filter((b) => isJsonObject(b) && b.type === "image");
}

/** The bytes of an image block that may be shown, or null. */
export function decodeImage(block) {
  const { mimeType: mime, data } = block || {};
  if (!IMAGE_TYPES.includes(mime) || typeof data !== "string" || !data) return null;
  if (data.length > Math.ceil(MAX_IMAGE_BYTES / 3) * 4 || data.length % 4 !== 0 || !BASE64.test(data)) return null;
  let text;
  try {
    text = atob(data);
  } catch {
    return null;
  }
  if (text.length > MAX_IMAGE_BYTES) return null;
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i += 1) bytes[i] = text.charCodeAt(i);
  return looksLike(mime, bytes) ? bytes : null;
}

function startsWith(bytes, prefix, at = 0) {
  return prefix.every((b, i) => bytes[at + i] === b);
}

function looksLike(mime, bytes) {
  switch (mime) {
    case "image/png": return startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    case "image/jpeg": return startsWith(bytes, [0xff, 0xd8, 0xff]);
    case "image/gif": return startsWith(bytes, [0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39);
    default: return startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8);
  }
}

/** The artifact as its viewer shows it: each image's base64 replaced by a short note (it is shown above). */
export function withoutImageData(artifact) {
  if (!imageBlocks(artifact).length) return artifact;
  return {
    ...artifact,
    content: artifact.content.map((b) => (isJsonObject(b) && b.type === "image" && typeof b.data === "string"
      ? { ...b, data: `(${b.data.length} characters of base64)` }
      : b)),
  };
}

/**
 * The images section of a tool card: filled from the artifact once it is loaded; each <img> shows one blob: URL,
 * revoked when the card leaves the page.
 */
export class ArtifactImages {
  constructor(toolName) {
    this.toolName = toolName;
    this.urls = [];
    this.root = el("section", "tool-section tool-images");
    this.root.hidden = true;
    this.list = el("div", "tool-image-list");
    this.noteEl = el("p", "tool-note tool-images-note");
    this.noteEl.hidden = true;
    this.structuredTitle = el("div", "tool-section-title", _("Structured content"));
    this.structuredEl = el("pre", "tool-structured-text");
    this.structuredTitle.hidden = true;
    this.structuredEl.hidden = true;
    this.root.append(el("div", "tool-section-title", _("Images")), this.list, this.noteEl);
    this.structured = el("section", "tool-section tool-structured");
    this.structured.hidden = true;
    this.structured.append(this.structuredTitle, this.structuredEl);
  }

  /** Shows what `artifact` holds for the card (nothing for an artifact of another shape). */
  fill(artifact) {
    this.dispose();
    this.list.replaceChildren();
    const blocks = imageBlocks(artifact);
    let shown = 0;
    blocks.forEach((block) => {
      const bytes = decodeImage(block);
      if (!bytes) return;
      shown += 1;
      const url = URL.createObjectURL(new Blob([bytes], { type: block.mimeType }));
      this.urls.push(url);
      const img = el("img", "tool-image");
      img.src = url;
      img.alt = format(_("Image %(n)s from %(tool)s"), { n: shown, tool: this.toolName });
      img.decoding = "async";
      img.loading = "lazy";
      this.list.append(img);
    });
    const skipped = blocks.length - shown;
    this.noteEl.textContent = skipped
      ? format(ngettext("%(n)s image not shown: only PNG, JPEG, GIF or WebP up to 5 MB can be.", "%(n)s images not shown: only PNG, JPEG, GIF or WebP up to 5 MB can be.", skipped), { n: skipped })
      : "";
    this.noteEl.hidden = !skipped;
    this.root.hidden = blocks.length === 0;
    this.root.dataset.count = String(shown);
    const hasStructured = isJsonObject(artifact) && artifact.structuredContent !== undefined
      && artifact.structuredContent !== null && Array.isArray(artifact.content);
    this.structuredEl.textContent = hasStructured ? JSON.stringify(artifact.structuredContent, null, 2) : "";
    this.structured.hidden = !hasStructured;
    this.structuredTitle.hidden = !hasStructured;
    this.structuredEl.hidden = !hasStructured;
  }

  dispose() {
    for (const url of this.urls) URL.revokeObjectURL(url);
    this.urls = [];
  }
}
