"""The settings page's API keys (agentweb/urls.py includes these under settings/api-keys/)."""

from django.urls import path

from . import keys_views

app_name = "api_keys"
urlpatterns = [
    path("", keys_views.create, name="create"),
    path("<int:key_id>/revoke/", keys_views.revoke, name="revoke"),
]
