"""A served process is tuned once the app is loaded and before its first connection (agentweb/tuning.py): what
start-up loaded is out of the garbage collector's reach, and threads switch every millisecond."""

import json
import subprocess
import sys

from tests.test_settings import ROOT

# Daphne's server as `python -m agentweb.serve` runs it, on a free port; once ready it reports and stops.
SERVE = """
import gc, json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentweb.settings")
import django
django.setup()
from twisted.internet import reactor
from agentweb.serve import AppServer

async def app(scope, receive, send):
    pass

def ready():
    print(json.dumps({"frozen": gc.get_freeze_count(), "switch_interval": sys.getswitchinterval()}))
    reactor.callLater(0, reactor.stop)

AppServer(application=app, endpoints=["tcp:port=0:interface=127.0.0.1"], ready_callable=ready).run()
"""


def served_process_state() -> dict:
    done = subprocess.run([sys.executable, "-c", SERVE], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_served_process_freezes_what_start_up_loaded_and_switches_threads_every_millisecond():
    state = served_process_state()
    assert state["frozen"] > 10_000
    assert state["switch_interval"] == 0.001
