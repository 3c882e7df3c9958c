from django.urls import path

from . import views

app_name = "mcpconnect"

urlpatterns = [
    path("", views.connections, name="connections"),
    path("callback", views.callback, name="callback"),
    path("<str:server>/connect", views.connect, name="connect"),
    path("<str:server>/disconnect", views.disconnect_view, name="disconnect"),
]
