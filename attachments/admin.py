from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from agentweb.admin_display import cut

from .models import Attachment


@admin.register(Attachment)
class AttachmentAdmin(admin.ModelAdmin):
    list_display = ("name_cut", "kind", "size", "owner", "thread_cut", "created_at")
    list_display_links = ("name_cut",)
    list_select_related = ("owner", "thread")
    name_cut = cut("name", description=_("name"), ordering="name")
    thread_cut = cut("thread", description=_("thread"))
    list_filter = ("kind",)
    readonly_fields = [f.name for f in Attachment._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False
