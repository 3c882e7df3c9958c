"""The admin's page of what one person may use (chat/may_use.py), under the person's admin address; included by name
ahead of the admin's own URLs (agentweb/urls.py), whose catch-all would answer it otherwise."""

from django.contrib import admin
from django.urls import path

from .may_use import may_use_view

urlpatterns = [
    path("<int:user_id>/may-use/", admin.site.admin_view(may_use_view), name="admin_user_may_use"),
]
