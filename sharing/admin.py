from django.contrib import admin

from .models import ShareLink


@admin.register(ShareLink)
class ShareLinkAdmin(admin.ModelAdmin):
    """Read-only but for revoking: the token is not here (only its hash), so no link can be opened from it."""

    list_display = ["display_name", "thread", "created_at", "updated_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["display_name", "thread__title", "thread__owner__username"]
    fields = [
        "thread",
        "display_name",
        "hide_tool_details",
        "hide_system_prompt",
        "created_at",
        "updated_at",
        "revoked_at",
        "snapshot",
    ]
    readonly_fields = [f for f in fields if f != "revoked_at"]

    def has_add_permission(self, request):
        return False
