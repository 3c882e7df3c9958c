// Small DOM helpers shared by the view modules. Text always goes in through textContent.

/** Creates an element with optional class names and text. */
export function el(tag, className = "", text = null) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== null && text !== undefined) node.textContent = String(text);
  return node;
}

/** A <button type="button"> that calls `onClick`. */
export function button(label, className, onClick) {
  const node = el("button", className, label);
  node.type = "button";
  if (onClick) node.addEventListener("click", onClick);
  return node;
}

/** Arguments or results as readable text: strings as they are, anything else as indented JSON. */
export function prettyJson(value) {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
