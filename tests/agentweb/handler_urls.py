"""The app's URLs plus a file download and a failing view, for agentweb/http_handler.py's tests."""

import io

from django.http import FileResponse
from django.urls import path

from agentweb.urls import urlpatterns as app_urlpatterns

#: The files the download view handed out, to check each is closed once sent.
FILES: list[io.BytesIO] = []


def download(request):
    handle = io.BytesIO(b"x" * 200_000)
    FILES.append(handle)
    return FileResponse(handle, filename="big.bin")


def failing_view(request):
    raise RuntimeError("a bug in a view")


urlpatterns = [path("download/", download), path("fails/", failing_view), *app_urlpatterns]
