"""`python -m bench.variant_worker runworker agentweb-runs`: `manage.py` with the variants of BENCH_VARIANTS applied
(bench/variant_asgi.py), for the run workers of the production benchmarks: a variant of the channel layer must be
the worker's too, since the worker publishes the runs' events."""

import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentweb.settings")

from django.core.management import execute_from_command_line

import bench.variant_asgi  # noqa: F401 (applies the variants; sets Django up)

execute_from_command_line(["manage.py", *sys.argv[1:]])
