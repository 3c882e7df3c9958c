from django.urls import path

from sso import views

app_name = "sso"

urlpatterns = [
    path("begin/", views.BeginSignIn.as_view(), name="begin"),
    path("callback/", views.FinishSignIn.as_view(), name="callback"),
]
