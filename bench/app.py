"""The app under test: a temp SQLite database, users with sessions, Daphne in a subprocess pointed at the bench
model server, and a websocket client that measures.

Django is also set up in the bench process itself (same DATABASE_URL) to migrate, create users and sessions
and seed threads through the ORM before Daphne starts; the benchmarks then talk to Daphne only over HTTP
and websockets, as browsers would.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect

from .common import PYTHON, ROOT, clean_env, cpu_seconds, free_port, stop, wait_for_port
from .tokens import Spec, decode

TERMINAL = {"run.completed", "run.failed", "run.cancelled"}


def app_env(db_path: Path, model_url: str, debug: bool = False) -> dict[str, str]:
    return clean_env(
        DATABASE_URL=f"sqlite:///{db_path}",
        DJANGO_SETTINGS_MODULE="agentweb.settings",
        DJANGO_DEBUG="true" if debug else "false",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(40),
        AGENTWEB_LLM_API="openai",
        AGENTWEB_LLM_BASE_URL=f"{model_url}/v1",
        AGENTWEB_LLM_MODEL="bench",
        AGENTWEB_LLM_API_KEY="bench-key",
        AGENTWEB_LOG_LEVEL="WARNING",
        # One user sends many turns in a row here; a rate limit on message.send would measure the limiter.
        AGENTWEB_SEND_BURST="1000000",
        AGENTWEB_SEND_RATE_PER_MINUTE="1000000",
        # Many sockets of one user (idle-sockets opens 100 each): the cap per person would measure the cap.
        AGENTWEB_MAX_SOCKETS_PER_USER="0",
    )


def setup_django(env: dict[str, str]) -> None:
    """Django in this process, on the bench database (before anything imports models)."""
    for key in [k for k in os.environ if k.startswith(("AGENTWEB_", "DJANGO_"))]:
        del os.environ[key]
    os.environ.update({k: v for k, v in env.items() if k.startswith(("AGENTWEB_", "DJANGO_", "DATABASE_URL"))})
    import django

    django.setup()


def migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", "--noinput", verbosity=0)


def make_users(count: int) -> list[tuple[int, str]]:
    """`count` users, each with a logged-in session: [(user id, Cookie header)]. No password hashing (an
    unusable password): the session is made as the login view makes it."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.sessions.backends.db import SessionStore

    User = get_user_model()
    out = []
    for n in range(count):
        user = User(username=f"bench{n}-{uuid.uuid4().hex[:6]}")
        user.set_unusable_password()
        user.save()
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        out.append((user.pk, f"{settings.SESSION_COOKIE_NAME}={session.session_key}"))
    return out


def seed_thread(user_id: int, messages: int, *, tool_every: int = 5) -> str:
    """A thread of `messages` user and assistant messages (alternating; ~100 and ~600 characters), every
    `tool_every`-th assistant message with a finished calculator call and its tool message. Returns its id."""
    from django.db import transaction

    from chat.models import Message, Run, Thread, ToolCall

    paragraph = (
        "Here is what I found. The answer streams in token by token, every tool call appears as a card, and "
        "everything is stored so that a reload loses nothing. "
    )
    with transaction.atomic():
        thread = Thread.objects.create(owner_id=user_id, title=f"bench thread of {messages} messages")
        run = Run.objects.create(thread=thread, status=Run.Status.COMPLETED, reason="done", steps=1)
        rows, calls, order = [], [], 0
        for n in range(messages):
            order += 1
            if n % 2 == 0:
                rows.append(
                    Message(
                        thread=thread, run=run, order=order, role="user", content=f"Question {n}: " + paragraph[:90]
                    )
                )
                continue
            rows.append(
                Message(
                    thread=thread,
                    run=run,
                    order=order,
                    role="assistant",
                    content=(paragraph * 4)[:600],
                    finish_reason="stop",
                )
            )
            if (n // 2) % tool_every == 0:
                call_id = f"call_{n}"
                calls.append((len(rows) - 1, call_id))
                order += 1
                rows.append(
                    Message(
                        thread=thread,
                        run=run,
                        order=order,
                        role="tool",
                        content="437",
                        tool_call_id=call_id,
                        name="calculator",
                    )
                )
        Message.objects.bulk_create(rows)
        ToolCall.objects.bulk_create(
            ToolCall(
                message=rows[i],
                index=0,
                call_id=call_id,
                name="calculator",
                args={"expression": "23*19"},
                status="success",
                result="437",
                duration_ms=1,
            )
            for i, call_id in calls
        )
    return str(thread.pk)


# Daphne as `make run` starts it (agentweb/serve.py), or plain Daphne for a tree from before that existed.
SERVER = "agentweb.serve" if (ROOT / "agentweb" / "serve.py").exists() else "daphne"


class Daphne:
    def __init__(self, env: dict[str, str], log_path: Path, variants: str = ""):
        self.variants = variants
        self.env = {**env, "BENCH_VARIANTS": variants, "BENCH_PROFILE": str(log_path.with_suffix(".prof"))}
        self.application = "bench.variant_asgi:application" if variants else "agentweb.asgi:application"
        # A variant may patch agentweb/serve.py, which only bench.variant_serve lets it do (bench/stock_variants.py).
        self.server = "bench.variant_serve" if variants and SERVER == "agentweb.serve" else SERVER
        self.profile_path = log_path.with_suffix(".prof")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}/ws/chat/"
        self.log_path = log_path
        self.process: subprocess.Popen | None = None

    def start(self) -> Daphne:
        with open(self.log_path, "a") as log:
            self.process = subprocess.Popen(
                [PYTHON, "-m", self.server, "-b", "127.0.0.1", "-p", str(self.port), self.application],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_for_port(self.port, self.process)
        return self

    @property
    def pid(self) -> int:
        return self.process.pid

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def stop(self) -> None:
        if self.process is not None:
            if "profile" in self.variants and self.process.poll() is None:
                os.kill(self.process.pid, signal.SIGUSR1)  # the profile is written on this signal
                time.sleep(2)
            if ("stall-watch" in self.variants or "page-timing" in self.variants) and self.process.poll() is None:
                os.kill(self.process.pid, signal.SIGUSR2)  # the stalls are written on this signal
                time.sleep(1)
            stop(self.process)


class BenchApp:
    """Everything the benchmarks need, set up once: `with BenchApp(model_url) as app: ...`."""

    def __init__(self, model_url: str, users: int = 51, debug: bool = False, variants: str = ""):
        self.variants = variants
        self.model_url = model_url
        self.tmp = Path(tempfile.mkdtemp(prefix="agentweb-bench-"))
        self.db_path = self.tmp / "bench.sqlite3"
        self.env = app_env(self.db_path, model_url, debug=debug)
        self.user_count = users
        self.users: list[tuple[int, str]] = []
        self.daphne: Daphne | None = None
        self.threads: dict[str, str] = {}
        self.migrated_copy = self.tmp / "migrated.sqlite3"

    def __enter__(self) -> BenchApp:
        setup_django(self.env)
        migrate()
        from django.db import connections

        connections.close_all()
        shutil.copy(self.db_path, self.migrated_copy)  # for the in-process benchmark, before any data
        self.users = make_users(self.user_count)
        connections.close_all()
        self.daphne = Daphne(self.env, self.tmp / "daphne.log", self.variants).start()
        return self

    def __exit__(self, *exc) -> None:
        if self.daphne is not None:
            self.daphne.stop()
            if self.daphne.profile_path.exists():
                kept = Path(os.environ.get("BENCH_OUT_ROOT", ROOT)) / "bench" / "results" / "daphne.prof"
                kept.parent.mkdir(exist_ok=True)
                shutil.copy(self.daphne.profile_path, kept)
                print(f"Daphne's profile: {kept} (python -m pstats {kept})")
        if os.environ.get("BENCH_KEEP_TMP"):
            print(f"kept {self.tmp}")
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)

    @property
    def cookie(self) -> str:
        return self.users[0][1]

    def daphne_log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join((self.tmp / "daphne.log").read_text().splitlines()[-lines:])
        except OSError:
            return ""


# --- the measuring websocket client ----------------------------------------------------------------


@dataclass
class Turn:
    spec: Spec
    t_send_ns: int = 0
    frames: list[tuple[int, dict]] = field(default_factory=list)  # (time.time_ns at receipt, event)
    thread: str | None = None

    @property
    def events(self) -> list[dict]:
        return [e for _, e in self.frames]

    @property
    def last(self) -> dict:
        return self.frames[-1][1] if self.frames else {}

    def deltas(self) -> list[tuple[int, str]]:
        return [(t, e["text"]) for t, e in self.frames if e.get("type") == "message.delta"]

    def stamps(self) -> tuple[list[int], list[int]]:
        """Sequence numbers and latencies (µs) of every stamp received in a message.delta."""
        seqs, lats = [], []
        for t, text in self.deltas():
            for seq, lat in decode(text, t // 1000):
                seqs.append(seq)
                lats.append(lat)
        return seqs, lats

    def first_delta_ns(self) -> int | None:
        return next((t for t, e in self.frames if e.get("type") == "message.delta"), None)

    def last_delta_ns(self) -> int | None:
        times = [t for t, e in self.frames if e.get("type") == "message.delta"]
        return times[-1] if times else None

    def final_text(self) -> str:
        done = [e for e in self.events if e.get("type") == "message.completed"]
        return done[-1].get("content", "") if done else ""


class Client:
    def __init__(self, app: BenchApp, cookie: str | None = None):
        self.app = app
        self.cookie = cookie or app.cookie
        self.ws: ClientConnection | None = None

    async def __aenter__(self) -> Client:
        daphne = self.app.daphne
        self.ws = await connect(
            daphne.ws_url, additional_headers={"Cookie": self.cookie}, origin=daphne.url, max_size=None, open_timeout=30
        )
        return self

    async def __aexit__(self, *exc) -> None:
        await self.ws.close()

    async def rtt_us(self, samples: int = 5) -> float:
        """The smallest ping → pong time of the protocol's own `ping` frame, in µs."""
        best = None
        for _ in range(samples):
            t0 = time.perf_counter_ns()
            await self.ws.send('{"type": "ping"}')
            while json.loads(await self.ws.recv()).get("type") != "pong":
                pass
            elapsed = (time.perf_counter_ns() - t0) / 1000
            best = elapsed if best is None else min(best, elapsed)
        return best

    async def turn(self, spec: Spec, thread: str | None = None, timeout: float = 300) -> Turn:
        turn = Turn(spec=spec, thread=thread)
        frame = {
            "type": "message.send",
            "thread": thread,
            "content": spec.message(),
            "client_msg_id": str(uuid.uuid4()),
        }
        text = json.dumps(frame)
        recv = self.ws.recv
        frames = turn.frames
        turn.t_send_ns = time.time_ns()
        await self.ws.send(text)
        async with asyncio.timeout(timeout):
            while True:
                raw = await recv()
                now = time.time_ns()
                event = json.loads(raw)
                frames.append((now, event))
                kind = event.get("type")
                if kind in TERMINAL:
                    break
                if kind == "error":
                    raise RuntimeError(f"the app refused the turn: {event}")
                if kind == "thread.created" and turn.thread is None:
                    turn.thread = event["thread"]
        if turn.thread is None:
            turn.thread = next((e.get("thread") for e in turn.events if e.get("thread")), None)
        if turn.last.get("type") != "run.completed":
            raise RuntimeError(f"the run did not complete: {turn.last}")
        return turn


_log_clients: dict[asyncio.AbstractEventLoop, object] = {}


async def server_log(model_url: str, spec_id: str) -> list[dict]:
    """The bench model server's records of the requests of one spec id (one client per loop: making an
    httpx client loads the CA bundle, tens of milliseconds of CPU that would load the machine under test)."""
    import httpx

    loop = asyncio.get_running_loop()
    client = _log_clients.get(loop)
    if client is None:
        client = _log_clients[loop] = httpx.AsyncClient(timeout=30)
    return (await client.get(f"{model_url}/_log", params={"id": spec_id})).json()


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"
