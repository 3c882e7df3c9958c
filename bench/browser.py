"""thread-load and stream-render: the chat page in headless Chromium (Debian's /usr/bin/chromium, driven by
Playwright), logged in with a session cookie of the bench user."""

from __future__ import annotations

import asyncio
import json
import shutil
import time

from .app import BenchApp, Client, new_id, seed_thread, server_log
from .common import Result, median, percentile
from .relay import floor
from .tokens import STAMP_LENGTH, TIME_MOD, Spec, b36, decode, markdown_tokens

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class NoBrowser(Exception):
    pass


async def launch():
    if not shutil.which(CHROMIUM):
        raise NoBrowser(f"{CHROMIUM} is not installed (apt-get install chromium)")
    from playwright.async_api import async_playwright

    playwright = await async_playwright().start()
    browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    return playwright, browser


async def logged_in_context(browser, app: BenchApp):
    # bypass_csp: the app's Content-Security-Policy forbids eval, which Playwright's wait_for_function uses.
    context = await browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    name, value = app.cookie.split("=", 1)
    await context.add_cookies([{"name": name, "value": value, "url": app.daphne.url}])
    return context


# --- thread-load ---------------------------------------------------------------------------------------

# A thread's page shows its newest page of messages (docs/protocol.md, paged snapshots): rendered once they are all
# in the DOM, or once the live view has put the "load earlier" bar above the newest page it was sent.
RENDERED = """(n) => {
    const shown = document.querySelectorAll('#messages .message').length;
    const paged = shown > 0 && document.querySelector('#messages .earlier-pages') !== null;
    if (n === 0 ? performance.getEntriesByName('first-contentful-paint').length > 0 : shown >= n || paged) {
        if (!window.__renderedAt) window.__renderedAt = performance.now();
        return true;
    }
    return false;
}"""

METRICS = """() => {
    const fcp = performance.getEntriesByName('first-contentful-paint')[0];
    const nav = performance.getEntriesByType('navigation')[0];
    return {
        fcp: fcp ? fcp.startTime : null,
        rendered: window.__renderedAt || null,
        response_end: nav ? nav.responseEnd : null,
        dom_content_loaded: nav ? nav.domContentLoadedEventEnd : null,
        html_bytes: nav ? nav.transferSize : null,
        messages: document.querySelectorAll('#messages .message').length,
    };
}"""


async def load_once(context, url: str, expected: int) -> dict:
    page = await context.new_page()
    try:
        await page.goto(url, wait_until="load")
        await page.wait_for_function(RENDERED, arg=expected, polling="raf", timeout=60_000)
        # One more frame, so the FCP entry of a page that painted just now is in.
        await page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))")
        return await page.evaluate(METRICS)
    finally:
        await page.close()


async def thread_load(app: BenchApp, result: Result, smoke: bool) -> None:
    small, large = (10, 100) if smoke else (100, 1000)
    repeat = 1 if smoke else 7
    user_id = app.users[0][0]
    small_id = await asyncio.to_thread(seed_thread, user_id, small)
    large_id = await asyncio.to_thread(seed_thread, user_id, large)
    pages = {
        "home": (f"{app.daphne.url}/", 0),
        small: (f"{app.daphne.url}/t/{small_id}/", small),
        large: (f"{app.daphne.url}/t/{large_id}/", large),
    }
    playwright, browser = await launch()
    try:
        context = await logged_in_context(browser, app)
        for url, expected in pages.values():  # warm: static files cached, code paths run once
            await load_once(context, url, expected)
        samples: dict = {key: [] for key in pages}
        for _ in range(repeat):
            for key, (url, expected) in pages.items():  # interleaved, so a burst of load hits all alike
                samples[key].append(await load_once(context, url, expected))
        await context.close()
    finally:
        await browser.close()
        await playwright.stop()

    def med(key, field):
        return median([s[field] for s in samples[key] if s[field] is not None])

    result.details.update(samples={str(k): v for k, v in samples.items()}, repeat=repeat)
    fcp_home, fcp_small, fcp_large = med("home", "fcp"), med(small, "fcp"), med(large, "fcp")
    ren_small, ren_large = med(small, "rendered"), med(large, "rendered")
    shown = min(s["messages"] for s in samples[large])
    result.add(
        f"first contentful paint, {large:,} messages",
        fcp_large,
        "ms",
        target="≤ 300 ms",
        floor=fcp_home,
        passed=fcp_large <= 300,
        note=f"median of {repeat}; floor: the same page without a thread (/)",
    )
    result.add(
        f"FCP, {large:,} vs {small:,} messages",
        fcp_large,
        "ms",
        target="≤ 1.3× the small thread",
        floor=fcp_small,
        ratio=fcp_large / fcp_small if fcp_small else None,
        passed=bool(fcp_small) and fcp_large <= 1.3 * fcp_small,
        note="floor: the small thread's FCP",
    )
    result.add(
        f"newest page rendered, {large:,} messages",
        ren_large,
        "ms",
        floor=ren_small,
        note=f"from navigation start until the snapshot's newest page ({shown} message elements) is in the DOM (a "
        f"frame later), vs {small:,}; earlier pages load as the person scrolls up (no target)",
    )


# --- stream-render -------------------------------------------------------------------------------------

INSTRUMENT = r"""(cfg) => {
    const b = window.__bench = {frames: [], loaf: [], loafSupported: true, longtasks: [], lags: [],
                                done: false, endAt: null, mutations: 0, lengths: []};
    let last = null;
    const tick = (t) => { if (last !== null) b.frames.push([t, t - last]); last = t;
                          if (!b.stop) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
    try {
        new PerformanceObserver((list) => { for (const e of list.getEntries()) {
            // style and layout: from styleAndLayoutStart to the frame's end; scripts: their own durations
            const layout = e.styleAndLayoutStart ? e.startTime + e.duration - e.styleAndLayoutStart : 0;
            const scripts = (e.scripts || []).reduce((sum, s) => sum + s.duration, 0);
            b.loaf.push([e.startTime, e.duration, e.blockingDuration || 0, layout, scripts]);
        } })
            .observe({type: 'long-animation-frame', buffered: false});
    } catch (e) { b.loafSupported = false; }
    try {
        new PerformanceObserver((list) => { for (const e of list.getEntries()) b.longtasks.push(e.duration); })
            .observe({type: 'longtask'});
    } catch (e) {}
    // The answer is rendered as Markdown (finished blocks kept, the open tail rebuilt once a frame): the
    // newest stamps are in the last few blocks. Each stamp is logged once, when it is first seen.
    const stamp = /§([0-9a-z]{4})\.([0-9a-z]{7})/g;
    let lastSeq = -1;
    const observer = new MutationObserver(() => {
        b.mutations += 1;
        const texts = document.querySelectorAll('#messages .message.assistant .message-text');
        if (!texts.length) return;
        const box = texts[texts.length - 1];
        let tail = '', child = box.lastElementChild;
        for (let k = 0; child && k < 4; k += 1, child = child.previousElementSibling) tail = child.textContent + tail;
        if (!box.lastElementChild) tail = box.textContent;
        const now = performance.timeOrigin + performance.now();
        let match;
        stamp.lastIndex = 0;
        while ((match = stamp.exec(tail))) {
            const seq = parseInt(match[1], 36);
            if (seq > lastSeq) {
                lastSeq = seq;
                b.lags.push([now, match[2]]);
                b.lengths.push([now - performance.timeOrigin, seq]);
            }
        }
        if (lastSeq >= cfg.lastSeq && b.endSeen === undefined) {
            b.endSeen = now;
            // After the frame that shows it: the end is on screen.
            requestAnimationFrame(() => setTimeout(() => {
                b.endAt = performance.timeOrigin + performance.now(); b.done = true; }, 0));
        }
    });
    observer.observe(document.getElementById('messages'), {subtree: true, childList: true, characterData: true});
}"""


STATE = """() => {
    const texts = document.querySelectorAll('#messages .message.assistant .message-text');
    const box = texts.length ? texts[texts.length - 1] : null;
    return {assistant_messages: texts.length, length: box ? box.textContent.length : null,
            tail: box ? box.textContent.slice(-60) : null, mutations: window.__bench.mutations,
            connection: document.querySelector('#connection-state').dataset.state};
}"""


def loaf_by_length(data: dict, started: float, tokens: int) -> list[dict]:
    """Long animation frames (over 50 ms) in each quarter of the stream, by how far the answer on the page had
    got when they began: whether their cost grows with the text already shown."""
    lengths = data["lengths"]  # (page time, newest stamp's token number shown)

    def length_at(t: float) -> int:
        known = [n for when, n in lengths if when <= t]
        return known[-1] if known else 0

    quarters = []
    for q in range(4):
        low, high = tokens * q / 4, tokens * (q + 1) / 4
        inside = [
            e
            for e in data["loaf"]
            if e[0] >= started and (low <= length_at(e[0]) < high or (q == 3 and length_at(e[0]) >= high))
        ]
        long = [e for e in inside if e[1] > 50]
        quarters.append(
            {
                "tokens": f"{low:.0f}-{high:.0f}",
                "frames_over_50": len(long),
                "max_ms": max((e[1] for e in inside), default=None),
                "layout_share": sum(e[3] for e in long) / sum(e[1] for e in long) if long else None,
                "script_share": sum(e[4] for e in long) / sum(e[1] for e in long) if long else None,
            }
        )
    return quarters


async def watch(app: BenchApp, thread: str, last_seq: int) -> int | None:
    """Subscribe to `thread` over a websocket of the same user; the time.time_ns when stamp `last_seq` came."""
    async with Client(app) as client:
        await client.ws.send(json.dumps({"type": "thread.subscribe", "thread": thread, "after_seq": None}))
        while True:
            event = json.loads(await client.ws.recv())
            now = time.time_ns()
            kind = event.get("type")
            if kind == "message.delta" and any(s == last_seq for s, _ in decode(event.get("text", ""), 0)):
                return now
            if kind in ("message.completed", "thread.snapshot") and f"§{b36(last_seq, 4)}." in json.dumps(event):
                return now  # it came in a whole text, not a delta
            if kind in ("run.completed", "run.failed", "run.cancelled"):
                return None


async def clock_offset_ms(page) -> float:
    """Browser epoch time minus this process's, from the round trip with the least delay."""
    best = None
    for _ in range(7):
        t0 = time.time_ns()
        browser_ms = await page.evaluate("() => performance.timeOrigin + performance.now()")
        t1 = time.time_ns()
        sample = (t1 - t0, browser_ms - (t0 + t1) / 2e6)
        best = sample if best is None or sample[0] < best[0] else best
    return best[1]


async def stream_render(app: BenchApp, result: Result, smoke: bool) -> None:
    tokens, rate = (1500, 3000) if smoke else (40_000, 3000)
    spec = Spec(id=new_id("render"), tokens=tokens, rate=rate, kind="markdown", stamp_every=50)
    final_length = sum(STAMP_LENGTH if t is None else len(t) for t in markdown_tokens(tokens, spec.stamp_every))
    playwright, browser = await launch()
    try:
        context = await logged_in_context(browser, app)
        page = await context.new_page()
        await page.goto(f"{app.daphne.url}/", wait_until="load")
        await page.wait_for_function("document.querySelector('#connection-state').dataset.state === 'connected'")
        offset = await clock_offset_ms(page)
        await page.evaluate(INSTRUMENT, {"lastSeq": tokens - 1})
        await page.wait_for_timeout(1000)  # idle frames: the floor of the frame figures
        idle = await page.evaluate("() => window.__bench.frames.map(f => f[1])")
        started = await page.evaluate("() => performance.now()")
        await page.fill("#composer-input", spec.message())
        await page.press("#composer-input", "Enter")
        # A websocket client on the same thread sees the same events without rendering them: its lag is the
        # app's relay, the rest of the browser's lag is the page's own work.
        await page.wait_for_url("**/t/*/", timeout=30_000)
        watcher = asyncio.create_task(watch(app, page.url.rstrip("/").rsplit("/", 1)[1], tokens - 1))
        try:
            await page.wait_for_function("window.__bench.done", timeout=(tokens / rate + 120) * 1000, polling=100)
        except Exception as error:
            state = await page.evaluate(STATE)
            raise RuntimeError(f"the last token ({tokens - 1}) never showed: {state}") from error
        await page.wait_for_function(
            "document.querySelector('#stop').hidden && !document.querySelector('.typing')", timeout=60_000
        )
        data = await page.evaluate("() => { window.__bench.stop = true; return window.__bench; }")
        ws_last_ns = await asyncio.wait_for(watcher, 60)
        await context.close()
    finally:
        await browser.close()
        await playwright.stop()

    log = next((r for r in await server_log(app.model_url, spec.id) if r.get("t_last_token")), None)
    if log is None:
        raise RuntimeError("the model server has no record of the stream")
    end_lag = data["endAt"] - offset - log["t_last_token"] / 1e6
    lags = [(int((t_ms - offset) * 1000) - int(code, 36)) % TIME_MOD / 1000 for t_ms, code in data["lags"]]
    ws_lag = (ws_last_ns - log["t_last_token"]) / 1e6 if ws_last_ns else None
    frames = [d for t, d in data["frames"] if t >= started]
    loaf = [d for t, d, *_ in data["loaf"] if t >= started]
    growth = loaf_by_length(data, started, tokens)
    longest = max(loaf) if loaf else None
    (floor_run,) = floor(app, Spec(tokens=tokens, rate=rate, kind="markdown", stamp_every=50))
    floor_lag = floor_run["end_lag_us"][0] / 1000
    result.details.update(
        tokens=tokens,
        rate=rate,
        text_length=final_length,
        clock_offset_ms=offset,
        mutations=data["mutations"],
        lag_ms={
            "p50": percentile(lags, 50),
            "p90": percentile(lags, 90),
            "p99": percentile(lags, 99),
            "max": max(lags) if lags else None,
            "n": len(lags),
        },
        frames_ms={
            "n": len(frames),
            "p50": percentile(frames, 50),
            "p99": percentile(frames, 99),
            "max": max(frames) if frames else None,
            "over_50": sum(1 for f in frames if f > 50),
        },
        idle_frames_max_ms=max(idle) if idle else None,
        loaf_supported=data["loafSupported"],
        loaf_over_50=sum(1 for d in loaf if d > 50),
        loaf_max_ms=longest,
        long_frames_by_text_length=growth,
        longtasks=len(data["longtasks"]),
        longtask_max_ms=max(data["longtasks"]) if data["longtasks"] else None,
        floor_end_lag_ms=floor_lag,
        websocket_client_end_lag_ms=ws_lag,
    )
    result.add(
        "render lag at the end",
        end_lag,
        "ms",
        target="≤ 100 ms",
        floor=floor_lag,
        passed=end_lag <= 100,
        note=f"server's last token → painted; a websocket client on the same thread got it after "
        f"{ws_lag:.0f} ms (the relay's part); lag during the stream p50 {percentile(lags, 50):.0f} ms, "
        f"p99 {percentile(lags, 99):.0f} ms; floor: a bare httpx reader's end lag",
    )
    # Long-animation-frame entries exist only for frames over 50 ms; without any, the longest rAF gap says
    # how long the longest frame was.
    frame_max = longest if longest is not None else (max(frames) if frames else None)
    result.add(
        "longest frame while streaming",
        frame_max,
        "ms",
        target="no frame over 50 ms",
        floor=max(idle) if idle else None,
        passed=frame_max is not None and frame_max <= 50,
        note=f"{sum(1 for d in loaf if d > 50)} long animation frames over 50 ms, "
        f"{sum(1 for f in frames if f > 50)} rAF gaps over 50 ms (longest {max(frames) if frames else 0:.0f} ms) "
        f"in {len(frames)} frames; floor: longest rAF gap of the idle page",
    )
