from django.urls import path

from . import views

app_name = "hooks"
urlpatterns = [
    path("", views.triggers, name="list"),
    path("<str:trigger_id>/remove/", views.remove, name="remove"),
    path("<str:trigger_id>", views.deliver, name="deliver"),
]
