// markdown-it configured as the server's renderer, sharing/markdown.py, configures markdown-it-py (the port of the
// markdown-it version vendored here): the same preset and options and the same rule over the token stream, so the
// browser and the server (the first screen of a chat, the shared page) see the same tokens.
// tests/e2e/test_markdown_parity.py renders a corpus with both and compares the HTML. markdown.js turns the
// tokens into DOM nodes.
//
// The rule: raw HTML is off (shown as text); entities are not decoded (`&lt;` stays the text "&lt;"); a link is
// kept only for an absolute http:, https: or mailto: URL, with target _blank and rel "noopener noreferrer
// nofollow", any other keeps its words in a span.md-link-removed; a link inside a link keeps only its words;
// bare http(s) URLs become links; images carry whether they sit inside a link (markdown.js never loads one);
// task list items get a disabled checkbox; table alignment becomes align-* classes (no inline style).
// Reference-style links are off: a finished block is rendered once while an answer streams, before a definition
// further down could reach it, so both sides show them as text.

import "./vendor/markdown-it-14.1.0.min.js";

const SAFE_SCHEMES = new Set(["http", "https", "mailto"]);
export const LINK_REL = "noopener noreferrer nofollow";
const LINK_REMOVED_TITLE = "link removed (not an http, https or mailto address)";

// A bare URL: http(s)://, not right after a word character or a slash, at most BARE_URL_MAX characters; then
// trailing punctuation goes back to the sentence and a ")" stays only if it closes a "(". ASCII classes only, as
// in sharing/markdown.py (Python's re.ASCII).
const BARE_URL = /(?<![\w/])https?:\/\/[^ \t\n\r\f\v<>]+/gi;
const BARE_URL_MAX = 2048;
const TRAILING_PUNCTUATION = new Set(".,:;!?'\"*_~");
const TASK = /^\[([ xX])\][ \t]+/;
const ALIGN_STYLE = /text-align:\s*(left|center|right)/;
const BRACKETS = /[[\]]|%5b|%5d/i;
const ASCII_SPACE_AROUND = /^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g;

/** `text` without ASCII white space at either end, as the server strips (ASCII_SPACE in sharing/markdown.py). */
export const stripAsciiSpace = (text) => text.replace(ASCII_SPACE_AROUND, "");

/**
 * `href` when it is an absolute http(s) URL with a host name or a mailto: URL; null for anything else
 * (javascript:, data:, relative, an IPv6 literal…). The same test as safe_url in sharing/markdown.py.
 */
export function safeUrl(href) {
  if (typeof href !== "string") return null;
  const url = stripAsciiSpace(href);
  if (!url || /[\x00-\x20\x7f]/.test(url)) return null;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url);
  if (!scheme || !SAFE_SCHEMES.has(scheme[1].toLowerCase())) return null;
  if (scheme[1].toLowerCase() === "mailto") return url;
  const rest = url.slice(scheme[0].length);
  if (!rest.startsWith("//")) return null;
  const authority = /^[^/?#]*/.exec(rest.slice(2))[0];
  if (BRACKETS.test(authority)) return null; // an IPv6 literal, or junk Python's urlsplit refuses
  const hostname = authority.slice(authority.lastIndexOf("@") + 1).split(":")[0];
  return hostname ? url : null;
}

// ---------------------------------------------------------------- the core rule: links, tasks, tables

function textToken(state, content) {
  const token = new state.Token("text", "", 0);
  token.content = content;
  return token;
}

function trimBareUrl(url) {
  for (;;) {
    const last = url[url.length - 1];
    if (last === undefined) return url;
    const closesNothing = last === ")" && url.split(")").length > url.split("(").length;
    if (!TRAILING_PUNCTUATION.has(last) && !closesNothing) return url;
    url = url.slice(0, -1);
  }
}

/** A text token split into text and link tokens around its bare http(s) URLs. */
function linkify(state, token) {
  const text = token.content;
  const out = [];
  let start = 0;
  for (const match of text.matchAll(BARE_URL)) {
    if (match.index < start) continue;
    let found = match[0];
    if (found.length > BARE_URL_MAX) found = Array.from(found).slice(0, BARE_URL_MAX).join(""); // code points
    const url = trimBareUrl(found);
    if (url.length <= "https://".length - 1) continue;
    if (match.index > start) out.push(textToken(state, text.slice(start, match.index)));
    const opening = new state.Token("link_open", "a", 1);
    opening.attrs = [["href", state.md.normalizeLink(url)]];
    opening.markup = "linkify";
    opening.info = "auto";
    const closing = new state.Token("link_close", "a", -1);
    closing.markup = "linkify";
    closing.info = "auto";
    out.push(opening, textToken(state, url), closing);
    start = match.index + url.length;
  }
  if (!out.length) return [token];
  if (start < text.length) out.push(textToken(state, text.slice(start)));
  return out;
}

function sanitiseInline(state, children) {
  // Bare URLs first, outside links only (a link's words are never a second link).
  const linked = [];
  let depth = 0;
  for (const child of children) {
    if (child.type === "link_open") depth += 1;
    else if (child.type === "link_close") depth -= 1;
    if (child.type === "text" && depth === 0) linked.push(...linkify(state, child));
    else linked.push(child);
  }

  // Then every link is kept only with a safe target, and images learn whether they sit inside a link.
  const out = [];
  const opened = []; // each open link: "a", "span", "text" (an unsafe autolink, shown as written) or "" (dropped)
  for (let child of linked) {
    if (child.type === "link_open") {
      const url = safeUrl(child.attrGet("href"));
      if (opened.length) {
        opened.push(""); // a link inside a link (an autolink in a link's words): its words only
        continue;
      }
      if (url) {
        const title = child.attrGet("title");
        child.attrs = [
          ["href", url],
          ["target", "_blank"],
          ["rel", LINK_REL],
        ];
        if (title) child.attrs.push(["title", title]);
        opened.push("a");
      } else if (child.markup === "autolink") {
        child = textToken(state, "<");
        opened.push("text");
      } else {
        child.tag = "span";
        child.attrs = [
          ["class", "md-link-removed"],
          ["title", LINK_REMOVED_TITLE],
        ];
        opened.push("span");
      }
    } else if (child.type === "link_close") {
      const kind = opened.length ? opened.pop() : "a";
      if (!kind) continue;
      if (kind === "text") child = textToken(state, ">");
      else child.tag = kind;
    } else if (child.type === "image") {
      child.meta = { ...(child.meta || {}), inLink: opened.length > 0 };
    } else if (child.type === "s_open" || child.type === "s_close") {
      child.tag = "del";
    }
    out.push(child);
  }
  return out;
}

/** `- [ ] todo` / `- [x] done`: a disabled checkbox at the start of the item. */
function taskItem(state, tokens, i) {
  const inline = tokens[i];
  if (i < 2 || tokens[i - 1].type !== "paragraph_open" || tokens[i - 2].type !== "list_item_open") return;
  const first = inline.children[0];
  if (!first || first.type !== "text") return;
  const match = TASK.exec(first.content);
  if (!match) return;
  first.content = first.content.slice(match[0].length);
  const box = new state.Token("md_task_box", "input", 0);
  box.meta = { checked: match[1] !== " " };
  inline.children.unshift(box, textToken(state, " "));
  tokens[i - 2].attrSet("class", "md-task");
}

function sanitise(state) {
  const { tokens } = state;
  tokens.forEach((token, i) => {
    if (token.type === "inline" && token.children) {
      taskItem(state, tokens, i);
      token.children = sanitiseInline(state, token.children);
    } else if (token.type === "th_open" || token.type === "td_open") {
      const style = token.attrGet("style");
      if (style === null) return;
      token.attrs = token.attrs.filter(([name]) => name !== "style");
      const match = ALIGN_STYLE.exec(style);
      if (match) token.attrSet("class", `align-${match[1]}`);
    }
  });
}

function makeParser() {
  const md = globalThis.markdownit("commonmark", { html: false, linkify: false, typographer: false, xhtmlOut: false });
  md.enable(["table", "strikethrough"]);
  md.disable(["entity", "reference"]); // `&lt;` stays the text "&lt;"; see the header about references
  // Every link target reaches the core rule, which keeps the safe ones and turns the others into words.
  md.validateLink = () => true;
  // Where markdown-it-py 4.3 fixed what markdown-it 14.1.0 gets wrong, the browser follows the server.
  md.normalizeLink = normalizeLinkWithIPv6(md.normalizeLink, md.utils.lib.mdurl);
  md.inline.ruler.at("backticks", backtick);
  md.inline.State = withCodePointDelimiters(md.inline.State, md.utils);
  md.core.ruler.push("agentweb_sanitise", sanitise);
  return md;
}

// ---------------------------------------------------------------- markdown-it-py's fixes, ported back

/** Each backtick run length → where its last run starts in `src`. */
function lastBacktickRuns(src) {
  const runs = {};
  let pos = 0;
  let start;
  while ((start = src.indexOf("`", pos)) !== -1) {
    pos = start + 1;
    while (pos < src.length && src[pos] === "`") pos += 1;
    runs[pos - start] = start;
  }
  return runs;
}

/**
 * Code spans as markdown-it-py 4.3 finds them: markdown-it 14.1.0 caches the backtick runs it saw from wherever
 * its first scan began, so a scan inside an unclosed `[` hides a later code span (`` [`a` ` `` shows no code).
 * The cache here is built from the whole source; content that is all spaces keeps them (CommonMark).
 */
function backtick(state, silent) {
  const start = state.pos;
  if (state.src[start] !== "`") return false;
  const max = state.posMax;
  let pos = start + 1;
  while (pos < max && state.src[pos] === "`") pos += 1;
  const marker = state.src.slice(start, pos);
  if (!state.backticksScanned) {
    state.backticks = lastBacktickRuns(state.src);
    state.backticksScanned = true;
  }
  if ((state.backticks[marker.length] ?? -1) >= pos) {
    let matchEnd = pos;
    let matchStart;
    while ((matchStart = state.src.indexOf("`", matchEnd)) !== -1 && matchStart < max) {
      matchEnd = matchStart + 1;
      while (matchEnd < state.src.length && state.src[matchEnd] === "`") matchEnd += 1;
      if (matchEnd > max) break; // a run crossing posMax cannot close in this range
      if (matchEnd - matchStart === marker.length) {
        if (!silent) {
          const token = state.push("code_inline", "code", 0);
          token.markup = marker;
          let content = state.src.slice(pos, matchStart).replace(/\n/g, " ");
          if (content.startsWith(" ") && content.endsWith(" ") && /[^ ]/.test(content)) content = content.slice(1, -1);
          token.content = content;
        }
        state.pos = matchEnd;
        return true;
      }
    }
  }
  if (!silent) state.pending += marker;
  state.pos = pos;
  return true;
}

/** The character (a whole surrogate pair, if it is one) before `src[i]`, or a space at the start. */
function characterBefore(src, i) {
  if (i <= 0) return " ";
  const low = src.charCodeAt(i - 1);
  const pair = low >= 0xdc00 && low <= 0xdfff && i >= 2 && /[\uD800-\uDBFF]/.test(src[i - 2]);
  return pair ? src.slice(i - 2, i) : src[i - 1];
}

/**
 * The inline state with `*`, `_` and `~` runs judged on whole characters, as markdown-it-py does: markdown-it
 * 14.1.0 looks at one UTF-16 unit, so a symbol outside the BMP (an emoji) next to `_` is not punctuation there
 * (`😀_a_` stays text instead of emphasis).
 */
function withCodePointDelimiters(State, { isPunctChar, isWhiteSpace, isMdAsciiPunct }) {
  return class extends State {
    scanDelims(start, canSplitWord) {
      const { src, posMax } = this;
      const marker = src.charCodeAt(start);
      const last = characterBefore(src, start);
      let pos = start;
      while (pos < posMax && src.charCodeAt(pos) === marker) pos += 1;
      const next = pos < posMax ? String.fromCodePoint(src.codePointAt(pos)) : " ";
      const lastCode = last.codePointAt(0);
      const nextCode = next.codePointAt(0);
      const lastPunct = isMdAsciiPunct(lastCode) || isPunctChar(last);
      const nextPunct = isMdAsciiPunct(nextCode) || isPunctChar(next);
      const lastSpace = isWhiteSpace(lastCode);
      const nextSpace = isWhiteSpace(nextCode);
      const leftFlanking = !nextSpace && (!nextPunct || lastSpace || lastPunct);
      const rightFlanking = !lastSpace && (!lastPunct || nextSpace || nextPunct);
      return {
        can_open: leftFlanking && (canSplitWord || !rightFlanking || lastPunct),
        can_close: rightFlanking && (canSplitWord || !leftFlanking || nextPunct),
        length: pos - start,
      };
    }
  };
}

/**
 * markdown-it's normalizeLink, except for an IPv6 host: its brackets stay brackets (`http://[::1]/`), as
 * markdown-it-py encodes such a URL part by part, where markdown-it would percent-encode them.
 */
function normalizeLinkWithIPv6(normalizeLink, mdurl) {
  return (url) => {
    const parsed = mdurl.parse(url, true);
    if (!parsed.hostname || !parsed.hostname.includes(":")) return normalizeLink(url);
    const encoded = (part) => part && mdurl.encode(part);
    return mdurl.format({
      ...parsed,
      protocol: encoded(parsed.protocol),
      auth: encoded(parsed.auth),
      hostname: mdurl.encode(parsed.hostname),
      pathname: encoded(parsed.pathname),
      search: encoded(parsed.search),
      hash: encoded(parsed.hash),
    });
  };
}

const parser = makeParser();

/** Markdown source → markdown-it's tokens, after the rule above. */
export function parseMarkdown(src) {
  // U+FEFF (an invisible byte order mark) goes first: markdown-it trims it from a paragraph, markdown-it-py not.
  return parser.parse(src.replace(/\uFEFF/g, ""), {});
}
