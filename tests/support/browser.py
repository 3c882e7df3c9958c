"""Helpers for the Playwright tests that keep the app's Content-Security-Policy intact."""

import os
import time
from pathlib import Path

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


def launch(playwright):
    """Debian's Chromium, started as this machine needs; returns the Browser (the caller closes it)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def connected(page, timeout: float = 15.0) -> None:
    """Wait until the page's script has started and its socket is open: an Enter typed before would stay in the
    textarea. wait_for_selector runs in Playwright's own world, out of reach of the app's CSP."""
    page.wait_for_selector("#connection-state[data-state=connected]", state="attached", timeout=timeout * 1000)


def sign_in(page, base_url: str, username: str, password: str, *, connect: bool = True) -> None:
    """Log in through the login form at `base_url`, then wait for the composer and (unless connect=False: a page
    without JavaScript, or a test that acts before the socket is open) the connected socket."""
    page.goto(f"{base_url}/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("#login-form [type=submit]")
    page.wait_for_selector("#composer-input")
    if connect:
        connected(page)


def screenshot(page, name: str, **options) -> None:
    """With AGENTWEB_SCREENSHOTS=1, the page as it is now, for the docs: docs/screenshots/<name> (options as
    Playwright's page.screenshot takes them, e.g. full_page=True)."""
    if os.environ.get("AGENTWEB_SCREENSHOTS"):
        folder = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
        folder.mkdir(parents=True, exist_ok=True)
        page.wait_for_timeout(300)  # CSS transitions (a tool card's arrow turning) end first
        page.screenshot(path=str(folder / name), **options)


def require_chromium() -> None:
    """At a browser test module's top: skip it, saying why, where Debian's Chromium is not installed (CI installs
    it, and there a missing browser fails instead)."""
    import shutil

    import pytest

    if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
        pytest.skip(
            "Debian's chromium is not installed (apt-get install chromium); CI installs it", allow_module_level=True
        )


def touch_swipe(cdp, x0: int, x1: int, y: int = 400) -> None:
    """A finger drawn sideways from x0 to x1 through Chromium's touch emulation (not events made up in the page)."""
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y}]})
    for step in range(1, 6):
        x = x0 + (x1 - x0) * step / 5
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y}]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
