from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    label = "agents"
    verbose_name = "Agents"
    default_auto_field = "django.db.models.BigAutoField"
    # A run reads its thread's agent under the settings stamp (agents/services.py agent_spec): every write to the
    # agents' table gives a new stamp (tools/settings_cache.py), so the next run of every process reads it afresh.
