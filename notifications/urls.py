"""agentweb/urls.py includes these at the site's root: the service worker must be served from there (its scope)."""

from django.urls import path

from . import views

app_name = "notifications"
urlpatterns = [
    path("settings/notifications/", views.save, name="save"),
    path("settings/notifications/push/", views.subscribe, name="subscribe"),
    path("settings/notifications/push/remove/", views.unsubscribe, name="unsubscribe"),
    path("notifications-sw.js", views.service_worker, name="service_worker"),
]
