from django import forms

from .models import DISPLAY_NAME_LENGTH


class ShareForm(forms.Form):
    """The sharing options. An unticked box is False; a blank name becomes the owner's first name or "A user"."""

    display_name = forms.CharField(max_length=DISPLAY_NAME_LENGTH, required=False, strip=True)
    hide_tool_details = forms.BooleanField(required=False)
    hide_system_prompt = forms.BooleanField(required=False)
    share_attachments = forms.BooleanField(required=False)
