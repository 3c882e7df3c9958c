from django.apps import AppConfig


class ModelConfigConfig(AppConfig):
    name = "modelconfig"
    label = "modelconfig"
    verbose_name = "Models"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the checks of AGENTWEB_SECRET_KEYS)
