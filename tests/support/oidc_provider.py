"""A real OpenID Connect provider for the sign-in tests: node oidc-provider (tests/support/oidc/provider.mjs),
installed from the npm registry on first use into ~/.cache/agentweb/oidc-provider/<lockfile hash>, started per test
module, with accounts a test controls (their groups rewritten between two sign-ins) and the clients it registers.

`through_login_page` walks the provider's own login page over HTTP, as a browser would; the browser test uses
Chromium for the same page."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path
from urllib.parse import urljoin

import httpx

SOURCE = Path(__file__).resolve().parent / "oidc"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentweb" / "oidc-provider"
PASSWORD = "any password: the development login page checks only that the account exists"


def missing_tools() -> str:
    """Why the provider cannot run here ("" when it can)."""
    missing = [tool for tool in ("node", "npm") if not shutil.which(tool)]
    return f"{' and '.join(missing)} not installed (apt-get install nodejs npm)" if missing else ""


def installed() -> Path:
    """The folder holding oidc-provider as package-lock.json pins it, installed now if it is not yet."""
    lock = (SOURCE / "package-lock.json").read_bytes()
    folder = CACHE / hashlib.sha256(lock + (SOURCE / "package.json").read_bytes()).hexdigest()[:16]
    if not (folder / "node_modules" / "oidc-provider" / "package.json").exists():
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(SOURCE / name, folder / name)
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
            cwd=folder,
            check=True,
            capture_output=True,
            timeout=600,
        )
    shutil.copyfile(SOURCE / "provider.mjs", folder / "provider.mjs")  # the script as this checkout has it
    return folder


class OIDCProvider:
    """One provider process. `accounts`: {login: claims}; `clients`: oidc-provider client metadata."""

    def __init__(self, folder: Path, tmp_path: Path, accounts: dict, clients: list[dict]):
        from tests.support.processes import free_port

        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.accounts_file = tmp_path / "oidc-accounts.json"
        self.log_path = tmp_path / "oidc-provider.log"
        self.set_accounts(accounts)
        env = {
            **os.environ,
            "OIDC_PORT": str(self.port),
            "OIDC_ACCOUNTS": str(self.accounts_file),
            "OIDC_CLIENTS": json.dumps(clients),
        }
        self.process = subprocess.Popen(
            ["node", "provider.mjs"], cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self._wait_until_listening()

    def _wait_until_listening(self, timeout: float = 60) -> None:
        lines: list[str] = []
        ready = threading.Event()

        def read() -> None:
            with open(self.log_path, "a") as log:
                for line in self.process.stdout:
                    log.write(line)
                    log.flush()
                    lines.append(line)
                    if line.startswith("LISTENING "):
                        ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(timeout):
            self.stop()
            raise RuntimeError(f"the OpenID Connect provider did not start: {''.join(lines)[-2000:]}")

    def set_accounts(self, accounts: dict) -> None:
        self.accounts = accounts
        self.accounts_file.write_text(json.dumps(accounts))

    def set_groups(self, login: str, groups: list[str]) -> None:
        """The person's groups at the provider, from their next sign-in on."""
        self.set_accounts({**self.accounts, login: {**self.accounts[login], "groups": groups}})

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def through_login_page(browser: httpx.Client, authorize_url: str, login: str, redirect_prefix: str) -> str:
    """Follow `authorize_url` at the provider, signing in as `login` on its own login page; returns the address it
    sends the person back to (starting with `redirect_prefix`, holding the code and the state), not followed."""
    url = authorize_url
    for _ in range(12):
        if url.startswith(redirect_prefix):
            return url
        response = browser.get(url)
        if response.status_code in (302, 303):
            url = urljoin(url, response.headers["location"])
            continue
        form = re.search(r'<form[^>]*action="([^"]+)"', response.text)
        if response.status_code != 200 or not form:
            raise AssertionError(f"the provider's page at {url} is not its login page: {response.text[:500]}")
        response = browser.post(
            urljoin(url, form.group(1).replace("&amp;", "&")),
            data={"prompt": "login", "login": login, "password": PASSWORD},
        )
        if response.status_code not in (302, 303):
            raise AssertionError(f"the provider refused signing in as {login}: {response.text[:500]}")
        url = urljoin(url, response.headers["location"])
    raise AssertionError("the provider never sent the person back")
