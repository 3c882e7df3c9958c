from django.contrib import admin

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
    list_display = ("user", "subject", "issuer", "last_sign_in")
    search_fields = ("user__username", "subject")
    readonly_fields = ("user", "issuer", "subject", "created_at", "last_sign_in")

    def has_add_permission(self, request):
        return False
