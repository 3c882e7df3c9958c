"""The other ends of a notification, real and local: an SMTP server (aiosmtpd), and an HTTP server that keeps each
POST it gets (a push service, a person's webhook receiver)."""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.controller import Controller

MAX_BODY = 1024 * 1024


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


#: An answer of PostReceiver's: close the connection without answering (a receiver that crashed mid-request).
DROP = "drop"


class PostReceiver:
    """Keeps every POST; answers `status` (201, as a push service does), or first each of `answers` in turn (a
    status, or DROP)."""

    def __init__(self, status: int = 201, answers: list[int | str] | None = None) -> None:
        self.status = status
        self.answers = list(answers or [])
        self.received: list[Received] = []
        self.arrived = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
                body = self.rfile.read(length)
                receiver.received.append(Received(self.path, dict(self.headers), body))
                receiver.arrived.set()
                answer = receiver.answers.pop(0) if receiver.answers else receiver.status
                if answer == DROP:
                    self.close_connection = True
                    return
                self.send_response(answer)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def __enter__(self) -> PostReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class Mailbox:
    messages: list[EmailMessage] = field(default_factory=list)
    recipients: list[list[str]] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)

    async def handle_DATA(self, server, session, envelope) -> str:  # aiosmtpd's handler hook
        self.messages.append(message_from_bytes(envelope.content, policy=policy.default))
        self.recipients.append(list(envelope.rcpt_tos))
        self.arrived.set()
        return "250 Message accepted for delivery"


class SMTPServer:
    """aiosmtpd on 127.0.0.1, on a port of its own, in its own thread."""

    def __init__(self) -> None:
        self.mailbox = Mailbox()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.controller = Controller(self.mailbox, hostname="127.0.0.1", port=self.port)

    def __enter__(self) -> SMTPServer:
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()
