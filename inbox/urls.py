from django.urls import path

from . import views

app_name = "inbox"
urlpatterns = [
    path("inbox", views.inbox_page, name="page"),
    path("inbox/items", views.inbox_items, name="items"),
    path("inbox/count", views.inbox_count, name="count"),
]
