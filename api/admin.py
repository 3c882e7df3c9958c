"""API keys in the admin: who has which, their use, revoking; and making one for a person, shown once on the page
that follows (never in a message: the messages' cookie would keep it). The hash is never shown or edited."""

from __future__ import annotations

from django.contrib import admin, messages
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext_lazy as _

from agentweb.admin_display import cut
from audit.recording import client_ip

from . import keys
from .forms import AdminKeyForm
from .models import ApiKey

# The key just made, kept on the request between save_model and response_add (the ModelAdmin serves every request).
MADE_KEY = "_agentweb_made_api_key"


class StateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("active", "active"), ("expired", "expired"), ("revoked", "revoked")]

    def queryset(self, request, queryset):
        now = timezone.now()
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        if self.value() == "expired":
            return queryset.filter(revoked_at__isnull=True, expires_at__lte=now)
        if self.value() == "active":
            return queryset.filter(revoked_at__isnull=True).exclude(expires_at__lte=now)
        return queryset


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["name_cut", "user", "shown", "created_at", "expires_at", "last_used_at", "revoked_at"]
    list_display_links = ["name_cut"]
    list_filter = [StateFilter, "user"]
    search_fields = ["name", "user__username", "lookup"]
    list_select_related = ["user"]
    # For whom a key is made: picked by name as one types (the people's admin searches them), not typed as an id.
    autocomplete_fields = ["user"]
    name_cut = cut("name", description=_("name"), ordering="name")
    actions = ["revoke_selected"]
    # A key's name and expiry may change; who holds it and what it is may not; revoking is the action's (and final).
    readonly_fields = ["user", "shown", "created_at", "last_used_at", "revoked_at"]
    fields = ["user", "name", "shown", "created_at", "expires_at", "last_used_at", "revoked_at"]

    @admin.display(description="key", ordering="lookup")
    def shown(self, obj: ApiKey) -> str:
        return obj.shown

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = AdminKeyForm
            kwargs["fields"] = ["user", "name", "expires_in_days"]
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None):
        return ["user", "name", "expires_in_days"] if obj is None else self.fields

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else self.readonly_fields

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        row, key = keys.issue(
            obj.user,
            obj.name,
            expires_in_days=form.cleaned_data.get("expires_in_days"),
            by=request.user,
            ip=client_ip(request),
            via="admin",
        )
        # The admin goes on with `obj` (its log entry, the page that follows): it becomes the row just made.
        obj.pk, obj.lookup, obj.hashed, obj.created_at, obj.expires_at = (
            row.pk,
            row.lookup,
            row.hashed,
            row.created_at,
            row.expires_at,
        )
        obj._state.adding, obj._state.db = False, row._state.db
        setattr(request, MADE_KEY, key)

    def response_add(self, request, obj, post_url_continue=None):
        key = getattr(request, MADE_KEY, None)
        if key is None:
            return super().response_add(request, obj, post_url_continue)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "API key made",
            "row": obj,
            "key": key,
        }
        response = TemplateResponse(request, "admin/api/apikey/made.html", context)
        add_never_cache_headers(response)
        response["Referrer-Policy"] = "no-referrer"
        return response

    @admin.action(description="Revoke selected keys", permissions=["change"])
    def revoke_selected(self, request, queryset):
        live = queryset.filter(revoked_at__isnull=True).select_related("user")
        count = keys.revoke(live, by=request.user, ip=client_ip(request), via="admin")
        self.message_user(request, f"Revoked {count} key(s): they no longer work.", messages.SUCCESS)
