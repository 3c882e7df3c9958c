"""The sign-in pages at the addresses Django's auth URLs and the admin's own login answer (agentweb/urls.py includes
this module by name, ahead of them): the login page with the provider's button, and sign-out that also ends the
provider's session; with password login off, the admin's login page says so."""

from django.conf import settings
from django.urls import path

from sso import views

urlpatterns = [
    path("accounts/login/", views.SignInView.as_view(), name="login"),
    path("accounts/logout/", views.SignOut.as_view(), name="logout"),
]
if not settings.AGENTWEB_PASSWORD_LOGIN:
    urlpatterns.append(path("admin/login/", views.password_sign_in_off))
