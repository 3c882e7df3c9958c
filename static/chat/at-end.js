// The conversation the server rendered, shown at its end from the first paint: a classic script, run by the parser
// right after #messages, before the page's modules (which come later and would show it at its top until then).
// It reads the layout once, where the browser lays out the page for its first paint anyway (docs/ui.md).
(function () {
  const messages = document.getElementById("messages");
  if (messages && messages.querySelector("[data-prerendered], .message")) messages.scrollTop = messages.scrollHeight;
})();
