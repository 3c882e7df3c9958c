"""An admin manages anyone's schedules: the same checks as the pages (an agent the owner may use, a timing that
reads), and the next slot set when the timing changes."""

from django.contrib import admin
from django.core.exceptions import ValidationError

from . import services
from .models import Schedule, ScheduleRun


class ScheduleRunInline(admin.TabularInline):
    model = ScheduleRun
    extra = 0
    can_delete = False
    fields = ("slot", "status", "error", "thread", "manual")
    readonly_fields = fields
    ordering = ("-slot",)
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin):
    list_display = (
        "pk",
        "owner",
        "agent",
        "kind",
        "cron",
        "time_zone",
        "every_minutes",
        "target",
        "paused",
        "next_run_at",
        "last_run_at",
    )
    list_filter = ("paused", "kind", "target")
    search_fields = ("owner__username", "agent", "prompt")
    raw_id_fields = ("owner", "thread")
    readonly_fields = ("next_run_at", "last_run_at", "created_at")
    inlines = [ScheduleRunInline]

    def save_model(self, request, obj, form, change):
        before = services.timing_of(Schedule.objects.get(pk=obj.pk)) if change else None
        services.save(obj, timing_before=before)

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)

        class Checked(form):
            def _post_clean(self):
                super()._post_clean()
                try:
                    services.checked(self.instance)
                except ValidationError as error:
                    self.add_error(None, error)

        return Checked
