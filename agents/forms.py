from django import forms
from django.conf import settings
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from .models import MAX_STARTER_PROMPTS, Agent


class StarterPromptsField(forms.CharField):
    """An agent's starting prompts as a text box, one per line (blank lines dropped); stored as a list. The model's
    clean() checks them (agents/services.py starter_problems)."""

    widget = forms.Textarea(attrs={"rows": 4})

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("label", _("Starting prompts"))
        kwargs.setdefault(
            "help_text",
            format_lazy(
                _(
                    "Up to {n}, one per line: the empty chat offers them as buttons when this agent is picked. "
                    "Blank: the page's own suggestions."
                ),
                n=MAX_STARTER_PROMPTS,
            ),
        )
        super().__init__(strip=False, **kwargs)

    def prepare_value(self, value):
        if isinstance(value, list):
            return "\n".join(str(v) for v in value)
        return value

    def to_python(self, value):
        text = super().to_python(value) or ""
        return [line.strip() for line in text.splitlines() if line.strip()]


class AgentAdminForm(forms.ModelForm):
    starter_prompts = StarterPromptsField()

    class Meta:
        model = Agent
        fields = "__all__"


class OwnAgentForm(forms.ModelForm):
    """A person's own agent (AGENTWEB_USER_AGENTS): kept small. Tools are those the person may use."""

    starter_prompts = StarterPromptsField()
    tool_names = forms.MultipleChoiceField(
        label=_("Tools"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("None ticked: all your tools."),
    )

    class Meta:
        model = Agent
        fields = ["name", "description", "system_prompt", "starter_prompts", "step_limit"]
        widgets = {"description": forms.TextInput(), "system_prompt": forms.Textarea(attrs={"rows": 5})}
        labels = {
            "name": _("Name"),
            "description": _("Description"),
            "system_prompt": _("System prompt"),
            "step_limit": _("Step limit"),
        }
        help_texts = {
            "description": _("Shown on the empty chat, under the name."),
            "system_prompt": _(
                "{date}, {user} and {agent} are filled in at each run. Blank: the global AGENTWEB_SYSTEM_PROMPT."
            ),
        }

    def __init__(self, *args, tools: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tool_names"].choices = [(name, name) for name in tools]
        self.fields["step_limit"].help_text = _("Model calls per answer. Blank: %(n)s.") % {
            "n": settings.AGENTWEB_MAX_STEPS
        }
        if self.instance.pk and not self.instance.all_tools:
            self.initial["tool_names"] = [n for n in self.instance.tools if n in tools]

    def save(self, commit=True):
        agent = super().save(commit=False)
        chosen = self.cleaned_data.get("tool_names") or []
        agent.all_tools, agent.tools = (not chosen), list(chosen)
        if commit:
            agent.save()
        return agent
