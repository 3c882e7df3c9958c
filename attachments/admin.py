from django.contrib import admin

from .models import Attachment


@admin.register(Attachment)
class AttachmentAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "size", "owner", "thread", "created_at")
    list_filter = ("kind",)
    readonly_fields = [f.name for f in Attachment._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False
