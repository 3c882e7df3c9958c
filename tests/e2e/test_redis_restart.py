"""Redis restarted under the deployed shape (docs/deploy.md: Daphne and a run worker, PostgreSQL and Redis): every
process rides it out. The run streaming in the worker when Redis went away becomes interrupted with the text its tab
was shown, and can be retried; the worker takes new runs again once Redis is back.

The Redis is the test's own (tests/support/production.py own_redis), killed and started again, empty, on its port.
"""

import asyncio
import time
import uuid

from websockets.exceptions import ConnectionClosed

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


def test_a_frame_sent_while_redis_is_down_is_answered_with_an_error_and_the_socket_stays_open(tmp_path):
    with (
        own_redis(tmp_path) as redis,
        model_server([{"text": "Hello again."}], tmp_path) as model_url,
        cluster(
            tmp_path,
            daphnes=1,
            setup=SETUP,
            redis_url=redis.url,
            AGENTWEB_LLM_API="openai",
            AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
            AGENTWEB_LLM_MODEL="m",
        ) as running,
    ):
        daphne = running.daphnes[0]
        url = daphne.url
        cookie = log_in(url, "ada", "lovelace-1815")
        frame = send("hello?")

        async def send_while_redis_is_down() -> tuple[list[dict], list[dict], int | None, list[dict]]:
            async with ChatSocket(url, cookie) as socket:
                await socket.send(type="ping")
                await socket.until("pong")  # the socket is open and has joined its groups
                redis.kill()
                await asyncio.sleep(1)  # the process's reader finds Redis gone
                await socket.send(**frame, ref="first try")
                refused = await socket.until("error", "run.started")
                await socket.send(type="ping")
                still_open = await socket.until("pong")
                async with ChatSocket(url, cookie) as another:  # a tab opening now is told to come back
                    try:
                        await another.until("pong", timeout=10)
                    except ConnectionClosed as closed:
                        opened = closed.rcvd.code
                redis.start()
                # Once Redis is back, the same frame sent again starts its run: nothing of the first try was written.
                refusals = 1
                for _ in range(60):
                    await socket.send(**frame)
                    answered = await socket.until("error", "run.completed", "run.failed", timeout=60)
                    if answered[-1].get("code") != "unavailable":
                        break
                    refusals += 1
                    await asyncio.sleep(0.5)
                return refused, still_open, opened, answered, refusals

        refused, still_open, opened, answered, refusals = asyncio.run(send_while_redis_is_down())
        log = daphne.log_tail(200)

    assert [(e["type"], e["code"], e["ref"]) for e in refused] == [("error", "unavailable", "first try")]
    assert refused[-1]["message"] == "The server cannot reach Redis right now; try again in a moment."
    assert still_open[-1]["type"] == "pong"
    assert opened == 4503
    assert answered[-1]["type"] == "run.completed", answered
    assert [e for e in answered if e["type"] == "message.completed"][-1]["content"] == "Hello again."
    assert "Traceback" not in log, log
    # One line each time a frame was refused (the first try, and those sent before this process saw Redis back).
    assert log.count("a message.send frame was refused: the server cannot reach Redis") == refusals, log
    assert log.count("a chat socket was closed as it opened: the server cannot reach Redis") == 1, log
