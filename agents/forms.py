from django import forms
from django.conf import settings

from .models import Agent


class OwnAgentForm(forms.ModelForm):
    """A person's own agent (AGENTWEB_USER_AGENTS): kept small. Tools are those the person may use."""

    tool_names = forms.MultipleChoiceField(
        label="Tools", required=False, widget=forms.CheckboxSelectMultiple, help_text="None ticked: all your tools."
    )

    class Meta:
        model = Agent
        fields = ["name", "description", "system_prompt", "step_limit"]
        widgets = {"description": forms.TextInput(), "system_prompt": forms.Textarea(attrs={"rows": 5})}

    def __init__(self, *args, tools: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tool_names"].choices = [(name, name) for name in tools]
        self.fields["step_limit"].help_text = f"Model calls per answer. Blank: {settings.AGENTWEB_MAX_STEPS}."
        if self.instance.pk and not self.instance.all_tools:
            self.initial["tool_names"] = [n for n in self.instance.tools if n in tools]

    def save(self, commit=True):
        agent = super().save(commit=False)
        chosen = self.cleaned_data.get("tool_names") or []
        agent.all_tools, agent.tools = (not chosen), list(chosen)
        if commit:
            agent.save()
        return agent
