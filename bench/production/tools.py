"""The tool of the worker-kill benchmark, loaded into the app's processes with AGENTWEB_TOOL_MODULES.

`hold` writes a line to BENCH_TOOL_LOG as it starts (so the bench counts how often each call ran), then waits
until the file BENCH_TOOL_RELEASE exists: a call is in flight for as long as the bench wants it to be.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Annotated

from tools import tool
from tools.context import ToolContext
from tools.injection import InjectedContext


@tool(timeout=120)
async def hold(key: str, context: Annotated[ToolContext, InjectedContext]) -> str:
    """Wait until the bench lets go.

    Args:
        key: A name for this call.
    """
    line = f"{time.time_ns()} {os.getpid()} {context.thread_id} {context.tool_call_id} {key}\n"
    with open(os.environ["BENCH_TOOL_LOG"], "a") as log:
        log.write(line)
    release = Path(os.environ["BENCH_TOOL_RELEASE"])
    while not release.exists():
        await asyncio.sleep(0.05)
    return f"released {key}"
