"""`manage.py runworker agentweb-runs` (docs/deploy.md): Channels' own command, with the process's MCP connections
started as it starts (in the background, as a Daphne process starts them: agentweb/serve.py), so that the worker's
first run finds its MCP servers connected rather than still connecting; and, with AGENTWEB_RUN_WORKERS, the
workers fire due schedules (schedules/ticker.py). With AGENTWEB_WORKER_NICE the worker first lowers its own CPU
priority (docs/deploy.md). This app is listed before `channels` in
INSTALLED_APPS so that its command is the one `manage.py runworker` runs."""

import os

from channels.management.commands.runworker import Command as ChannelsRunworker
from channels.worker import Worker
from django.conf import settings

from agentweb.serve import start_mcp_servers, start_schedules


class AppWorker(Worker):
    """Channels' worker, firing due schedules from its event loop as it starts (agentweb/serve.py start_schedules)."""

    async def arun(self):
        start_schedules(workers=True)
        return await super().arun()


class Command(ChannelsRunworker):
    help = "Run a channel-layer worker (Channels' runworker), with this process's MCP connections started first."
    worker_class = AppWorker

    def handle(self, *args, **options):
        if settings.AGENTWEB_WORKER_NICE > 0:
            os.nice(settings.AGENTWEB_WORKER_NICE)  # MCP servers it starts inherit it, as they should
        start_mcp_servers()
        return super().handle(*args, **options)
