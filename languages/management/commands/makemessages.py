"""Django's makemessages, also finding the page's `_f("…", values)` (static/chat/i18n.js: translate, then fill in)."""

from django.core.management.commands.makemessages import Command as MakeMessages


class Command(MakeMessages):
    xgettext_options = [*MakeMessages.xgettext_options, "--keyword=_f"]
