from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from agents.services import agents_for_picker

from . import template


class TriggerForm(forms.Form):
    name = forms.CharField(
        max_length=100, required=False, label=_("Name"), help_text=_("For you: tells your triggers apart.")
    )
    agent = forms.ChoiceField(required=False, label=_("Agent"))
    prompt = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        max_length=template.MAX_TEMPLATE_CHARS,
        label=_("Prompt"),
        help_text=_("{field} and {field.sub} are filled from the posted JSON; {{ and }} write a brace."),
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        choices = [("", _("The default agent"))]
        choices += [(entry["slug"], entry["name"]) for entry in agents_for_picker(user)]
        self.fields["agent"].choices = choices

    def clean_prompt(self):
        prompt = self.cleaned_data["prompt"]
        try:
            template.parse(prompt)
        except template.BadTemplate as error:
            raise forms.ValidationError(str(error)) from None
        return prompt
