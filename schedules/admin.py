"""An admin manages anyone's schedules: the same checks as the pages (an agent the owner may use, a timing that
reads), and the next slot set when the timing changes."""

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from agentweb.admin_display import cut

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
        "agent_cut",
        "kind",
        "cron_cut",
        "time_zone",
        "every_minutes",
        "target",
        "paused",
        "next_run_at",
        "last_run_at",
    )
    list_filter = ("paused", "kind", "target")
    search_fields = ("owner__username", "agent", "prompt")
    list_select_related = ("owner",)
    # The owner and the thread picked by name and title as one types, not typed as ids.
    autocomplete_fields = ("owner", "thread")
    agent_cut = cut("agent", description=_("agent"), ordering="agent")
    cron_cut = cut("cron", description=_("cron"), ordering="cron")
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
