"""People's own connections to MCP servers each person connects to (docs/mcp.md, docs/teams.md)."""

from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_save


class McpConnectConfig(AppConfig):
    name = "mcpconnect"
    label = "mcpconnect"
    verbose_name = "MCP connections"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.apps import apps

        from .source import DatabaseCredentials

        # The connections of tools/ ask this app for the person's credential of each call (tools/mcp/personal.py).
        apps.get_app_config("tools").mcp_connections.credentials = DatabaseCredentials()
        post_save.connect(_deactivated, sender=settings.AUTH_USER_MODEL, dispatch_uid="mcpconnect.deactivated")


def _deactivated(sender, instance, created=False, raw=False, **kwargs) -> None:
    """An account saved inactive loses its connections (keys and tokens deleted, its processes' connections closed
    in this process; every process reads the account's state for each call anyway: mcpconnect/source.py)."""
    if raw or created or instance.is_active:
        return
    from .models import McpConnection

    if McpConnection.objects.filter(user=instance).exists():
        from .flows import remove_all

        remove_all(instance)
