"""A PDF's text, read by pypdf in a process of its own, within limits of CPU time, memory and wall-clock time.

pypdf does what a file asks of it, and a file can ask a lot: 18 KB of PDF, a hundred pages sharing one small
compressed content stream of a million text operators, keeps pypdf 7.1 busy for four and a half minutes, and eight
such uploads at once took the server's threads and CPU from everyone else. So each PDF is read by this file run as
a script (`python -P attachments/pdf_reader.py`), which limits its own CPU time and memory before it imports pypdf
and runs at a lower priority than the server; it is killed when AGENTWEB_PDF_READ_SECONDS of CPU, or twice that of
wall-clock time, have passed. At most AGENTWEB_PDF_READERS run at once per server process (the app's ReaderSlots:
attachments/apps.py), and a PDF beyond them is refused at once rather than kept waiting: a waiting upload would
hold one of the threads that serve pages.

The script's half imports nothing of Django or the project: it sees the file on its stdin and writes a JSON answer
on its stdout ({"text": ...} or {"refused": "encrypted" | "damaged" | "empty" | "limits"}).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from contextlib import contextmanager

log = logging.getLogger("agentweb.attachments")

#: The reasons a PDF's text is not had, as PdfNotRead.reason.
ENCRYPTED, DAMAGED, EMPTY, LIMITS, BUSY = "encrypted", "damaged", "empty", "limits", "busy"


class PdfNotRead(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# --- the server's half --------------------------------------------------------------------------------------------


class ReaderSlots:
    """The places of a process's PDF readers: the attachments app keeps one (attachments/apps.py)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0

    @contextmanager
    def taken(self):
        """One of the AGENTWEB_PDF_READERS places, or PdfNotRead(BUSY) at once."""
        from django.conf import settings

        with self._lock:
            if self._running >= settings.AGENTWEB_PDF_READERS:
                raise PdfNotRead(BUSY)
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1


def read_text(data: bytes) -> str:
    """The PDF's text, its pages' texts apart by a blank line; PdfNotRead saying why not."""
    from django.apps import apps

    with apps.get_app_config("attachments").pdf_readers.taken():
        return _run_reader(data)


def _run_reader(data: bytes) -> str:
    import subprocess

    from django.conf import settings

    cpu_s = settings.AGENTWEB_PDF_READ_SECONDS
    # -P: this file's folder is not put on the reader's path (its modules are the app's, not the reader's).
    command = [sys.executable, "-P", __file__, str(cpu_s), str(settings.AGENTWEB_PDF_MEMORY_BYTES)]
    # Of the server's environment (its keys and passwords are none of the reader's business), where Python is.
    environment = {name: os.environ[name] for name in ("PYTHONPATH", "PYTHONHOME") if name in os.environ}
    try:
        done = subprocess.run(command, input=data, capture_output=True, timeout=2 * cpu_s, env=environment)
    except subprocess.TimeoutExpired:  # killed, and waited for, by subprocess.run
        raise PdfNotRead(LIMITS) from None
    if done.returncode < 0 or b"MemoryError" in done.stderr:  # killed at its CPU limit (SIGXCPU, SIGKILL), or out
        raise PdfNotRead(LIMITS)  # of memory before it could say so
    if done.returncode != 0:  # the reader itself failed (pypdf missing?): the person is told the PDF is unreadable
        last_line = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["(nothing)"]
        log.error("The PDF reader failed (exit code %s): %s", done.returncode, last_line[0][:300])
        raise PdfNotRead(DAMAGED)
    answer = json.loads(done.stdout)
    if "refused" in answer:
        raise PdfNotRead(answer["refused"])
    return answer["text"]


# --- the reader's half (a process of its own) ---------------------------------------------------------------------


def _limit_self(cpu_s: int, memory_bytes: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))  # SIGXCPU at the first, SIGKILL at the second
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # killed at its limit: no core file
    os.nice(10)  # the server's own work goes first


def _extract(data: bytes) -> dict:
    import io

    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            return {"refused": ENCRYPTED}
        pages = [page.extract_text() or "" for page in reader.pages]
    except MemoryError:
        return {"refused": LIMITS}
    except Exception:  # pypdf raises many kinds for a damaged file
        return {"refused": DAMAGED}
    if not pages:
        return {"refused": EMPTY}
    return {"text": "\n\n".join(text.strip() for text in pages).strip()}


def main(argv: list[str]) -> None:
    cpu_s, memory_bytes = int(argv[0]), int(argv[1])
    _limit_self(cpu_s, memory_bytes)
    data = sys.stdin.buffer.read()
    answer = _extract(data)
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    main(sys.argv[1:])
