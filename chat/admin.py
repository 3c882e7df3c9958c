import datetime

from django.contrib import admin
from django.db.models import Count, F, Q, Sum
from django.db.models.functions import TruncDate

from agentweb.admin_display import flag

from .models import GroupTokenBudget, Message, Run, Thread, TokenBudget, ToolCall, Usage
from .usage import money


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

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Message)
class MessageAdmin(RecordAdmin):
    list_display = ["thread", "order", "role", "status", "created_at"]
    list_filter = ["role", "status"]
    search_fields = ["content"]
    inlines = [ToolCallInline]


@admin.register(ToolCall)
class ToolCallAdmin(RecordAdmin):
    list_display = ["name", "status", "call_id", "duration_ms", "created_at"]
    list_filter = ["name", "status"]
    readonly_fields = ["id", "created_at", "started_at", "finished_at"]


@admin.register(Run)
class RunAdmin(RecordAdmin):
    list_display = ["id", "thread", "status", "reason", "steps", "started_at", "finished_at"]
    list_filter = ["status", "reason"]
    readonly_fields = ["started_at", "finished_at"]


#: The groups of the usage report: (key, title, the field grouped by).
USAGE_GROUPS = (
    ("user", "user", "user__username"),
    ("agent", "agent", "agent"),
    ("model", "model", "model_label"),
    ("day", "day (UTC)", "day"),
)
#: Groups shown per table, the largest first.
REPORT_ROWS = 100


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
    by user, agent (empty until agents exist), model and day (chat/usage.py, docs/usage.md).

    Nobody adds, changes or deletes a row, superusers included: the rows are what was spent, and today's count
    against the daily budget (deleting one would give its tokens back)."""

    list_display = [
        "created_at",
        "user",
        "model_label",
        "agent",
        "input_tokens",
        "output_tokens",
        "estimated_flag",
        "cost_shown",
        "source",
        "api_key",
        "thread",
        "run",
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
        "estimated", description="estimated", shown="estimated", title="No count from the server: estimated"
    )

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="cost", ordering="cost")
    def cost_shown(self, obj: Usage) -> str:
        return money(obj.cost)

    def changelist_view(self, request, extra_context=None):
        response = super().changelist_view(request, extra_context)
        changelist = getattr(response, "context_data", {}).get("cl")
        if changelist is not None:
            response.context_data["report"] = self.report(changelist.queryset)
        return response

    @staticmethod
    def report(queryset):
        """One aggregate for the totals and one per group, over the filtered rows."""
        sums = {
            "calls": Count("id"),
            "input": Sum("input_tokens"),
            "output": Sum("output_tokens"),
            "tokens": Sum(F("input_tokens") + F("output_tokens")),
            "cost": Sum("cost"),
        }
        rows = queryset.order_by()
        totals = rows.aggregate(**sums, estimated=Count("id", filter=Q(estimated=True)))
        totals = {key: value if value is not None or key == "cost" else 0 for key, value in totals.items()}
        groups = []
        for key, title, field in USAGE_GROUPS:
            grouped = rows.annotate(day=TruncDate("created_at", tzinfo=datetime.UTC)) if key == "day" else rows
            ordering = f"-{field}" if key == "day" else "-tokens"
            found = grouped.values(name=F(field)).annotate(**sums).order_by(ordering)[:REPORT_ROWS]
            groups.append({"key": key, "title": title, "rows": list(found)})
        return {"totals": totals, "groups": groups}


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
