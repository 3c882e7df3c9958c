from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from agentweb.admin_display import PlainHelpTexts, cut, mark

from .forms import AgentAdminForm
from .models import Agent


@admin.register(Agent)
class AgentAdmin(PlainHelpTexts, admin.ModelAdmin):
    form = AgentAdminForm
    list_display = ("name_cut", "slug_cut", "owner", "model_cut", "all_tools", "step_limit", "default")
    list_display_links = ("name_cut",)
    list_select_related = ("owner", "model")
    # The owner (none: an agent for everyone) picked by name as one types, not from every account at once.
    autocomplete_fields = ("owner",)
    name_cut = cut("name", description=_("name"), ordering="name")
    slug_cut = cut("slug", description=_("slug"), ordering="slug")
    model_cut = cut("model", description=_("model"))
    list_filter = ("is_default", "all_tools", "owner", "groups")
    filter_horizontal = ("groups",)
    search_fields = ("name", "slug", "description")
    default = mark("is_default", description="default", shown="default")
    prepopulated_fields = {"slug": ("name",)}
    fieldsets = (
        (None, {"fields": ("name", "slug", "description", "starter_prompts", "owner", "is_default")}),
        ("Model", {"fields": ("model", "system_prompt", "temperature", "top_p", "max_output_tokens")}),
        ("Tools and limits", {"fields": ("all_tools", "tools", "approvals", "step_limit")}),
        ("Answer and context", {"fields": ("response_schema", "context_strategy")}),
        ("Who may use it", {"fields": ("groups",)}),
    )
