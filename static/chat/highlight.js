// Syntax highlighting of finished code blocks (markdown.js's .md-code) with the vendored highlight.js, loaded on the
// first block that names a language it knows.
//
// highlight.js returns HTML. It escapes the code it is given (& < > " ' become entities) and writes only
// `<span class="…">` and `</span>` around it, but this module trusts neither claim: it never hands that HTML to the
// browser's parser (no innerHTML, no DOMParser). It reads the string with a grammar of exactly those pieces (a span
// whose class is made of word characters, hyphens and spaces, its end, one of the five entities, plain text) and
// builds spans and Text nodes itself; anything else in the string, or a text that does not add up to the code it
// was given, and the block stays plain text. The code element's text is therefore always the code, to the
// character, whatever the model wrote in it.

const HIGHLIGHT_URL = "./vendor/highlight-11.12.0.min.js";
// Longer blocks stay plain: highlighting is linear but not free, and a huge block is mostly read by copying it.
export const MAX_HIGHLIGHT_CHARS = 100_000;

const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', "#x27": "'" };
const HTML_PIECE = /<span class="([\w -]+)">|<\/span>|&(amp|lt|gt|quot|#x27);|[^<&]+/y;

let library = null; // the import's promise, once asked for

function loadLibrary() {
  library ||= import(HIGHLIGHT_URL).then(
    (module) => module.default,
    () => null, // missing or refused: code stays plain
  );
  return library;
}

/**
 * highlight.js's HTML for `code` as a DocumentFragment of spans and Text nodes, or null when the string holds
 * anything but the pieces it is known to write, or its text is not exactly `code`.
 */
export function fragmentFromHighlight(html, code) {
  const fragment = document.createDocumentFragment();
  const stack = [fragment];
  let text = "";
  HTML_PIECE.lastIndex = 0;
  while (HTML_PIECE.lastIndex < html.length) {
    const match = HTML_PIECE.exec(html);
    if (!match) return null;
    const [piece, className, entity] = match;
    const parent = stack[stack.length - 1];
    if (className !== undefined) {
      const span = document.createElement("span");
      span.className = className;
      parent.append(span);
      stack.push(span);
    } else if (piece === "</span>") {
      if (stack.length === 1) return null;
      stack.pop();
    } else {
      const decoded = entity !== undefined ? ENTITIES[entity] : piece;
      parent.append(decoded);
      text += decoded;
    }
  }
  return stack.length === 1 && text === code ? fragment : null;
}

/** The tag of a fenced block, as markdown.js put it in the code element's class (language-<tag>). */
function languageOf(code) {
  const match = code ? /(?:^|\s)language-(\S+)/.exec(code.className) : null;
  return match ? match[1] : "";
}

function highlightBlock(hljs, block) {
  const code = block.querySelector("pre > code");
  const lang = languageOf(code);
  const language = lang ? hljs.getLanguage(lang) : null;
  // A block no longer on the page (the streaming tail, rendered again since) is not worth the work.
  if (!code || !language || !block.isConnected) return;
  const source = code.textContent;
  if (source.length > MAX_HIGHLIGHT_CHARS) return;
  let html;
  try {
    html = hljs.highlight(source, { language: lang, ignoreIllegals: true }).value;
  } catch {
    return;
  }
  const fragment = fragmentFromHighlight(html, source);
  if (!fragment) return;
  code.replaceChildren(fragment);
  block.dataset.highlighted = "true";
  const label = block.querySelector(".md-code-lang");
  if (label && language.name) label.textContent = language.name;
}

/**
 * Highlights the finished code blocks (.md-code with a language tag) in `root`, now if highlight.js is loaded,
 * else once it is. Blocks without a tag stay plain: guessing the language (highlightAuto) runs every grammar
 * over the code and often guesses wrong on a short snippet.
 */
export function highlightCode(root) {
  const blocks = [...root.querySelectorAll(".md-code:not([data-highlighted])")].filter(
    (block) => languageOf(block.querySelector("pre > code")),
  );
  if (!blocks.length) return;
  loadLibrary().then((hljs) => {
    if (!hljs) return;
    for (const block of blocks) highlightBlock(hljs, block);
  });
}
