"""Who signed in through the provider, and which Django groups the provider manages."""

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.utils.translation import gettext_lazy as _


class Identity(models.Model):
    """A person's account at the provider (its issuer and `sub`), tied to one account here: the `sub` is what
    stays the same when a person's email or name changes, so it, not the email, finds the account on every
    sign-in after the first."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identities")
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)
    last_sign_in = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = _("identities")
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_unique_subject")]

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"


class ManagedGroup(models.Model):
    """A Django group the provider manages: made by a sign-in whose groups claim named it (or handed over by an
    admin, by adding the row). Its members are set from the claim on every sign-in; a group without this row is
    the admin's own, never joined or left because of a claim."""

    group = models.OneToOneField(Group, on_delete=models.CASCADE, primary_key=True, related_name="idp_managed")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("group managed by the identity provider")
        verbose_name_plural = _("groups managed by the identity provider")

    def __str__(self) -> str:
        return self.group.name
