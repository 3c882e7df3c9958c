from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from agentweb.admin_display import cut
from sso.models import Identity, ManagedGroup


@admin.register(ManagedGroup)
class ManagedGroupAdmin(admin.ModelAdmin):
    """Which groups the provider's groups claim sets on every sign-in; adding a row hands an admin's group over,
    deleting one takes it back (its members then stay as they are)."""

    list_display = ("group", "created_at")
    search_fields = ("group__name",)
    autocomplete_fields = ("group",)


@admin.register(Identity)
class IdentityAdmin(admin.ModelAdmin):
    list_display = ("user", "subject_cut", "issuer_cut", "last_sign_in")
    list_display_links = ("user",)
    list_select_related = ("user",)
    subject_cut = cut("subject", description=_("subject"), ordering="subject")
    issuer_cut = cut("issuer", description=_("issuer"), ordering="issuer")
    search_fields = ("user__username", "subject")
    readonly_fields = ("user", "issuer", "subject", "created_at", "last_sign_in")

    def has_add_permission(self, request):
        return False
