from django.contrib import admin
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from agentweb.admin_display import cut, cut_text, flag, money

from .models import GroupTokenBudget, Message, Run, Thread, TokenBudget, ToolCall, Usage
from .usage_report import report


class RecordAdmin(admin.ModelAdmin):
    """Rows the app writes as chats happen (messages, tool calls, runs): there is nothing to add by hand, so the admin
    offers no Add."""

    def has_add_permission(self, request, obj=None):
        return False


class MessageInline(admin.TabularInline):
    model = Message
    fields = ["order", "role", "status", "content"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Thread)
class ThreadAdmin(admin.ModelAdmin):
    list_display = ["title_cut", "owner", "updated_at", "created_at"]
    list_display_links = ["title_cut"]
    list_filter = ["owner"]
    list_select_related = ["owner"]
    search_fields = ["title", "owner__username"]
    readonly_fields = ["id", "last_seq", "created_at", "updated_at"]
    # The owner picked by name as one types (the people's admin searches them), not from every account at once.
    autocomplete_fields = ["owner"]
    inlines = [MessageInline]
    title_cut = cut("title", description=_("title"), ordering="title")


class ToolCallInline(admin.TabularInline):
    model = ToolCall
    fk_name = "message"
    fields = ["index", "name", "call_id", "status", "args", "duration_ms"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Message)
class MessageAdmin(RecordAdmin):
    list_display = ["__str__", "thread_cut", "role", "status", "created_at"]
    list_select_related = ["thread"]
    thread_cut = cut("thread", description=_("thread"))
    list_filter = ["role", "status"]
    search_fields = ["content"]
    inlines = [ToolCallInline]


@admin.register(ToolCall)
class ToolCallAdmin(RecordAdmin):
    list_display = ["name_cut", "status", "call_id_cut", "duration_ms", "created_at"]
    list_display_links = ["name_cut"]
    name_cut = cut("name", description=_("name"), ordering="name")
    call_id_cut = cut("call_id", description=_("call id"))
    list_filter = ["name", "status"]
    readonly_fields = ["id", "created_at", "started_at", "finished_at"]


@admin.register(Run)
class RunAdmin(RecordAdmin):
    list_display = ["id", "thread_cut", "status", "reason", "steps", "usage_shown", "started_at", "finished_at"]
    list_filter = ["status", "reason"]
    list_select_related = ["thread"]
    readonly_fields = ["started_at", "finished_at", "usage_shown"]
    thread_cut = cut("thread", description=_("thread"))

    @admin.display(description=_("tokens and cost"))
    def usage_shown(self, obj: Run) -> str:
        """The run's totals as the usage list says them: its tokens, and its cost as money."""
        usage = obj.usage or {}
        if not usage:
            return self.get_empty_value_display()
        tokens = usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
        text = f"{'≈ ' if usage.get('estimated') else ''}{tokens:,}"
        return text if usage.get("cost") is None else f"{text} · {money(usage['cost'])}"


class AgentFilter(admin.AllValuesFieldListFilter):
    """The agents as filter links, the blank one (no agent) named: Django shows "" as an empty link, which has no
    name for a screen reader (axe's link-name) and nothing to click for anyone."""

    blank_label = "no agent"

    def choices(self, changelist):
        for choice in super().choices(changelist):
            yield {**choice, "display": self.blank_label} if choice["display"] == "" else choice


@admin.register(Usage)
class UsageAdmin(admin.ModelAdmin):
    """Every model call's tokens and cost, read-only, with the report of what the filters select: totals, and the same
    by user, agent, model and day, and a chart of each day (chat/usage_report.py, docs/usage.md).

    Nobody adds, changes or deletes a row, superusers included: the rows are what was spent, and today's count
    against the daily budget (deleting one would give its tokens back)."""

    list_display = [
        "when",
        "user",
        "model_cut",
        "agent_cut",
        "tokens_in",
        "tokens_out",
        "estimated_flag",
        "cost_shown",
        "via",
        "thread_cut",
        "run_id",
    ]
    # Through the API, and with which key (only the keys that spent something are offered).
    list_filter = [
        ("created_at", admin.DateFieldListFilter),
        "user",
        "model_config",
        ("agent", AgentFilter),
        "estimated",
        "source",
        ("api_key", admin.RelatedOnlyFieldListFilter),
    ]
    date_hierarchy = "created_at"
    # Thread, run and key are nullable: Django joins only non-null foreign keys by itself, and each row then cost two
    # statements more (bench/data: 183 statements a page). No count of every row either: it grew with the table.
    list_select_related = ["user", "thread", "run", "api_key"]
    show_full_result_count = False
    search_fields = ["user__username", "model_label", "agent"]
    raw_id_fields = ["thread", "run", "api_key"]
    # Counted by the server is the normal case: blank, and "estimated" where it sent no count.
    estimated_flag = flag(
        "estimated", description=_("estimated"), shown=_("estimated"), title=_("No count from the server: estimated")
    )
    model_cut = cut("model_label", description=_("model"), ordering="model_label")
    agent_cut = cut("agent", description=_("agent"), ordering="agent")
    thread_cut = cut("thread", description=_("thread"))

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description=_("when"), ordering="created_at")
    def when(self, obj: Usage) -> str:
        """The minute, short enough for a list of eleven columns; the second and the zone on hover."""
        moment = timezone.localtime(obj.created_at)
        exact = moment.isoformat(timespec="seconds")
        return format_html('<span title="{}">{}</span>', exact, f"{moment:%Y-%m-%d %H:%M}")

    @admin.display(description=_("input"), ordering="input_tokens")
    def tokens_in(self, obj: Usage) -> str:
        return f"{obj.input_tokens:,}"

    @admin.display(description=_("output"), ordering="output_tokens")
    def tokens_out(self, obj: Usage) -> str:
        return f"{obj.output_tokens:,}"

    @admin.display(description=_("cost"), ordering="cost")
    def cost_shown(self, obj: Usage) -> str:
        return money(obj.cost) if obj.cost is not None else self.get_empty_value_display()

    @admin.display(description=_("via"), ordering="source")
    def via(self, obj: Usage) -> str:
        """The chat, or the API and with which key (its name: the key itself is never kept)."""
        if obj.api_key is None:
            return obj.source
        return cut_text(f"{obj.source} · {obj.api_key}")

    @admin.display(description=_("run"), ordering="run")
    def run_id(self, obj: Usage) -> str:
        return f"#{obj.run_id}" if obj.run_id else self.get_empty_value_display()

    def changelist_view(self, request, extra_context=None):
        response = super().changelist_view(request, extra_context)
        changelist = getattr(response, "context_data", {}).get("cl")
        if changelist is not None:
            response.context_data["report"] = report(changelist.queryset)
        return response


@admin.register(TokenBudget)
class TokenBudgetAdmin(admin.ModelAdmin):
    """A person's own daily token budget, in place of AGENTWEB_DAILY_TOKEN_BUDGET."""

    list_display = ["user", "daily_tokens"]
    search_fields = ["user__username"]
    # Picked by name (a search of the people as one types), not by a user id.
    autocomplete_fields = ["user"]


@admin.register(GroupTokenBudget)
class GroupTokenBudgetAdmin(admin.ModelAdmin):
    """A group's daily token budget: its members', unless a person has their own; in several groups, the most
    generous (chat/usage.py budget_for)."""

    list_display = ["group", "daily_tokens"]
    search_fields = ["group__name"]
    autocomplete_fields = ["group"]
