from django.apps import AppConfig


class SsoConfig(AppConfig):
    """Sign-in with the organisation's OpenID Connect provider (docs/teams.md, "Sign-in")."""

    name = "sso"
    verbose_name = "Single sign-on"
    default_auto_field = "django.db.models.BigAutoField"
