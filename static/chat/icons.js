// Inline SVG icons (no icon font, no external file: the CSP stays as it is). Each is drawn in currentColor on a
// 24-unit grid; the templates include the same drawings from templates/icons/. An icon is decoration
// (aria-hidden): the button it sits in carries its name in text or aria-label.

const SVG = "http://www.w3.org/2000/svg";

export const ICONS = {
  menu: ["M4 6h16", "M4 12h16", "M4 18h16"],
  tools: ["M14.7 6.3a4 4 0 0 0-5.4 5.1L4 16.7 7.3 20l5.3-5.3a4 4 0 0 0 5.1-5.4l-2.6 2.6-2.3-.7-.7-2.3z"],
  share: ["M12 3v12", "M7 8l5-5 5 5", "M5 13v6a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2v-6"],
  download: ["M12 3v12", "M7 10l5 5 5-5", "M5 21h14"],
  settings: ["M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6z", "M19 12a7 7 0 0 0-.1-1.2l2-1.6-2-3.4-2.4 1a7 7 0 0 0-2-1.2L14 3h-4l-.5 2.6a7 7 0 0 0-2 1.2l-2.4-1-2 3.4 2 1.6a7 7 0 0 0 0 2.4l-2 1.6 2 3.4 2.4-1a7 7 0 0 0 2 1.2L10 21h4l.5-2.6a7 7 0 0 0 2-1.2l2.4 1 2-3.4-2-1.6c.1-.4.1-.8.1-1.2z"],
  pin: ["M9 4h6", "M10 4v6l-3 4h10l-3-4V4", "M12 14v7"],
  archive: ["M3 4h18v4H3z", "M5 8v12h14V8", "M10 12h4"],
  unarchive: ["M3 4h18v4H3z", "M5 8v12h14V8", "M12 18v-6", "M9.5 14.5 12 12l2.5 2.5"],
  edit: ["M4 20h4L19 9l-4-4L4 16z", "M13 7l4 4"],
  trash: ["M4 7h16", "M9 7V4h6v3", "M6 7l1 13h10l1-13"],
  close: ["M6 6l12 12", "M18 6 6 18"],
  chevron: ["M6 9l6 6 6-6"],
  check: ["M5 12l5 5 9-10"],
  file: ["M14 3H6a1 1 0 0 0-1 1v16a1 1 0 0 0 1 1h12a1 1 0 0 0 1-1V8z", "M14 3v5h5", "M9 13h6", "M9 17h6"],
  copy: ["M9 9h11v11H9z", "M5 15H4V4h11v1"],
  regenerate: ["M20 11a8 8 0 0 0-14.8-4", "M4 4v4h4", "M4 13a8 8 0 0 0 14.8 4", "M20 20v-4h-4"],
  "arrow-down": ["M12 5v14", "M6 13l6 6 6-6"],
  person: ["M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8z", "M4 21a8 8 0 0 1 16 0"],
  bot: ["M5 8h14v11H5z", "M12 4v4", "M9 13h.01", "M15 13h.01", "M9 16h6"],
  attach: ["M21.4 11.1l-9.2 9.2a6 6 0 0 1-8.5-8.5l9.2-9.2a4 4 0 0 1 5.7 5.7l-9.2 9.2a2 2 0 0 1-2.8-2.8l8.5-8.5"],
};

/** An <svg> of icon `name`, hidden from assistive technology. */
export function icon(name, className = "icon") {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", className);
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  for (const d of ICONS[name] || []) {
    const path = document.createElementNS(SVG, "path");
    path.setAttribute("d", d);
    svg.append(path);
  }
  return svg;
}

/**
 * An icon-only button: the icon shows, its name stays in the button's text for screen readers (visually hidden, on
 * every screen size), and `tooltip` (or the name) is its tooltip.
 */
export function iconButton(name, label, className, onClick, tooltip = "") {
  const node = document.createElement("button");
  node.type = "button";
  node.className = `${className} icon-only`;
  const text = document.createElement("span");
  text.className = "visually-hidden icon-only-label";
  text.textContent = label;
  node.append(icon(name), text);
  node.title = tooltip || label;
  if (onClick) node.addEventListener("click", onClick);
  return node;
}
