from django.contrib import admin

from .models import Message, Run, Thread, ToolCall


class MessageInline(admin.TabularInline):
    model = Message
    fields = ["order", "role", "status", "content"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True


@admin.register(Thread)
class ThreadAdmin(admin.ModelAdmin):
    list_display = ["title", "owner", "updated_at", "created_at"]
    list_filter = ["owner"]
    search_fields = ["title", "owner__username"]
    readonly_fields = ["id", "last_seq", "created_at", "updated_at"]
    inlines = [MessageInline]


class ToolCallInline(admin.TabularInline):
    model = ToolCall
    fk_name = "message"
    fields = ["index", "name", "call_id", "status", "args", "duration_ms"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["thread", "order", "role", "status", "created_at"]
    list_filter = ["role", "status"]
    search_fields = ["content"]
    inlines = [ToolCallInline]


@admin.register(ToolCall)
class ToolCallAdmin(admin.ModelAdmin):
    list_display = ["name", "status", "call_id", "duration_ms", "created_at"]
    list_filter = ["name", "status"]
    readonly_fields = ["id", "created_at", "started_at", "finished_at"]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "thread", "status", "reason", "steps", "started_at", "finished_at"]
    list_filter = ["status", "reason"]
    readonly_fields = ["started_at", "finished_at"]
