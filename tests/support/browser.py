"""Helpers for the Playwright tests that keep the app's Content-Security-Policy intact."""

import time

# Debian's Chromium (Playwright cannot download its own here), started as this machine needs: no sandbox as
# root, and none of the background connections its closed network would refuse.
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


def wait_until(page, expression: str, timeout: float = 15.0) -> None:
    """Poll a JavaScript expression until it is truthy. Playwright's wait_for_function evaluates its string
    inside the page, which the app's CSP (no eval) forbids; page.evaluate goes through DevTools instead."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(f"() => Boolean({expression})"):
        if time.monotonic() > deadline:
            raise TimeoutError(f"still false after {timeout} s: {expression}")
        page.wait_for_timeout(50)
