from django.urls import path

from . import thread_views, tools_panel, views

app_name = "chat"
urlpatterns = [
    path("", views.home, name="home"),
    path("t/<uuid:thread_id>/", views.thread_page, name="thread"),
    path("t/<uuid:thread_id>/rename", thread_views.rename, name="thread_rename"),
    path("t/<uuid:thread_id>/pin", thread_views.pin, name="thread_pin"),
    path("t/<uuid:thread_id>/archive", thread_views.archive, name="thread_archive"),
    path("t/<uuid:thread_id>/delete", thread_views.delete, name="thread_delete"),
    path("t/<uuid:thread_id>/messages", thread_views.messages_page, name="thread_messages"),
    path("settings/", views.settings_page, name="settings"),
    path("search", thread_views.search, name="search"),
    path("tools/available", tools_panel.available, name="tools_available"),
    path(
        "t/<uuid:thread_id>/tool-calls/<uuid:tool_call_id>/artifact",
        thread_views.tool_call_artifact,
        name="tool_call_artifact",
    ),
]
