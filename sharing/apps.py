from django.apps import AppConfig


class SharingConfig(AppConfig):
    name = "sharing"
    verbose_name = "Sharing and export"
    default_auto_field = "django.db.models.BigAutoField"
