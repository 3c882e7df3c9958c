// Markdown for model output as DOM nodes, and its incremental streaming driver. markdown-parser.js parses (markdown-it
// with the server's rules); this module builds the page's nodes from its tokens.
//
// Model output is untrusted, so nothing here parses HTML: the tokens become elements made with createElement and
// Text nodes, never markdown-it's HTML string through innerHTML, so even a token that carried markup would only be
// text. The tree is the one the server's HTML for the same text parses to (line breaks between block tags
// included), plus a Copy button on each code block, a script feature the server leaves out. Images are never
// loaded: they become a link ("image: alt") the person may choose to open.
//
// Supported: ATX and setext headings, paragraphs, hard breaks, emphasis/strong/strikethrough, inline code,
// fenced and indented code blocks (with a Copy button), block quotes, ordered/bullet/task lists (nested),
// GFM tables, thematic breaks, links, autolinks and bare URLs, backslash escapes.

import { LINK_REL, parseMarkdown, safeUrl, stripAsciiSpace } from "./markdown-parser.js";
import { highlightCode } from "./highlight.js";
import { _, format } from "./i18n.js";

const CODE_LANGUAGE = /^[ \t\n\r\f\v]*([^ \t\n\r\f\v]*)/;
const CODE_LANGUAGE_JUNK = /[^\w+#.-]/g;
// The elements markdown-it's tokens may name, after the parser's rule; anything else would be a bug, shown as a span.
const TAGS = new Set(
  "p h1 h2 h3 h4 h5 h6 blockquote ul ol li hr table thead tbody tr th td em strong del a span".split(" "),
);

function node(tag, className = "", text = null) {
  const n = document.createElement(tag);
  if (className) n.className = className;
  if (text !== null) n.textContent = text;
  return n;
}

// ---------------------------------------------------------------- tokens → DOM

function codeBlock(text, info) {
  const wrap = node("div", "md-code");
  const bar = node("div", "md-code-bar");
  const lang = CODE_LANGUAGE.exec(info)[1].replace(CODE_LANGUAGE_JUNK, "").slice(0, 32);
  bar.append(node("span", "md-code-lang", lang || _("code")));
  const copy = node("button", "md-copy", _("Copy"));
  copy.type = "button";
  copy.setAttribute("aria-label", lang ? format(_("Copy %(language)s code"), { language: lang }) : _("Copy code"));
  bar.append(copy);
  const pre = node("pre");
  pre.append(node("code", lang ? `language-${lang}` : "", text));
  wrap.append(bar, pre);
  return wrap;
}

/** Images are never fetched on their own: a link the person may follow instead. */
function imageNode(token) {
  const label = `image: ${stripAsciiSpace(token.content) || "untitled"}`;
  const url = safeUrl(token.attrGet("src"));
  if (!url || url.toLowerCase().startsWith("mailto:") || token.meta?.inLink) {
    return node("span", "md-image md-link-removed", label);
  }
  const a = node("a", "md-image", `${label} (click to open)`);
  a.setAttribute("href", url);
  a.target = "_blank";
  a.rel = LINK_REL;
  a.title = url;
  return a;
}

function taskBox(token) {
  const box = node("input");
  box.type = "checkbox";
  box.disabled = true;
  box.defaultChecked = Boolean(token.meta?.checked);
  return box;
}

/**
 * markdown-it's Renderer.renderToken as DOM: the element with its attributes, and the same "\n" text nodes its
 * HTML has around block tags, so the tree is the one the server's HTML parses to.
 */
function genericToken(tokens, idx, stack) {
  const token = tokens[idx];
  if (token.hidden) return; // the paragraphs of a tight list
  let parent = stack[stack.length - 1];
  if (token.block && token.nesting !== -1 && idx && tokens[idx - 1].hidden) parent.append("\n");
  if (token.nesting === -1) {
    stack.pop();
    parent = stack[stack.length - 1];
  } else {
    const element = document.createElement(TAGS.has(token.tag) ? token.tag : "span");
    for (const [name, value] of token.attrs || []) element.setAttribute(name, value);
    parent.append(element);
    if (token.nesting === 1) {
      stack.push(element);
      parent = element;
    }
  }
  if (!token.block) return;
  const next = tokens[idx + 1];
  const staysOnItsLine =
    token.nesting === 1 &&
    next &&
    (next.type === "inline" || next.hidden || (next.nesting === -1 && next.tag === token.tag));
  if (!staysOnItsLine) parent.append("\n");
}

function buildInline(tokens, root) {
  const stack = [root];
  tokens.forEach((token, i) => {
    const parent = stack[stack.length - 1];
    switch (token.type) {
      case "text":
      case "html_inline": // raw HTML is off; were such a token to appear, it is only text
        if (token.content) parent.append(token.content);
        break;
      case "softbreak":
        parent.append("\n");
        break;
      case "hardbreak": // a <br> without markdown-it's "\n", which would be a second break in a paragraph
        parent.append(node("br"));
        break;
      case "code_inline":
        parent.append(node("code", "", token.content));
        break;
      case "image":
        parent.append(imageNode(token));
        break;
      case "md_task_box":
        parent.append(taskBox(token));
        break;
      default:
        genericToken(tokens, i, stack);
    }
  });
}

function buildBlocks(tokens, root) {
  const stack = [root];
  tokens.forEach((token, i) => {
    const parent = stack[stack.length - 1];
    switch (token.type) {
      case "inline":
        buildInline(token.children || [], parent);
        break;
      case "fence":
        parent.append(codeBlock(token.content.replace(/\n$/, ""), token.info), "\n");
        break;
      case "code_block":
        parent.append(codeBlock(token.content.replace(/\n+$/, ""), ""), "\n");
        break;
      case "table_open": {
        const wrap = node("div", "md-table");
        const table = node("table");
        table.append("\n");
        wrap.append(table);
        parent.append(wrap);
        stack.push(table);
        break;
      }
      case "table_close":
        stack.pop();
        stack[stack.length - 1].append("\n");
        break;
      case "html_block":
        if (token.content) parent.append(token.content);
        break;
      default:
        genericToken(tokens, i, stack);
    }
  });
}

/** Markdown source → a DocumentFragment built from elements and Text nodes (never HTML parsing). */
export function renderMarkdown(src) {
  const fragment = document.createDocumentFragment();
  buildBlocks(parseMarkdown(src), fragment);
  return fragment;
}

// ---------------------------------------------------------------- streaming

// Just enough of the block syntax to tell where a finished block ends (see splitClosed).
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;

const isBlank = (line) => /^[ \t]*$/.test(line);
const isListItem = (line) => LIST_ITEM.test(line) && !HR.test(line);
/** Line breaks as markdown-it reads them: "\r\n" and a lone "\r" are each one "\n". */
const newlines = (text) => text.replace(/\r\n?/g, "\n");

/**
 * Splits streamed text into the blocks that are finished (a blank line outside a code fence, followed by the
 * start of a line that does not continue the block) and the open tail from `openFrom` on.
 */
export function splitClosed(text) {
  const lines = text.split("\n");
  const last = lines.length - 1; // unterminated (maybe empty): it can still grow
  const starts = [];
  let offset = 0;
  for (const line of lines) {
    starts.push(offset);
    offset += line.length + 1;
  }
  const closed = [];
  let openFrom = 0;
  let blockStart = -1;
  let blockIsList = false;
  let fence = null;
  let i = 0;
  while (i < last) {
    const line = lines[i];
    if (fence) {
      const close = FENCE_CLOSE.exec(line);
      if (close && close[1][0] === fence[0] && close[1].length >= fence.length) fence = null;
      i += 1;
      continue;
    }
    if (!isBlank(line)) {
      if (blockStart < 0) {
        blockStart = i;
        blockIsList = false;
      }
      if (isListItem(line)) blockIsList = true; // a list may also begin under a paragraph
      const m = FENCE.exec(line);
      if (m && !(m[1][0] === "`" && m[2].includes("`"))) fence = m[1]; // a ``` fence's info has no backtick
      i += 1;
      continue;
    }
    if (blockStart < 0) {
      i += 1;
      continue;
    }
    let j = i + 1;
    while (j < last && isBlank(lines[j])) j += 1;
    const next = lines[j];
    if (isBlank(next)) break; // nothing after the blank line yet: undecided
    if (/^[ \t]/.test(next)) {
      i = j; // indented: the block (a list item, indented code) goes on
      continue;
    }
    if (blockIsList) {
      if (j === last) break; // the next line is still arriving: it may be another item
      if (isListItem(next)) {
        i = j;
        continue;
      }
    }
    // With its blank lines: an unclosed fence inside a list item keeps them, as in the whole text.
    closed.push(text.slice(starts[blockStart], starts[j]));
    openFrom = starts[j];
    blockStart = -1;
    i = j;
  }
  return { closed, openFrom };
}

// A long answer's finished blocks go into wrappers of CHUNK_SIZE blocks (after the first CHUNK_AFTER), each laid
// out and painted on its own (contain, app.css): a frame then re-lays out the open chunk and the tail, and
// walks a few dozen chunks instead of every paragraph of the answer so far.
const CHUNK_AFTER = 32;
const CHUNK_SIZE = 24;

/**
 * Renders streamed Markdown into `container`: finished blocks are rendered once and kept (their elements keep
 * their identity); only the open tail is rendered again, at most once per animation frame.
 */
export class MarkdownStream {
  constructor(container) {
    this.container = container;
    this.source = ""; // as markdown-it reads it: see newlines
    this.carriageReturn = false; // the last piece ended with "\r": a "\n" first in the next one is the same break
    this.committed = 0;
    this.tail = [];
    this.frame = 0;
    this.blocks = 0; // finished top-level blocks rendered so far
    this.chunk = null; // where the next finished blocks go, once there are many
  }

  append(text) {
    if (!text) return;
    const piece = this.carriageReturn && text[0] === "\n" ? text.slice(1) : text;
    this.carriageReturn = text.endsWith("\r");
    this.source += newlines(piece);
    if (!this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.render();
      });
    }
  }

  /** Replaces everything (snapshots, a different final text). */
  set(text) {
    this.cancel();
    this.source = newlines(text || "");
    this.carriageReturn = false;
    this.committed = 0;
    this.tail = [];
    this.blocks = 0;
    this.chunk = null;
    this.container.replaceChildren();
    this.render(true);
  }

  /** The final text: if it is what streamed, only the tail is rendered once more; otherwise all of it. */
  finish(text) {
    if (typeof text === "string" && newlines(text) !== this.source) this.set(text);
    else {
      this.cancel();
      this.render(true);
    }
  }

  cancel() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
  }

  /**
   * Renders what changed. Code blocks are highlighted (highlight.js) once finished: in the blocks kept from now
   * on, and in the tail only when `final` (the whole text is in: finish, set), never per token.
   */
  render(final = false) {
    const { closed, openFrom } = splitClosed(this.source.slice(this.committed));
    for (const n of this.tail) n.remove();
    for (const block of closed) {
      const fragment = renderMarkdown(block);
      highlightCode(fragment);
      this.keep(fragment);
    }
    this.committed += openFrom;
    const tail = renderMarkdown(this.source.slice(this.committed));
    if (final) highlightCode(tail);
    this.tail = [...tail.childNodes];
    this.container.append(tail);
  }

  /** Appends a finished block; past CHUNK_AFTER of them, into chunks of CHUNK_SIZE (see CHUNK_AFTER). */
  keep(fragment) {
    const count = fragment.children.length;
    if (this.blocks < CHUNK_AFTER) this.container.append(fragment);
    else {
      if (!this.chunk || this.chunk.children.length >= CHUNK_SIZE) {
        this.chunk = node("div", this.chunk ? "md-chunk" : "md-chunk md-chunk-first");
        this.container.append(this.chunk);
      }
      this.chunk.append(fragment);
    }
    this.blocks += count;
  }
}

// ---------------------------------------------------------------- copy buttons

function selectContents(target) {
  const range = document.createRange();
  range.selectNodeContents(target);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  try {
    return document.execCommand("copy");
  } catch {
    return false;
  }
}

/** A click listener for a container of rendered Markdown: the Copy buttons of its code blocks. */
export function onCopyClick(event) {
  const button = event.target instanceof Element ? event.target.closest(".md-copy") : null;
  const code = button?.closest(".md-code")?.querySelector("pre > code");
  if (!code) return;
  const text = code.textContent;
  const show = (copied) => {
    button.textContent = copied ? _("Copied") : _("Selected: press Ctrl+C");
    button.dataset.copied = copied ? "true" : "false";
    clearTimeout(button.copyTimer);
    button.copyTimer = setTimeout(() => {
      button.textContent = _("Copy");
      delete button.dataset.copied;
    }, 2000);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(
      () => show(true),
      () => show(selectContents(code)),
    );
  } else {
    show(selectContents(code));
  }
}
