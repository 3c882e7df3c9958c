"""A PDF's text is read in a process of its own within limits (attachments/pdf_reader.py): a PDF made to keep pypdf
busy is refused with a clear error and its reader is gone, and no more readers run at once than the setting says."""

from __future__ import annotations

import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from attachments import pdf_reader
from attachments.models import Attachment
from attachments.services import PDF_NOT_READ
from tests.attachments.files import pdf, slow_pdf
from tests.support.processes import Daphne, app_environment, create_user, log_in, manage

BUSY, LIMITS = PDF_NOT_READ["busy"], PDF_NOT_READ["limits"]

pytestmark = pytest.mark.django_db


def upload(user, name: str, data: bytes):
    client = Client()
    client.force_login(user)
    return client.post("/attachments/", {"file": SimpleUploadedFile(name, data)})


def readers(parent: int | None = None) -> list[int]:
    """The PDF readers that `parent` (this test's process) started that are still there (zombies included)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        started_by = int(stat.rpartition(")")[2].split()[1])
        if started_by == (parent or os.getpid()) and b"pdf_reader.py" in cmdline:
            found.append(int(entry.name))
    return found


def test_a_pdf_made_to_keep_pypdf_busy_is_refused_clearly_and_its_reader_is_gone(owner, settings):
    settings.AGENTWEB_PDF_READ_SECONDS = 1  # (in-process, pypdf took some 30 s of CPU over this PDF's text)

    response = upload(owner, "slow.pdf", slow_pdf())

    assert response.status_code == 400
    assert response.json()["error"] == (
        "This PDF could not be read: slow.pdf took more time or memory to read than the server allows a file."
    )
    assert not Attachment.objects.exists()
    assert readers() == []


def test_a_pdf_past_the_memory_limit_is_refused_clearly(owner, settings):
    settings.AGENTWEB_PDF_MEMORY_BYTES = 100 * 1024 * 1024  # its 35 MB content stream, parsed, takes far more
    settings.AGENTWEB_PDF_READ_SECONDS = 60  # (so that the memory limit is the one it meets)

    response = upload(owner, "big.pdf", slow_pdf(pages=1, operators=5_000_000))

    assert response.status_code == 400
    assert "This PDF could not be read" in response.json()["error"]
    assert readers() == []


def test_a_pdf_beyond_the_readers_at_once_is_refused_at_once_and_taken_once_one_is_free(owner, settings):
    settings.AGENTWEB_PDF_READERS = 1
    settings.AGENTWEB_PDF_READ_SECONDS = 3
    outcome = []
    busy = threading.Thread(target=lambda: outcome.append(read_or_reason(slow_pdf())))
    busy.start()
    try:
        while not readers():  # the slow PDF's reader has started
            assert busy.is_alive(), outcome
            time.sleep(0.05)

        refused = upload(owner, "report.pdf", pdf("Quarterly numbers"))
    finally:
        busy.join()
    taken = upload(owner, "report.pdf", pdf("Quarterly numbers"))

    assert refused.status_code == 400
    assert refused.json()["error"] == (
        "report.pdf was not read: the server is reading as many PDFs as it can at once. Try again in a moment."
    )
    assert outcome == [pdf_reader.LIMITS]
    assert taken.status_code == 201
    assert Attachment.objects.get().text == "Quarterly numbers"


def read_or_reason(data: bytes) -> str:
    try:
        return pdf_reader.read_text(data)
    except pdf_reader.PdfNotRead as not_read:
        return not_read.reason


def test_pages_are_served_while_the_server_reads_pdfs_made_to_be_slow(tmp_path):
    """Eight slow PDFs at once held all eight page threads for minutes when pypdf ran in them."""
    env = app_environment(tmp_path, AGENTWEB_PDF_READ_SECONDS="5")
    manage(env, "migrate", "--noinput")
    create_user(env, "ada", "lovelace-1815")
    server = Daphne(env).start()
    try:
        cookie = log_in(server.url, "ada", "lovelace-1815")
        headers = {"Cookie": cookie, "X-CSRFToken": re.search(r"csrftoken=([^;]+)", cookie).group(1)}
        with ThreadPoolExecutor(8) as pool:
            uploads = [
                pool.submit(
                    httpx.post,
                    f"{server.url}/attachments/",
                    files={"file": ("slow.pdf", slow_pdf())},
                    headers=headers,
                    timeout=120,
                )
                for _ in range(8)
            ]
            started = time.monotonic()
            while not readers(server.process.pid) and time.monotonic() - started < 30:  # (the uploads have begun)
                time.sleep(0.05)

            page = httpx.get(f"{server.url}/accounts/login/", timeout=60)
            reading_meanwhile = not all(upload.done() for upload in uploads)
            errors = sorted(upload.result().json()["error"] for upload in uploads)
    finally:
        server.stop()

    assert page.status_code == 200
    assert reading_meanwhile
    assert errors == sorted(6 * [BUSY.format(name="slow.pdf")] + 2 * [LIMITS.format(name="slow.pdf")])
