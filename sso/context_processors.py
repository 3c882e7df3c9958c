def sign_in(request):
    """What the login page and the account menu show: the provider's button, the password form."""
    from django.conf import settings

    return {
        "oidc_enabled": bool(settings.AGENTWEB_OIDC_ISSUER),
        "oidc_name": settings.AGENTWEB_OIDC_NAME,
        "password_login": settings.AGENTWEB_PASSWORD_LOGIN,
    }
