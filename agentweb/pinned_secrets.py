"""Stored secrets pinned to where their row points.

A row that keeps a secret and the address it sends the secret to (a model configuration's API key and base URL, an
HTTP tool's headers and URL, an MCP server's headers and URL) must not carry the secret to another address: a staff
member allowed to change the row, who may never read the secret, would otherwise point the row at a host of theirs
and be sent it. So, as a browser does with a saved password, a change of where a row points clears the secrets that
were not entered again with it.

Where a row points is the origin of its address (providers/secrets.py ``origin``: scheme, host and port; the path,
the query and the user name are not part of it). A secret counts as entered again when it was assigned after the
row was read from the database (a form that types it, ``update_or_create``'s defaults, an import); a row built
whole (not read) was given all of its values. The rule holds on every way a row is written: ``save()``,
``QuerySet.update()`` and ``bulk_update()``; what ``save()`` cleared is in ``cleared_secrets`` for the admin to say.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from django.db import models, transaction

__all__ = ["PinnedSecrets", "PinnedSecretsQuerySet"]


class PinnedSecretsQuerySet(models.QuerySet):
    """``update()`` and ``bulk_update()`` that clear the secrets of the rows they point elsewhere."""

    def update(self, **kwargs: Any) -> int:
        model = self.model
        if not set(kwargs) & set(model.ADDRESS_FIELDS):
            return super().update(**kwargs)
        kept = [name for name in model.PINNED_SECRETS if name not in kwargs]  # given with the address: entered
        with transaction.atomic(using=self.db):
            before = _points(self.all())  # (a copy of this queryset)
            count = super().update(**kwargs)
            if kept and before:
                after = _points(model._base_manager.using(self.db).filter(pk__in=before))
                moved = [pk for pk, points in after.items() if points != before[pk]]
                if moved:
                    cleared = {name: _empty(model.PINNED_SECRETS[name]) for name in kept}
                    model._base_manager.using(self.db).filter(pk__in=moved).update(**cleared)
        return count

    def bulk_update(self, objs: Iterable[models.Model], fields: Iterable[str], batch_size: int | None = None) -> int:
        objs, fields = list(objs), list(fields)
        if set(fields) & set(self.model.ADDRESS_FIELDS):
            stored = _points(self.model._base_manager.using(self.db).filter(pk__in=[obj.pk for obj in objs]))
            for obj in objs:
                if obj.pk in stored and obj.points_at() != stored[obj.pk]:
                    obj.clear_pinned_secrets(keep=[name for name in fields if name in self.model.PINNED_SECRETS])
            fields += [name for name in self.model.PINNED_SECRETS if name not in fields]
        return super().bulk_update(objs, fields, batch_size=batch_size)


def _empty(empty: Any) -> Any:
    """A secret field's empty value: ``PINNED_SECRETS`` names a callable for a mutable one (dict)."""
    return empty() if callable(empty) else empty


def _points(queryset: models.QuerySet) -> dict[Any, Any]:
    """Where each row of ``queryset`` points, by primary key."""
    return {row.pk: row.points_at() for row in queryset.only(*queryset.model.ADDRESS_FIELDS)}


class PinnedSecrets(models.Model):
    """A model whose ``PINNED_SECRETS`` (field name → its empty value) are sent to where ``points_at()`` says, which
    is read from its ``ADDRESS_FIELDS``. Its manager must be made from PinnedSecretsQuerySet."""

    ADDRESS_FIELDS: ClassVar[tuple[str, ...]] = ()
    PINNED_SECRETS: ClassVar[dict[str, Any]] = {}

    class Meta:
        abstract = True

    def points_at(self) -> Any:
        """Where the row's secrets are sent (an origin), from its address fields; None: nowhere."""
        raise NotImplementedError

    # --- which secrets were entered since the row was read ---

    @classmethod
    def from_db(cls, db: str | None, field_names: Any, values: Any) -> PinnedSecrets:
        instance = super().from_db(db, field_names, values)
        instance.__dict__["_entered_secrets"] = set()  # read, not given: nothing entered yet
        return instance

    def __setattr__(self, name: str, value: Any) -> None:
        entered = self.__dict__.get("_entered_secrets")
        if entered is not None and name in self.PINNED_SECRETS:
            entered.add(name)
        super().__setattr__(name, value)

    def refresh_from_db(self, *args: Any, **kwargs: Any) -> None:
        with self._not_entering():  # what it reads is stored, not entered
            super().refresh_from_db(*args, **kwargs)

    def clean_fields(self, *args: Any, **kwargs: Any) -> None:
        with self._not_entering():  # it sets every field to its own value, normalised
            super().clean_fields(*args, **kwargs)

    @contextlib.contextmanager
    def _not_entering(self) -> Iterator[None]:
        entered = self.__dict__.get("_entered_secrets")
        kept = set(entered) if entered is not None else None
        try:
            yield
        finally:
            if kept is not None:
                self.__dict__["_entered_secrets"] = kept

    def entered_secrets(self) -> set[str]:
        entered = self.__dict__.get("_entered_secrets")
        return set(self.PINNED_SECRETS) if entered is None else set(entered)

    def clear_pinned_secrets(self, keep: Iterable[str] = ()) -> list[str]:
        """Clear the secrets that were not entered (nor named in ``keep``); returns the names of those that held one."""
        cleared = []
        for name, empty in self.PINNED_SECRETS.items():
            if name in self.entered_secrets() or name in keep:
                continue
            if getattr(self, name):
                cleared.append(name)
            super().__setattr__(name, _empty(empty))
        return cleared

    # --- save ---

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.cleared_secrets = []
        update_fields = kwargs.get("update_fields")
        addressed = update_fields is None or set(update_fields) & set(self.ADDRESS_FIELDS)
        if addressed and not self._state.adding and self.pk is not None:
            stored = type(self)._base_manager.db_manager(kwargs.get("using") or self._state.db)
            before = _points(stored.filter(pk=self.pk)).get(self.pk, self.points_at())
            if before != self.points_at():
                self.cleared_secrets = self.clear_pinned_secrets()
                if update_fields is not None:
                    kwargs["update_fields"] = {*update_fields, *self.PINNED_SECRETS}
        super().save(*args, **kwargs)
        if "_entered_secrets" in self.__dict__:
            self.__dict__["_entered_secrets"] = set()  # saved: stored now

    def cleared_secrets_message(self, secrets: Iterable[str] = ()) -> str:
        """What the admin says after a save that cleared secrets (``secrets``: names of more the form cleared)."""
        names = [*(self._meta.get_field(name).verbose_name for name in self.cleared_secrets), *secrets]
        if not names:
            return ""
        what = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        return (
            f"{self._meta.verbose_name.capitalize()} “{self}” now points at another server (another scheme, host or "
            f"port). Cleared, since a secret is sent only where it was entered: its stored {what}. Enter again what "
            "the new server should get."
        )
