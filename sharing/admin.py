from django.contrib import admin
from django.utils.translation import gettext_lazy as _

import audit
from agentweb.admin_display import cut
from audit.recording import client_ip

from .models import ShareLink


@admin.register(ShareLink)
class ShareLinkAdmin(admin.ModelAdmin):
    """Read-only but for revoking: the token is not here (only its hash), so no link can be opened from it."""

    list_display = ["name_cut", "thread_cut", "created_at", "updated_at", "revoked_at"]
    list_display_links = ["name_cut"]
    list_select_related = ["thread"]
    name_cut = cut("display_name", description=_("display name"), ordering="display_name")
    thread_cut = cut("thread", description=_("thread"))
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

    def save_model(self, request, obj, form, change):
        revoking = change and obj.revoked_at is not None and form.initial.get("revoked_at") is None
        super().save_model(request, obj, form, change)
        if revoking:  # revoked here rather than by its owner: recorded as theirs would be
            audit.record(
                audit.Action.SHARE_LINK_REVOKED,
                actor=request.user,
                target=obj,
                ip=client_ip(request),
                detail={"thread": str(obj.thread_id), "via": "admin"},
            )
