"""A process's MCP connections end with it: no stdio server is left behind."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

PROGRAM = """
import sys, time
from tests.support.mcp_servers.running import stdio_config
from tools.mcp.manager import McpManager

manager = McpManager()
manager.configure([stdio_config("srv", sys.argv[1])])
deadline = time.monotonic() + 60
while manager.state("srv").status != "connected" and time.monotonic() < deadline:
    time.sleep(0.05)
print(manager.state("srv").status, flush=True)
"""


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def test_the_stdio_servers_process_ends_when_the_app_process_exits(tmp_path):
    record = tmp_path / "record.txt"
    app = subprocess.Popen([sys.executable, "-c", PROGRAM, str(record)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert app.stdout.readline().strip() == "connected"
    servers = children_of(app.pid)
    assert servers, "the stdio server runs as a child of the app's process"
    app.wait(timeout=30)
    # Already gone as the app's process ends (its atexit closed the connection and waited for the server), not
    # some time later when the server happens to notice that its input closed.
    assert not [pid for pid in servers if Path(f"/proc/{pid}").exists() and _not_zombie(pid)]


def _not_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
