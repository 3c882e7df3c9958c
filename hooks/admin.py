"""Triggers in the admin: listed, read and removed (a removed trigger's address takes no more deliveries). The secret
is never shown; a trigger is made where its secret can be shown once: /hooks/ or `manage.py triggers add`."""

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from agentweb.admin_display import cut

from .models import Delivery, Trigger


class DeliveryInline(admin.TabularInline):
    model = Delivery
    fields = ("delivery_id", "thread", "created_at")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    ordering = ("-created_at",)


@admin.register(Trigger)
class TriggerAdmin(admin.ModelAdmin):
    list_display = ("trigger_cut", "id", "owner", "agent_slug", "created_at", "last_delivery_at")
    list_display_links = ("trigger_cut",)
    list_select_related = ("owner",)
    trigger_cut = cut("__str__", description=_("trigger"))
    list_filter = ("created_at",)
    search_fields = ("name", "id", "owner__username", "agent_slug")
    readonly_fields = ("id", "owner", "created_at", "last_delivery_at")
    fields = ("id", "owner", "name", "agent_slug", "prompt", "created_at", "last_delivery_at")
    inlines = [DeliveryInline]

    def has_add_permission(self, request):
        return False


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ("delivery_cut", "trigger_cut", "thread_cut", "created_at")
    list_display_links = ("delivery_cut",)
    list_select_related = ("trigger", "thread")
    delivery_cut = cut("delivery_id", description=_("delivery id"), ordering="delivery_id")
    trigger_cut = cut("trigger", description=_("trigger"))
    thread_cut = cut("thread", description=_("thread"))
    search_fields = ("delivery_id", "trigger__id", "trigger__name")
    readonly_fields = ("trigger", "delivery_id", "thread", "created_at")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
