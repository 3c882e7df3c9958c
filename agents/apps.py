from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class AgentsConfig(AppConfig):
    name = "agents"
    label = "agents"
    verbose_name = "Agents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from tools.models import bump_settings_stamp

        from .models import Agent

        # A run reads its thread's agent under the tool settings' stamp (agents/services.py agent_spec): every save
        # or delete of an agent gives a new stamp, so the next run of every process reads it afresh.
        def bump(sender, using="default", raw=False, **kwargs) -> None:
            if not raw:
                bump_settings_stamp(using=using)

        post_save.connect(bump, sender=Agent, weak=False, dispatch_uid="agents.settings_stamp.save")
        post_delete.connect(bump, sender=Agent, weak=False, dispatch_uid="agents.settings_stamp.delete")
