"""A person's groups and roles, set from the provider's claims on every sign-in (docs/teams.md, "Sign-in")."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import transaction

from sso.models import ManagedGroup

# Bounds on what a claim may carry before anything is written: a group name is Django's Group.name (150
# characters), and no real directory gives one person more groups than this in a token.
MAX_GROUPS = 500
MAX_NAME_LENGTH = 150


class ClaimError(ValueError):
    """The groups claim is not a list of names this app can hold."""


def claimed_groups(claims: dict, claim: str) -> list[str]:
    """The group names the claim carries (a list of strings, or one string), in order, each once. Absent: none."""
    value = claims.get(claim)
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ClaimError(f"the {claim!r} claim is not a list")
    if len(value) > MAX_GROUPS:
        raise ClaimError(f"the {claim!r} claim names more than {MAX_GROUPS} groups")
    names: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item.strip() or len(item) > MAX_NAME_LENGTH:
            raise ClaimError(f"the {claim!r} claim holds a value that is not a group name of 1 to 150 characters")
        if item not in names:
            names.append(item)
    return names


def sync_groups(user, names: list[str]) -> None:
    """Make the person's provider-managed groups exactly `names`: a name no group has yet becomes a managed group;
    a name an admin's own group already has is left alone (the admin hands it over by marking it managed); the
    person's admin-given groups are never touched."""
    with transaction.atomic():
        existing = {group.name: group for group in Group.objects.filter(name__in=names)}
        managed_ids = set(ManagedGroup.objects.filter(group__name__in=names).values_list("group_id", flat=True))
        wanted = {group.pk for name, group in existing.items() if group.pk in managed_ids}
        for name in names:
            if name not in existing:
                group, created = Group.objects.get_or_create(name=name)
                if created:
                    ManagedGroup.objects.create(group=group)
                    wanted.add(group.pk)
        current = set(user.groups.filter(idp_managed__isnull=False).values_list("pk", flat=True))
        if current - wanted:
            user.groups.remove(*(current - wanted))
        if wanted - current:
            user.groups.add(*(wanted - current))


def apply_roles(user, names: list[str]) -> None:
    """Staff and superuser from the configured group values. With both settings empty the admin decides both flags;
    with either set the claim decides both, on every sign-in (a superuser group also makes staff: the admin opens
    only to staff), so taking a person out of the group at the provider takes the flag away."""
    staff_groups = set(settings.AGENTWEB_OIDC_STAFF_GROUPS)
    superuser_groups = set(settings.AGENTWEB_OIDC_SUPERUSER_GROUPS)
    if not staff_groups and not superuser_groups:
        return
    user.is_superuser = bool(superuser_groups & set(names))
    user.is_staff = user.is_superuser or bool(staff_groups & set(names))
