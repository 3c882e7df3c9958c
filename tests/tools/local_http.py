"""A real HTTP server on 127.0.0.1 in a thread, counting the requests it gets: the SSRF tests' witness."""

import contextlib
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False  # never answer (until the server stops)


class LocalServer:
    def __init__(self, routes: dict[str, Reply] | None = None) -> None:
        self.routes = routes or {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # (method, path, headers)
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(("GET", self.path, dict(self.headers)))
                reply = server.routes.get(self.path, Reply(404, b"not here"))
                if reply.hang:
                    server.release.wait(10)
                    return
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the client stopped reading (size cap): expected
                    self.wfile.write(reply.body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> "LocalServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
