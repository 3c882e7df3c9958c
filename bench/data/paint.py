"""The heavy chat in Chromium (issue 42): what a person sees, not what the server spends. The app served as `make run`
serves it (agentweb.serve, a process of its own on the generated database), Debian's Chromium driven by Playwright,
signed in with a session cookie of the heavy person.

- `first_paint`: navigation to the heavy chat, `repeat` times (after one warm load: static files cached, as for a
  person who has been there before), each in a fresh tab. Per load: first contentful paint (the paint timeline's
  entry) and the newest message readable: the last message of the conversation in the DOM with its text, inside
  the visible part of the conversation, and a frame painted since (timed in the page, from navigation start).
- `scroll_up`: once, scrolling to the top of the conversation every frame (as fast as a person flinging up can)
  until its first message is there, readable at the top: the earlier pages read (GET /t/<id>/messages?before=),
  the messages they brought, and the seconds it took.

`unavailable()` says why none of it can run (no Chromium, no playwright); measure.py then records that reason."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ..common import ROOT, free_port, stop, wait_for_port

#: The longest the scroll to the first message may take: past it, what was reached is reported.
SCROLL_TIMEOUT_S = 900

# Installed before the page's own scripts: the paint timeline's FCP entry, and, every frame until it is true, whether
# the newest message is readable; its time is taken after that frame has painted (a task queued from its rAF).
WATCH = """(want) => {
  const b = window.__paint = {fcp: null, newestAt: null, shown: null};
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.name === 'first-contentful-paint') b.fcp = e.startTime;
  }).observe({type: 'paint', buffered: true});
  const check = () => {
    const box = document.getElementById('messages');
    const all = box ? box.querySelectorAll('.message') : [];
    const last = all.length ? all[all.length - 1] : null;
    if (last && last.textContent.includes(want)) {
      const r = last.getBoundingClientRect(), c = box.getBoundingClientRect();
      if (r.height > 0 && r.top < c.bottom && r.bottom > c.top) {
        b.shown = all.length;
        setTimeout(() => { b.newestAt = performance.now(); }, 0);
        return;
      }
    }
    requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
}"""

READY = "() => window.__paint && window.__paint.newestAt !== null && window.__paint.fcp !== null"

# Scroll to the top every frame until the conversation's first message is the first one there, readable at the top.
SCROLL = """(want) => {
  const s = window.__scroll = {started: performance.now(), doneAt: null};
  const step = () => {
    const box = document.getElementById('messages');
    const first = box.querySelector('.message');
    const more = box.querySelector('.earlier-pages-load:not([hidden])');
    if (!more && first && first.textContent.includes(want)) {
      const r = first.getBoundingClientRect(), c = box.getBoundingClientRect();
      if (r.height > 0 && r.top < c.bottom && r.bottom > c.top) {
        s.shown = box.querySelectorAll('.message').length;
        setTimeout(() => { s.doneAt = performance.now(); }, 0);
        return;
      }
    }
    box.scrollTop = 0;
    requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
}"""


def unavailable() -> str | None:
    """Why the browser figures cannot be measured here, or None."""
    from tests.support.browser import CHROMIUM

    if not shutil.which(CHROMIUM):
        return f"{CHROMIUM} is not installed (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -r requirements-dev.txt)"
    return None


def snippet(text: str, words: int = 6) -> str:
    """The first words of a message's text, as the page shows them (the generated texts are plain words)."""
    return " ".join(text.split()[:words])


class Server:
    """The app on this process's database (DATABASE_URL and the rest from the environment), as `make run` serves it."""

    def __init__(self, log_dir: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"paint-daphne-{self.port}.log"
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Server:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "AGENTWEB_LOG_LEVEL": "WARNING"}
        command = [sys.executable, "-m", "agentweb.serve", "-b", "127.0.0.1", "-p", str(self.port)]
        with open(self.log_path, "a") as log:
            self.process = subprocess.Popen(
                [*command, "agentweb.asgi:application"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        wait_for_port(self.port, self.process, timeout=120)
        return self

    def __exit__(self, *exc) -> None:
        if self.process is not None:
            stop(self.process)

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def measure(*, cookie: str, thread_id: str, newest: str, first: str, expected: int, snapshot: int, repeat: int) -> dict:
    """Chromium's figures for the heavy chat: each load's (ms from navigation start: `fcp`, `newest`, `response_end`
    the HTML received; `shown` message elements), and the scroll up. `cookie`: "name=value" of the heavy person's
    session; `newest`, `first`: words of its newest and first message; `expected`: the messages its branch shows (user
    and assistant), of which the snapshot carries `snapshot`."""
    from playwright.sync_api import sync_playwright

    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS

    log_dir = Path(os.environ.get("AGENTWEB_TEST_LOG_DIR") or ROOT / "bench" / "results")
    with Server(log_dir) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            # bypass_csp: the app's Content-Security-Policy forbids eval, which wait_for_function uses.
            context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
            name, value = cookie.split("=", 1)
            context.add_cookies([{"name": name, "value": value, "url": server.url}])
            url = f"{server.url}/t/{thread_id}/"
            try:
                loads = [_load(context, url, newest) for _ in range(repeat + 1)][1:]  # the first warms
                scroll = _scroll_up(context, url, newest, first, expected, snapshot)
            except Exception as error:
                raise RuntimeError(f"{error}\nthe app's log ends with:\n{server.log_tail()}") from error
            context.close()
        finally:
            browser.close()
    return {"loads": loads, "scroll_up": scroll}


def _load(context, url: str, newest: str) -> dict:
    page = context.new_page()
    try:
        page.add_init_script(f"({WATCH})({_js(newest)})")
        page.goto(url, wait_until="commit")
        page.wait_for_function(READY, timeout=60_000, polling="raf")
        return page.evaluate(
            """() => ({fcp: window.__paint.fcp, newest: window.__paint.newestAt, shown: window.__paint.shown,
                       response_end: performance.getEntriesByType('navigation')[0].responseEnd})"""
        )
    finally:
        page.close()


def _scroll_up(context, url: str, newest: str, first: str, expected: int, snapshot: int) -> dict:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = context.new_page()
    responses, arrived = [], []

    def page_read(response) -> None:
        if "/messages?before=" in response.url:
            responses.append(response)
            arrived.append(time.perf_counter())

    page.on("response", page_read)
    try:
        page.add_init_script(f"({WATCH})({_js(newest)})")
        page.goto(url, wait_until="commit")
        page.wait_for_function(READY, timeout=60_000, polling="raf")
        started = time.perf_counter()
        page.evaluate(f"({SCROLL})({_js(first)})")
        reached = True
        try:
            done = "() => window.__scroll.doneAt !== null"
            page.wait_for_function(done, timeout=SCROLL_TIMEOUT_S * 1000, polling=250)
        except PlaywrightTimeout:  # what was reached is the finding
            reached = False
        seconds = time.perf_counter() - started
        state = page.evaluate(
            """() => ({ms: window.__scroll.doneAt === null ? null : window.__scroll.doneAt - window.__scroll.started,
                       shown: document.querySelectorAll('#messages .message').length})"""
        )
        ids, statuses = set(), {}
        for response in responses:
            statuses[response.status] = statuses.get(response.status, 0) + 1
            if response.ok:
                ids.update(m["id"] for m in response.json()["messages"])
    finally:
        page.close()
    loaded = snapshot + len(ids)
    # Seconds a page of the first ten and of the last ten: whether a page costs more as the conversation above grows.
    marks = [started, *arrived]
    first, last = marks[:11], marks[-11:]
    return {
        "reached_first_message": reached,
        "s": round(state["ms"] / 1000 if state["ms"] is not None else seconds, 2),
        "pages": len(responses),
        "statuses": {str(k): v for k, v in statuses.items()},
        "messages_loaded": loaded,
        "messages_expected": expected,
        "all_readable": reached and loaded == expected,
        "message_elements": state["shown"],
        "s_per_page_first_10": round((first[-1] - first[0]) / max(1, len(first) - 1), 3),
        "s_per_page_last_10": round((last[-1] - last[0]) / max(1, len(last) - 1), 3),
    }


def _js(text: str) -> str:
    import json

    return json.dumps(text)
