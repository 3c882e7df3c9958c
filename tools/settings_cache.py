"""The settings cache: every answer a process keeps under the settings stamp (tools.models.SettingsStamp), in one
object, and the database triggers that give the stamp a new value whenever what those answers are read from changes.

What is kept, by section (each bounded): the tool sets runs and pages build, each person's groups, the agents runs
read, each person's agent picker and the tools its suggested prompts need, the model configurations and the picker's
models (with the groups each allows), the people's and the groups' token budgets. A page or a run reads the stamp
(one statement, or a column of a statement it makes anyway) and takes its answers from here while the stamp stays the
same; a new stamp forgets every answer of every section at once.

The stamp changes in the database, by a trigger on each table in WATCHED (installed after every `migrate`, for the
tables of the installed apps): any write to those rows — a save, QuerySet.update(), bulk_create/bulk_update, a
delete, an m2m change, an import command, raw SQL or the database shell — gives a new stamp in the same transaction,
so no write path can leave another process serving a stale answer. No signal is needed."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any

from django.apps import apps
from django.db import connections, transaction

from tools.models import SettingsStamp, bump_settings_stamp

#: The tables whose rows the kept answers are read from: (app label, model name[, m2m field of it]).
WATCHED: tuple[tuple[str, ...], ...] = (
    ("tools", "ToolSetting"),
    ("tools", "ToolSetting", "groups"),
    ("tools", "HttpTool"),
    ("tools", "HttpTool", "groups"),
    ("tools", "ApprovalRule"),
    ("tools", "AllowedHost"),
    ("auth", "Group"),
    ("auth", "User", "groups"),
    ("modelconfig", "ModelConfiguration"),
    ("modelconfig", "ModelConfiguration", "groups"),
    ("agents", "Agent"),
    ("agents", "Agent", "groups"),
    ("mcpservers", "McpServer"),
    ("mcpservers", "McpServer", "groups"),
    ("chat", "TokenBudget"),
    ("chat", "GroupTokenBudget"),
)

#: The sections of the cache and how many answers each keeps under one stamp (a bound, not an eviction policy:
#: reaching it forgets that section's answers, which are rebuilt as asked).
SECTIONS: dict[str, int] = {
    "toolsets": 256,  # tools.services.toolset_for_stamp: by (groups, MCP connections' generation)
    "groups": 4096,  # tools.services.groups_of: by user id
    "agents": 4096,  # agents.services.agent_spec: by agent id
    "pickers": 4096,  # agents.services.agents_for_picker: by user id
    "starters": 4096,  # chat.starters.empty_chat_starters: the tools its suggestions need, by user id and agents
    "models": 256,  # modelconfig.services.config_for: by model id
    "model_list": 1,  # modelconfig.services.available_models
    "budgets": 2,  # chat.usage.overrides ("all") and group_budgets ("groups")
}


class SettingsCache:
    """The answers of one process under one settings stamp, by section and key. Thread-safe: page views run on
    several threads."""

    def __init__(self, sections: dict[str, int] = SECTIONS) -> None:
        self.sizes = dict(sections)
        self._stamp: str | None = None
        self._answers: dict[str, dict[Hashable, Any]] = {name: {} for name in self.sizes}
        self._lock = threading.Lock()

    def get(self, stamp: str | None, section: str, key: Hashable, make: Callable[[], Any]) -> Any:
        """The answer kept for `key` in `section` under `stamp`, else `make()` (kept). No stamp (None: a database
        without the stamp's row): `make()`, not kept."""
        if stamp is None:
            return make()
        with self._lock:
            answers = self._under(stamp)[section]
            if key in answers:
                return answers[key]
        answer = make()
        with self._lock:
            if self._stamp == stamp:
                answers = self._answers[section]
                if len(answers) >= self.sizes[section]:
                    answers.clear()
                answers[key] = answer
        return answer

    def clear(self) -> None:
        with self._lock:
            self._stamp, self._answers = None, {name: {} for name in self.sizes}

    def _under(self, stamp: str) -> dict[str, dict[Hashable, Any]]:
        if self._stamp != stamp:
            self._stamp, self._answers = stamp, {name: {} for name in self.sizes}
        return self._answers


# The one cache of the process (its answers are the process's, whatever app asks; a new stamp empties it).
SETTINGS_CACHE = SettingsCache()


# --- the triggers ------------------------------------------------------------------------------------------------

TRIGGER_PREFIX = "agentweb_settings_stamp_"
_SQLITE_EVENTS = ("INSERT", "UPDATE", "DELETE")


def watched_tables() -> list[str]:
    """The database tables of WATCHED, for the apps installed."""
    tables = []
    for app_label, model_name, *field in WATCHED:
        try:
            model = apps.get_model(app_label, model_name)  # LookupError: an app not installed
        except LookupError:
            continue
        if field:
            model = model._meta.get_field(field[0]).remote_field.through
        tables.append(model._meta.db_table)
    return tables


def install_triggers(*, using: str = "default", with_stamp: bool = False) -> list[str]:
    """Create the trigger of every watched table that lacks it (they are lost when SQLite rebuilds a table in a
    migration, so this runs after every migrate), and with `with_stamp` the stamp's row when it is missing. The
    tables given a trigger now."""
    connection = connections[using]
    existing_tables = set(connection.introspection.table_names())
    tables = [table for table in watched_tables() if table in existing_tables]
    if SettingsStamp._meta.db_table not in existing_tables:
        return []
    if with_stamp and not SettingsStamp.objects.using(using).filter(pk=1).exists():
        bump_settings_stamp(using=using)
    have = triggers(using=using)
    missing = [table for table in tables if table not in have]
    if not missing:
        return []
    q = connection.ops.quote_name
    stamp_table, stamp_column = q(SettingsStamp._meta.db_table), q(SettingsStamp._meta.get_field("stamp").column)
    where = f"{q(SettingsStamp._meta.pk.column)} = 1"
    with transaction.atomic(using=using), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"CREATE OR REPLACE FUNCTION {TRIGGER_PREFIX}bump() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                f"UPDATE {stamp_table} SET {stamp_column} = md5(random()::text || clock_timestamp()::text) "
                f"WHERE {where}; RETURN NULL; END $$"
            )
            for table in missing:
                cursor.execute(
                    f"CREATE TRIGGER {q(TRIGGER_PREFIX + table)} AFTER INSERT OR UPDATE OR DELETE ON {q(table)} "
                    f"FOR EACH STATEMENT EXECUTE FUNCTION {TRIGGER_PREFIX}bump()"
                )
        elif connection.vendor == "sqlite":
            for table in missing:
                for event in _SQLITE_EVENTS:
                    name = q(f"{TRIGGER_PREFIX}{table}_{event.lower()}")
                    cursor.execute(
                        f"CREATE TRIGGER IF NOT EXISTS {name} AFTER {event} ON {q(table)} BEGIN "
                        f"UPDATE {stamp_table} SET {stamp_column} = lower(hex(randomblob(16))) WHERE {where}; END"
                    )
        else:
            raise NotImplementedError(f"settings stamp triggers for {connection.vendor}")
    return missing


def drop_triggers(*, using: str = "default") -> None:
    """Remove every trigger install_triggers made (the stamp's table is about to go)."""
    connection = connections[using]
    q = connection.ops.quote_name
    tables = triggers(using=using, complete=False)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            for table in tables:
                cursor.execute(f"DROP TRIGGER IF EXISTS {q(TRIGGER_PREFIX + table)} ON {q(table)}")
            cursor.execute(f"DROP FUNCTION IF EXISTS {TRIGGER_PREFIX}bump()")
        else:
            for table in tables:
                for event in _SQLITE_EVENTS:
                    cursor.execute(f"DROP TRIGGER IF EXISTS {q(f'{TRIGGER_PREFIX}{table}_{event.lower()}')}")


def triggers(*, using: str = "default", complete: bool = True) -> set[str]:
    """The tables that have the settings stamp's trigger (on SQLite: for all three events; `complete` False: for
    any of them)."""
    connection = connections[using]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE t.tgname LIKE %s AND pg_table_is_visible(c.oid)",
                [TRIGGER_PREFIX.replace("_", r"\_") + "%"],
            )
            return {table for (table,) in cursor.fetchall()}
        cursor.execute(
            "SELECT tbl_name, name FROM sqlite_master WHERE type = 'trigger' AND name LIKE %s", [TRIGGER_PREFIX + "%"]
        )
        found: dict[str, int] = {}
        for table, name in cursor.fetchall():
            if name.startswith(TRIGGER_PREFIX + table + "_"):
                found[table] = found.get(table, 0) + 1
        return {table for table, count in found.items() if count == len(_SQLITE_EVENTS) or not complete}
