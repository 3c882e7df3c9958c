"""A served process is tuned once the app is loaded and before its first connection, a run worker before its first
run (agentweb/tuning.py): what start-up loaded is out of the garbage collector's reach, young objects are collected
once 50,000 more are alive rather than 700, and threads switch every millisecond."""

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
    print(json.dumps({"frozen": gc.get_freeze_count(), "switch_interval": sys.getswitchinterval(),
                      "thresholds": gc.get_threshold()}))
    reactor.callLater(0, reactor.stop)

AppServer(application=app, endpoints=["tcp:port=0:interface=127.0.0.1"], ready_callable=ready).run()
"""

# A run worker as it takes its first run (chat/worker.py), without the run.
WORKER = """
import asyncio, gc, json, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentweb.settings")
import django
django.setup()
from chat.worker import prepare_process

async def first_run():
    prepare_process()
    print(json.dumps({"frozen": gc.get_freeze_count(), "thresholds": gc.get_threshold()}))

asyncio.run(first_run())
"""


def process_state(script: str) -> dict:
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_served_process_freezes_what_start_up_loaded_and_switches_threads_every_millisecond():
    state = process_state(SERVE)
    assert state["frozen"] > 10_000
    assert state["switch_interval"] == 0.001


def test_a_served_process_collects_young_objects_once_50_000_more_are_alive():
    assert process_state(SERVE)["thresholds"] == [50_000, 10, 10]


def test_a_run_worker_is_tuned_at_its_first_run():
    state = process_state(WORKER)
    assert state["frozen"] > 10_000
    assert state["thresholds"] == [50_000, 10, 10]
