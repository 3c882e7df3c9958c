"""Redis restarted under the deployed shape (docs/deploy.md: Daphne and a run worker, PostgreSQL and Redis): every
process rides it out. The run streaming in the worker when Redis went away becomes interrupted with the text its tab
was shown, and can be retried; the worker takes new runs again once Redis is back.

The Redis is the test's own (tests/support/production.py own_redis), killed and started again, empty, on its port.
"""

import asyncio
import time
import uuid

from tests.support.processes import log_in, model_server
from tests.support.production import cluster, own_redis
from tests.support.sockets import ChatSocket

SETUP = "from django.contrib.auth.models import User; User.objects.create_user('ada', password='lovelace-1815')"


def send(text: str, thread: str | None = None) -> dict:
    return {"type": "message.send", "thread": thread, "content": text, "client_msg_id": str(uuid.uuid4())}


async def snapshot_once_not_running(url: str, cookie: str, thread: str) -> dict:
    async with ChatSocket(url, cookie) as socket:
        for _ in range(120):
            await socket.send(type="thread.subscribe", thread=thread, after_seq=None)
            snapshot = (await socket.until("thread.snapshot", "error"))[-1]
            if snapshot["type"] == "thread.snapshot" and snapshot["run"]["status"] != "running":
                return snapshot
            await asyncio.sleep(0.5)
    raise AssertionError(f"the run never stopped running: {snapshot}")


async def turn(url: str, cookie: str, frame: dict) -> list[dict]:
    """The events until the end of the run `frame` starts (or an error frame)."""
    async with ChatSocket(url, cookie) as socket:
        await socket.send(**frame)
        events = await socket.until("run.started", "error", timeout=60)
        run = events[-1].get("run", {}).get("id")
        while events[-1]["type"] == "run.started" or events[-1].get("run") != run:
            events += await socket.until("run.completed", "run.failed", "error", timeout=60)
            if events[-1]["type"] == "error":
                break
        return events


def test_the_worker_rides_out_a_redis_restart_and_the_run_it_was_streaming_can_be_retried(tmp_path):
    answer = " ".join(f"word{n}" for n in range(1000))  # 3-character chunks 20 ms apart: over a minute of streaming
    script = [{"text": answer, "delay_ms": 20}, {"text": "The retried answer."}, {"text": "A new answer."}]
    with (
        own_redis(tmp_path) as redis,
        model_server(script, tmp_path) as model_url,
        cluster(
            tmp_path,
            daphnes=1,
            setup=SETUP,
            redis_url=redis.url,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
            AGENTWEB_LLM_MODEL="m",
            AGENTWEB_HEARTBEAT_SECONDS="0.5",
            AGENTWEB_RUN_STALE_SECONDS="3",
        ) as running,
    ):
        url = running.daphnes[0].url
        cookie = log_in(url, "ada", "lovelace-1815")

        async def watch_then_restart_redis() -> tuple[str, str]:
            async with ChatSocket(url, cookie) as socket:
                await socket.send(**send("tell me a long story"))
                first = await socket.until("message.delta")
                thread, shown = first[0]["thread"], [first[-1]["text"]]
                deadline = time.monotonic() + 3
                while time.monotonic() < deadline:
                    shown += [e["text"] for e in await socket.until("message.delta") if "text" in e]
                redis.kill()
                await asyncio.sleep(2)
                redis.start()
                # The tab, still open, is told the run ended, once Redis is back.
                told = await socket.until("run.failed", timeout=60)
                return thread, "".join(shown), told

        thread, shown, told = asyncio.run(watch_then_restart_redis())
        snapshot = asyncio.run(snapshot_once_not_running(url, cookie, thread))
        retried = asyncio.run(turn(url, cookie, {"type": "run.retry", "thread": thread}))
        new = asyncio.run(turn(url, cookie, send("and now?", thread)))
        worker_alive = running.worker.process.poll() is None
        worker_log = running.worker.log_tail(60)

    assert worker_alive, worker_log
    assert told[-1]["error"] == snapshot["run"]["error"]
    assert snapshot["run"]["status"] == "interrupted"
    kept = snapshot["messages"][-1]["content"]
    assert shown and kept.startswith(shown) and answer.startswith(kept), (len(shown), len(kept))
    assert retried[-1]["type"] == "run.completed", retried[-1].get("error")
    assert [e for e in retried if e["type"] == "message.completed"][-1]["content"] == "The retried answer."
    assert new[-1]["type"] == "run.completed", new[-1].get("error")
    assert [e for e in new if e["type"] == "message.completed"][-1]["content"] == "A new answer."
