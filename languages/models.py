from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class LanguageChoice(models.Model):
    """The language a person chose on the settings page: kept with them, so it follows them to every device they
    sign in on (the cookie only remembers it in one browser). No row: the browser's language."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="language_choice", verbose_name=_("person")
    )
    #: One of settings.LANGUAGES' codes (checked where it is chosen: a language dropped later reads as none).
    language = models.CharField(_("language"), max_length=16)

    class Meta:
        verbose_name = _("language choice")
        verbose_name_plural = _("language choices")

    def __str__(self) -> str:
        return f"{self.user_id}: {self.language}"

    @classmethod
    def of(cls, user) -> str:
        """The code `user` chose, if it is still offered; else ""."""
        code = cls.objects.filter(user=user).values_list("language", flat=True).first() or ""
        return code if code in dict(settings.LANGUAGES) else ""

    @classmethod
    def of_many(cls, user_ids) -> dict[int, str]:
        """`of` for each of `user_ids` in one statement: {user id: code}, only those who chose one still offered."""
        offered = dict(settings.LANGUAGES)
        rows = cls.objects.filter(user__in=set(user_ids)).values_list("user", "language")
        return {user_id: code for user_id, code in rows if code in offered}

    @classmethod
    def choose(cls, user, code: str) -> None:
        """Keep `code` (one of settings.LANGUAGES, or "" for the browser's) as `user`'s language."""
        if code == "":
            cls.objects.filter(user=user).delete()
            return
        if code not in dict(settings.LANGUAGES):
            raise ValueError(f"not an offered language: {code!r}")
        cls.objects.update_or_create(user=user, defaults={"language": code})
