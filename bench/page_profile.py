"""Where the chat page's main thread spends a streamed answer: Chromium's sampling profiler (over CDP) while the
page renders the stream-render benchmark's answer (40,000 tokens of Markdown at 3,000 tokens/s by default).

    python -m bench.page_profile [--tokens 40000] [--rate 3000]

prints the functions with the most self time, then per quarter of the stream the self time of the page's
own scripts and of "(program)" (Chromium's native work outside JavaScript: style, layout, paint). A
function that reads a layout property (scrollHeight, offsetHeight…) after the DOM changed carries the
layout it forces in its self time.
"""

from __future__ import annotations

import argparse
import asyncio
import collections

from .app import BenchApp, new_id
from .browser import launch, logged_in_context
from .common import bench_model_server
from .tokens import Spec


async def profile(app: BenchApp, tokens: int, rate: int) -> None:
    playwright, browser = await launch()
    try:
        context = await logged_in_context(browser, app)
        page = await context.new_page()
        await page.goto(f"{app.daphne.url}/", wait_until="load")
        await page.wait_for_function("document.querySelector('#connection-state').dataset.state === 'connected'")
        cdp = await context.new_cdp_session(page)
        await cdp.send("Profiler.enable")
        await cdp.send("Profiler.setSamplingInterval", {"interval": 500})
        await cdp.send("Profiler.start")
        spec = Spec(id=new_id("profile"), tokens=tokens, rate=rate, kind="markdown", stamp_every=50)
        await page.fill("#composer-input", spec.message())
        await page.press("#composer-input", "Enter")
        await page.wait_for_function("!document.querySelector('#stop').hidden", timeout=30_000)
        await page.wait_for_function(
            "document.querySelector('#stop').hidden && !document.querySelector('.typing')",
            timeout=(tokens / rate + 120) * 1000,
            polling=200,
        )
        result = (await cdp.send("Profiler.stop"))["profile"]
    finally:
        await browser.close()
        await playwright.stop()

    nodes = {n["id"]: n["callFrame"] for n in result["nodes"]}

    def name(frame: dict) -> str:
        where = frame["url"].rsplit("/", 1)[-1]
        line = frame.get("lineNumber", -1)
        return f"{where}:{line + 1} {frame['functionName'] or '(anonymous)'}" if where else frame["functionName"]

    self_time: collections.Counter = collections.Counter()
    samples = []
    when = result["startTime"]
    for node_id, delta in zip(result["samples"], result["timeDeltas"], strict=True):
        when += delta
        self_time[name(nodes[node_id])] += delta
        samples.append((when, nodes[node_id], delta))
    total = sum(self_time.values())
    print(f"{total / 1e6:.1f} s of samples; most self time:")
    for key, micros in self_time.most_common(15):
        print(f"  {micros / 1000:9.1f} ms {100 * micros / total:5.1f} %  {key}")
    span = result["endTime"] - result["startTime"]
    for quarter in range(4):
        low, high = result["startTime"] + span * quarter / 4, result["startTime"] + span * (quarter + 1) / 4
        inside = [(frame, delta) for t, frame, delta in samples if low <= t < high]
        own = sum(d for f, d in inside if "/static/" in f["url"])
        native = sum(d for f, d in inside if f["functionName"] == "(program)")
        print(f"  quarter {quarter + 1}: page scripts {own / 1000:7.0f} ms, (program) {native / 1000:7.0f} ms")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=40_000)
    parser.add_argument("--rate", type=int, default=3000)
    args = parser.parse_args(argv)
    with bench_model_server() as (model_url, _), BenchApp(model_url, users=1) as app:
        asyncio.run(profile(app, args.tokens, args.rate))


if __name__ == "__main__":
    main()
