from django.apps import AppConfig


class InboxConfig(AppConfig):
    """The approvals inbox: every call waiting for the person's decision and every open request for their input,
    across all their threads (docs/background.md). It owns no table: it reads chat's."""

    name = "inbox"
