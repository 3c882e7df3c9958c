"""The forms that make a key, on the settings page and in the admin; their rules are api/keys.py's, which
`manage.py apikeys` follows too."""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.utils.functional import lazy
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from . import keys
from .keys import MAX_DAYS, MIN_DAYS, NAME_LENGTH, days_problem, owner_problem
from .models import ApiKey

#: Said next to the field, in the app's words rather than Django's.
DAYS_ERRORS = {
    "invalid": _("Days: a whole number, or nothing for a key that does not expire."),
    # Lazy: said in the language of the request that shows them.
    "min_value": lazy(days_problem, str)(0),
    "max_value": lazy(days_problem, str)(MAX_DAYS + 1),
}


class KeyForm(forms.Form):
    """A person's new key, on their settings page."""

    name = forms.CharField(
        max_length=NAME_LENGTH,
        strip=True,
        label=_("Name"),
        help_text=_("What the key is for: a script, an editor…"),
        error_messages={
            "required": _("Give the key a name: what it is for."),
            "max_length": format_lazy(_("A name of at most {n} characters."), n=NAME_LENGTH),
        },
    )
    expires_in_days = forms.IntegerField(
        label=_("Expires after (days)"),
        required=False,
        min_value=MIN_DAYS,
        max_value=MAX_DAYS,
        help_text=format_lazy(_("{min}–{max} days; empty: the key does not expire."), min=MIN_DAYS, max=MAX_DAYS),
        error_messages=DAYS_ERRORS,
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user

    def clean(self):
        cleaned = super().clean()
        problem = owner_problem(self.user)
        if problem is not None:
            raise forms.ValidationError(problem)
        return cleaned

    def issue(self, *, ip: str | None = None) -> tuple[ApiKey, str]:
        return keys.issue(
            self.user,
            self.cleaned_data["name"],
            expires_in_days=self.cleaned_data["expires_in_days"],
            by=self.user,
            ip=ip,
            via="settings",
        )


class AdminKeyForm(forms.ModelForm):
    """The admin's "Add API key": for whom, its name and expiry; the key is made on save (api/admin.py) and shown
    once on the page that follows."""

    expires_in_days = forms.IntegerField(
        label=_("Expires after (days)"),
        required=False,
        min_value=MIN_DAYS,
        max_value=MAX_DAYS,
        help_text=format_lazy(_("{min}–{max} days; empty: the key does not expire."), min=MIN_DAYS, max=MAX_DAYS),
        error_messages=DAYS_ERRORS,
    )

    class Meta:
        model = ApiKey
        fields = ["user", "name"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["user"].queryset = get_user_model().objects.filter(is_active=True)

    def clean(self):
        cleaned = super().clean()
        user = cleaned.get("user")
        if user is not None:
            problem = owner_problem(user)
            if problem is not None:
                raise forms.ValidationError(problem)
        return cleaned
