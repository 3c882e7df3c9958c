from django import forms
from django.utils.translation import gettext_lazy as _

from .models import Schedule


class ScheduleForm(forms.ModelForm):
    class Meta:
        model = Schedule
        fields = ["agent", "prompt", "kind", "cron", "time_zone", "every_minutes", "target"]
        widgets = {
            "prompt": forms.Textarea(attrs={"rows": 4}),
            "kind": forms.RadioSelect,
            "target": forms.RadioSelect,
        }
        labels = {
            "prompt": _("Prompt"),
            "kind": _("When"),
            "cron": _("Cron expression"),
            "time_zone": _("Time zone"),
            "every_minutes": _("Every N minutes"),
            "target": _("Answers go to"),
        }

    def __init__(self, *args, agents=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["agent"] = forms.ChoiceField(choices=[(a["slug"], a["name"]) for a in agents], label=_("Agent"))
