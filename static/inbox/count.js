// The top bar's count of what waits for the person (templates/base.html renders it; inbox/ serves it). A page with
// the chat socket calls refreshCount() on `inbox.changed`; the inbox page sets it from its own list.

const COUNT_URL = "/inbox/count";
let timer = null;

/** Shows `n` waiting items in the top bar (hidden at 0). */
export function setCount(n) {
  const badge = document.getElementById("inbox-count");
  if (!badge) return;
  const count = Number.isInteger(n) && n > 0 ? n : 0;
  badge.dataset.count = String(count);
  const number = badge.querySelector(".inbox-count-number");
  if (number) number.textContent = String(count);
  badge.hidden = count === 0;
}

/** Reads the count again, once for a burst of events (a step with many waiting calls tells them together). */
export function refreshCount() {
  if (!document.getElementById("inbox-count")) return;
  clearTimeout(timer);
  timer = setTimeout(async () => {
    try {
      const response = await fetch(COUNT_URL, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (!response.ok) return;
      const data = await response.json();
      setCount(data.count);
    } catch {
      // offline: the next event or page load brings it
    }
  }, 150);
}
