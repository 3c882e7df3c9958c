"""The page probe (bench/pageprobe.py) pointed at one Daphne process of the production shape."""

from __future__ import annotations

import subprocess

from ..common import PYTHON, ROOT, clean_env


def page_probe(daphne, cookie: str, seconds: float) -> subprocess.Popen:
    return subprocess.Popen(
        [PYTHON, "-m", "bench.pageprobe", "--url", f"{daphne.url}/", "--cookie", cookie, "--seconds", str(seconds)],
        cwd=ROOT,
        env=clean_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
