"""The run API's URLs, included by name from agentweb/urls.py (the project names no app's module at import)."""

from .run_api import api

urlpatterns, app_name, namespace = api.urls
