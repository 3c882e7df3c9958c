"""The app's URLs plus one view that fails, for the 500 page's test."""

from django.urls import path

from agentweb.urls import urlpatterns as app_urlpatterns


def failing_view(request):
    raise RuntimeError("a bug in a view")


urlpatterns = [path("fails/", failing_view), *app_urlpatterns]
