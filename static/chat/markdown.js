// A small, safe Markdown renderer for model output, and its incremental streaming driver.
//
// Model output is untrusted, so this never parses HTML: it builds DOM nodes directly with createElement and
// Text nodes. Raw HTML in the source (<script>, <img onerror>, <iframe>…) is shown as the text it is. Links are
// kept only for http:, https: and mailto: URLs and open in a new tab with rel="noopener noreferrer nofollow";
// images are never loaded: they become a link ("image: alt") the person may choose to open.
//
// Supported: ATX and setext headings, paragraphs, hard breaks, emphasis/strong/strikethrough, inline code,
// fenced and indented code blocks (with a Copy button), block quotes, ordered/bullet/task lists (nested),
// GFM tables, thematic breaks, links, autolinks and bare URLs, backslash escapes.

const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*([^`]*?)[ \t]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST_ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
const QUOTE = /^ {0,3}>/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const TABLE_DELIM = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
const PUNCT = /[!-/:-@[-`{-~]/;
const SAFE_PROTOCOLS = new Set(["http:", "https:", "mailto:"]);
const LINK_REL = "noopener noreferrer nofollow";

function node(tag, className = "", text = null) {
  const n = document.createElement(tag);
  if (className) n.className = className;
  if (text !== null) n.textContent = text;
  return n;
}

const isBlank = (line) => /^[ \t]*$/.test(line);
const indentOf = (line) => /^ */.exec(line)[0].length;
const isListItem = (line) => LIST_ITEM.test(line) && !HR.test(line);
const expandTabs = (line) => line.replace(/^[ \t]+/, (ws) => ws.replace(/\t/g, "    "));

/** An absolute http(s)/mailto URL as a string, or null for anything else (javascript:, data:, relative…). */
export function safeUrl(href) {
  if (typeof href !== "string") return null;
  let url;
  try {
    url = new URL(href.trim());
  } catch {
    return null;
  }
  return SAFE_PROTOCOLS.has(url.protocol) ? url.href : null;
}

// ---------------------------------------------------------------- inline

function findBacktickRun(src, from, length) {
  const re = /`+/g;
  re.lastIndex = from;
  let m;
  while ((m = re.exec(src))) if (m[0].length === length) return m.index;
  return -1;
}

/** `[text](dest "title")` starting at src[i] === "["; null when it is not a complete link. */
function parseLink(src, i) {
  let depth = 0;
  let k = i;
  for (; k < src.length; k += 1) {
    const c = src[k];
    if (c === "\\") k += 1;
    else if (c === "`") {
      const run = /^`+/.exec(src.slice(k))[0];
      const close = findBacktickRun(src, k + run.length, run.length);
      if (close >= 0) k = close + run.length - 1;
      else k += run.length - 1;
    } else if (c === "[") depth += 1;
    else if (c === "]") {
      depth -= 1;
      if (depth === 0) break;
    }
  }
  if (k >= src.length || src[k + 1] !== "(") return null;
  const text = src.slice(i + 1, k);
  let p = k + 2;
  while (src[p] === " " || src[p] === "\n") p += 1;
  let href = "";
  if (src[p] === "<") {
    const close = src.indexOf(">", p);
    if (close < 0) return null;
    href = src.slice(p + 1, close);
    p = close + 1;
  } else {
    let parens = 0;
    const startDest = p;
    for (; p < src.length; p += 1) {
      const c = src[p];
      if (c === "\\") p += 1;
      else if (c === "(") parens += 1;
      else if (c === ")") {
        if (parens === 0) break;
        parens -= 1;
      } else if (/\s/.test(c)) break;
    }
    href = src.slice(startDest, p).replace(/\\([!-/:-@[-`{-~])/g, "$1");
  }
  while (src[p] === " " || src[p] === "\n") p += 1;
  let title = "";
  const q = src[p];
  if (q === '"' || q === "'" || q === "(") {
    const closing = q === "(" ? ")" : q;
    const end = src.indexOf(closing, p + 1);
    if (end < 0) return null;
    title = src.slice(p + 1, end);
    p = end + 1;
    while (src[p] === " " || src[p] === "\n") p += 1;
  }
  if (src[p] !== ")") return null;
  return { text, href, title, end: p + 1 };
}

function linkNode(href, title, fill) {
  const url = safeUrl(href);
  if (!url) {
    // An unsafe or relative target: keep the words, drop the link.
    const span = node("span", "md-link-removed");
    span.title = "link removed (not an http, https or mailto address)";
    fill(span);
    return span;
  }
  const a = node("a");
  a.href = url;
  a.target = "_blank";
  a.rel = LINK_REL;
  if (title) a.title = title;
  fill(a);
  return a;
}

/** Images are never fetched on their own: a link the person may follow instead. */
function imageNode(alt, href, opts) {
  const label = `image: ${alt.trim() || "untitled"}`;
  const url = safeUrl(href);
  if (!url || url.startsWith("mailto:") || !opts.links) return node("span", "md-image md-link-removed", label);
  const a = node("a", "md-image", `${label} (click to open)`);
  a.href = url;
  a.target = "_blank";
  a.rel = LINK_REL;
  a.title = url;
  return a;
}

/** `*em*`, `**strong**`, `***both***`, `_em_`, `__strong__`, `~~del~~` at src[i]; null when it does not close. */
function parseEmphasis(src, i, opts) {
  const ch = src[i];
  const run = new RegExp(`^\\${ch}+`).exec(src.slice(i))[0];
  const n = Math.min(run.length, 3);
  if (run.length !== n) return null;
  if (ch === "~" && n !== 2) return null;
  const after = src[i + n];
  if (after === undefined || /\s/.test(after)) return null;
  if (ch === "_" && i > 0 && /[\p{L}\p{N}]/u.test(src[i - 1])) return null;
  for (let k = i + n; k < src.length; ) {
    const c = src[k];
    if (c === "\\") {
      k += 2;
      continue;
    }
    if (c === "`") {
      const ticks = /^`+/.exec(src.slice(k))[0];
      const close = findBacktickRun(src, k + ticks.length, ticks.length);
      k = close >= 0 ? close + ticks.length : k + ticks.length;
      continue;
    }
    if (c === ch) {
      const m = new RegExp(`^\\${ch}+`).exec(src.slice(k))[0].length;
      const next = src[k + m];
      const closes =
        m === n && !/\s/.test(src[k - 1]) && !(ch === "_" && next !== undefined && /[\p{L}\p{N}]/u.test(next));
      if (closes) {
        const inner = src.slice(i + n, k);
        let outer;
        if (ch === "~") outer = node("del");
        else if (n === 1) outer = node("em");
        else outer = node("strong");
        let target = outer;
        if (n === 3) {
          target = node("em");
          outer.append(target);
        }
        parseInline(inner, target, opts);
        return { node: outer, end: k + m };
      }
      k += m;
      continue;
    }
    k += 1;
  }
  return null;
}

/** Appends the inline content of `src` to `out`, as elements and Text nodes only. */
export function parseInline(src, out, opts = { links: true }) {
  let buf = "";
  const flush = () => {
    if (buf) out.append(document.createTextNode(buf));
    buf = "";
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === "\\" && i + 1 < src.length) {
      if (src[i + 1] === "\n") {
        flush();
        out.append(node("br"));
        i += 2;
        continue;
      }
      if (PUNCT.test(src[i + 1])) {
        buf += src[i + 1];
        i += 2;
        continue;
      }
    }
    if (c === "\n") {
      const hard = / {2,}$/.test(buf);
      buf = buf.replace(/ +$/, "");
      if (hard) {
        flush();
        out.append(node("br"));
      } else {
        buf += "\n";
      }
      i += 1;
      continue;
    }
    if (c === "`") {
      const run = /^`+/.exec(src.slice(i))[0];
      const close = findBacktickRun(src, i + run.length, run.length);
      if (close >= 0) {
        flush();
        let code = src.slice(i + run.length, close).replace(/\n/g, " ");
        if (code.length > 2 && code.startsWith(" ") && code.endsWith(" ") && code.trim()) code = code.slice(1, -1);
        out.append(node("code", "", code));
        i = close + run.length;
        continue;
      }
      buf += run;
      i += run.length;
      continue;
    }
    if (c === "!" && src[i + 1] === "[") {
      const link = parseLink(src, i + 1);
      if (link) {
        flush();
        out.append(imageNode(link.text, link.href, opts));
        i = link.end;
        continue;
      }
    }
    if (c === "[" && opts.links) {
      const link = parseLink(src, i);
      if (link) {
        flush();
        out.append(linkNode(link.href, link.title, (parent) => parseInline(link.text, parent, { links: false })));
        i = link.end;
        continue;
      }
    }
    if (c === "<") {
      const m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(src.slice(i, i + 2048));
      if (m) {
        flush();
        const text = m[1];
        out.append(opts.links ? linkNode(text, "", (p) => p.append(text)) : document.createTextNode(text));
        i += m[0].length;
        continue;
      }
    }
    if (opts.links && (c === "h" || c === "H") && (i === 0 || !/[\w/]/.test(src[i - 1]))) {
      const m = /^https?:\/\/[^\s<>]+/i.exec(src.slice(i, i + 2048));
      if (m) {
        let url = m[0];
        // Trailing punctuation belongs to the sentence, and a ")" only to the URL if it opened one.
        for (;;) {
          const last = url[url.length - 1];
          if (/[.,:;!?'"*_~]/.test(last)) url = url.slice(0, -1);
          else if (last === ")" && (url.match(/\)/g) || []).length > (url.match(/\(/g) || []).length) {
            url = url.slice(0, -1);
          } else break;
        }
        if (url.length > "https://".length - 1) {
          flush();
          out.append(linkNode(url, "", (p) => p.append(url)));
          i += url.length;
          continue;
        }
      }
    }
    if (c === "*" || c === "_" || c === "~") {
      const em = parseEmphasis(src, i, opts);
      if (em) {
        flush();
        out.append(em.node);
        i = em.end;
        continue;
      }
      const run = new RegExp(`^\\${c}+`).exec(src.slice(i))[0];
      buf += run;
      i += run.length;
      continue;
    }
    buf += c;
    i += 1;
  }
  flush();
}

// ---------------------------------------------------------------- blocks

function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || HR.test(line) || QUOTE.test(line) || isListItem(line);
}

function codeBlock(text, info) {
  const wrap = node("div", "md-code");
  const bar = node("div", "md-code-bar");
  const lang = (info.split(/\s+/)[0] || "").replace(/[^\w+#.-]/g, "").slice(0, 32);
  bar.append(node("span", "md-code-lang", lang || "code"));
  const copy = node("button", "md-copy", "Copy");
  copy.type = "button";
  copy.setAttribute("aria-label", lang ? `Copy ${lang} code` : "Copy code");
  bar.append(copy);
  const pre = node("pre");
  pre.append(node("code", lang ? `language-${lang}` : "", text));
  wrap.append(bar, pre);
  return wrap;
}

function splitRow(line) {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  const cells = [];
  let cell = "";
  let inCode = 0;
  for (let k = 0; k < s.length; k += 1) {
    const c = s[k];
    if (c === "\\" && s[k + 1] === "|") {
      cell += inCode ? "|" : "\\|";
      k += 1;
    } else if (c === "`") {
      const run = /^`+/.exec(s.slice(k))[0];
      if (!inCode) inCode = run.length;
      else if (inCode === run.length) inCode = 0;
      cell += run;
      k += run.length - 1;
    } else if (c === "|" && !inCode) {
      cells.push(cell.trim());
      cell = "";
    } else cell += c;
  }
  cells.push(cell.trim());
  return cells;
}

function parseTable(lines, i, out) {
  const header = splitRow(lines[i]);
  const aligns = splitRow(lines[i + 1]).map((d) => {
    if (d.startsWith(":") && d.endsWith(":")) return "center";
    if (d.endsWith(":")) return "right";
    if (d.startsWith(":")) return "left";
    return "";
  });
  const table = node("table");
  const thead = node("thead");
  const headRow = node("tr");
  const cellOf = (tag, text, col) => {
    const cell = node(tag, aligns[col] ? `align-${aligns[col]}` : "");
    parseInline(text || "", cell);
    return cell;
  };
  header.forEach((text, col) => headRow.append(cellOf("th", text, col)));
  thead.append(headRow);
  table.append(thead);
  const tbody = node("tbody");
  let k = i + 2;
  while (k < lines.length && !isBlank(lines[k]) && !startsBlock(lines[k])) {
    const cells = splitRow(lines[k]);
    const row = node("tr");
    header.forEach((_, col) => row.append(cellOf("td", cells[col], col)));
    tbody.append(row);
    k += 1;
  }
  if (tbody.firstChild) table.append(tbody);
  const wrap = node("div", "md-table");
  wrap.append(table);
  out.append(wrap);
  return k;
}

function parseList(lines, i, out) {
  const first = LIST_ITEM.exec(lines[i]);
  const ordered = /\d/.test(first[2]);
  const marker = first[2].slice(-1);
  const sameKind = (m) => (ordered ? /\d/.test(m[2]) && m[2].endsWith(marker) : m[2] === marker);
  const list = node(ordered ? "ol" : "ul");
  if (ordered) {
    const start = parseInt(first[2], 10);
    if (start !== 1) list.start = start;
  }
  const items = [];
  let current = null;
  while (i < lines.length) {
    const line = lines[i];
    const m = LIST_ITEM.exec(line);
    if (m && !HR.test(line) && sameKind(m) && (!current || m[1].length < current.width)) {
      const gap = m[3].length;
      const width = m[1].length + m[2].length + (gap === 0 || gap > 4 ? 1 : gap);
      current = { lines: [gap > 4 ? `${m[3].slice(1)}${m[4]}` : m[4]], width, loose: false };
      items.push(current);
      i += 1;
      continue;
    }
    if (isBlank(line)) {
      let j = i + 1;
      while (j < lines.length && isBlank(lines[j])) j += 1;
      if (j >= lines.length) break;
      const nextItem = LIST_ITEM.exec(lines[j]);
      if (indentOf(lines[j]) >= current.width || (nextItem && !HR.test(lines[j]) && sameKind(nextItem))) {
        for (; i < j; i += 1) current.lines.push("");
        current.loose = true;
        continue;
      }
      break;
    }
    if (indentOf(line) >= current.width) {
      current.lines.push(line.slice(current.width));
      i += 1;
      continue;
    }
    const previous = current.lines[current.lines.length - 1];
    if (!startsBlock(line) && previous !== undefined && !isBlank(previous)) {
      current.lines.push(line); // a lazy continuation of the item's paragraph
      i += 1;
      continue;
    }
    break;
  }
  const loose = items.some((item) => item.loose);
  for (const item of items) {
    const li = node("li");
    const task = /^\[([ xX])\][ \t]+/.exec(item.lines[0]);
    if (task) {
      item.lines[0] = item.lines[0].slice(task[0].length);
      const box = node("input");
      box.type = "checkbox";
      box.disabled = true;
      box.defaultChecked = task[1] !== " ";
      li.className = "md-task";
      li.append(box, " ");
    }
    parseBlocks(item.lines, li);
    if (!loose) {
      for (const p of [...li.children]) if (p.tagName === "P") p.replaceWith(...p.childNodes);
    }
    list.append(li);
  }
  out.append(list);
  return i;
}

function parseBlocks(lines, out) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      i += 1;
      continue;
    }
    let m = FENCE.exec(line);
    if (m && !(m[2][0] === "`" && m[3].includes("`"))) {
      const indent = m[1].length;
      const fence = m[2];
      const body = [];
      i += 1;
      while (i < lines.length) {
        const l = lines[i];
        const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(l);
        i += 1;
        if (close && close[1][0] === fence[0] && close[1].length >= fence.length) break;
        body.push(l.replace(new RegExp(`^ {0,${indent}}`), ""));
      }
      out.append(codeBlock(body.join("\n"), m[3]));
      continue;
    }
    if ((m = HEADING.exec(line))) {
      const h = node(`h${m[1].length}`);
      parseInline((m[2] || "").trim(), h);
      out.append(h);
      i += 1;
      continue;
    }
    if (HR.test(line)) {
      out.append(node("hr"));
      i += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && !isBlank(lines[i])) {
        if (QUOTE.test(lines[i])) inner.push(lines[i].replace(/^ {0,3}> ?/, ""));
        else if (!startsBlock(lines[i])) inner.push(lines[i]);
        else break;
        i += 1;
      }
      const quote = node("blockquote");
      parseBlocks(inner, quote);
      out.append(quote);
      continue;
    }
    if (isListItem(line)) {
      i = parseList(lines, i, out);
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_DELIM.test(lines[i + 1])) {
      const cols = splitRow(lines[i + 1]).length;
      if (splitRow(line).length === cols && (lines[i + 1].includes("|") || cols > 1)) {
        i = parseTable(lines, i, out);
        continue;
      }
    }
    if (indentOf(line) >= 4) {
      const body = [];
      while (i < lines.length && (indentOf(lines[i]) >= 4 || isBlank(lines[i]))) {
        body.push(lines[i].slice(4));
        i += 1;
      }
      while (body.length && isBlank(body[body.length - 1])) body.pop();
      out.append(codeBlock(body.join("\n"), ""));
      continue;
    }
    // A paragraph: up to a blank line or the start of another block; a setext underline makes it a heading.
    const para = [line.trim()];
    i += 1;
    let heading = 0;
    while (i < lines.length && !isBlank(lines[i])) {
      const setext = SETEXT.exec(lines[i]);
      if (setext) {
        heading = setext[1][0] === "=" ? 1 : 2;
        i += 1;
        break;
      }
      if (startsBlock(lines[i])) break;
      if (lines[i].includes("|") && i + 1 < lines.length && TABLE_DELIM.test(lines[i + 1])) break;
      para.push(lines[i].replace(/^[ \t]+/, ""));
      i += 1;
    }
    const p = node(heading ? `h${heading}` : "p");
    parseInline(para.join("\n").replace(/[ \t]+$/, ""), p);
    out.append(p);
  }
}

/** Markdown source → a DocumentFragment built from elements and Text nodes (never HTML parsing). */
export function renderMarkdown(src) {
  const fragment = document.createDocumentFragment();
  parseBlocks(src.split("\n").map(expandTabs), fragment);
  return fragment;
}

// ---------------------------------------------------------------- streaming

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
      const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
      if (close && close[1][0] === fence[0] && close[1].length >= fence.length) fence = null;
      i += 1;
      continue;
    }
    if (!isBlank(line)) {
      if (blockStart < 0) {
        blockStart = i;
        blockIsList = isListItem(line);
      }
      const m = FENCE.exec(line);
      if (m && !(m[2][0] === "`" && m[3].includes("`"))) fence = m[2];
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
    closed.push(text.slice(starts[blockStart], starts[i]));
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
    this.source = "";
    this.committed = 0;
    this.tail = [];
    this.frame = 0;
    this.blocks = 0; // finished top-level blocks rendered so far
    this.chunk = null; // where the next finished blocks go, once there are many
  }

  append(text) {
    if (!text) return;
    this.source += text.replace(/\r/g, "");
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
    this.source = (text || "").replace(/\r/g, "");
    this.committed = 0;
    this.tail = [];
    this.blocks = 0;
    this.chunk = null;
    this.container.replaceChildren();
    this.render();
  }

  /** The final text: if it is what streamed, only the tail is rendered once more; otherwise all of it. */
  finish(text) {
    if (typeof text === "string" && text.replace(/\r/g, "") !== this.source) this.set(text);
    else {
      this.cancel();
      this.render();
    }
  }

  cancel() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
  }

  render() {
    const { closed, openFrom } = splitClosed(this.source.slice(this.committed));
    for (const n of this.tail) n.remove();
    for (const block of closed) this.keep(renderMarkdown(block));
    this.committed += openFrom;
    const tail = renderMarkdown(this.source.slice(this.committed));
    this.tail = [...tail.childNodes];
    this.container.append(tail);
  }

  /** Appends a finished block; past CHUNK_AFTER of them, into chunks of CHUNK_SIZE (see CHUNK_AFTER). */
  keep(fragment) {
    const count = fragment.childNodes.length;
    if (this.blocks < CHUNK_AFTER) this.container.append(fragment);
    else {
      if (!this.chunk || this.chunk.childNodes.length >= CHUNK_SIZE) {
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
    button.textContent = copied ? "Copied" : "Selected: press Ctrl+C";
    button.dataset.copied = copied ? "true" : "false";
    clearTimeout(button.copyTimer);
    button.copyTimer = setTimeout(() => {
      button.textContent = "Copy";
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
