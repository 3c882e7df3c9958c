"""SQLite's full-text index of messages (chat/migrations/0020) survives later migrations: Django alters a SQLite
table by copying it into a new one, which drops the table's triggers, and the index would then silently miss every
message written after. After each migrate, the triggers are made again where missing, and the index rebuilt from
the table when any was (it may have missed rows meanwhile). PostgreSQL's index is on the table itself: nothing to do.
"""

from __future__ import annotations

from django.db import connections

ROLES = "('user', 'assistant')"
TRIGGERS = {
    "chat_message_fts_insert": f"""CREATE TRIGGER IF NOT EXISTS chat_message_fts_insert AFTER INSERT ON chat_message
        WHEN new.role IN {ROLES} BEGIN
        INSERT INTO chat_message_fts(rowid, content) VALUES (new.id, new.content);
    END""",
    "chat_message_fts_delete": f"""CREATE TRIGGER IF NOT EXISTS chat_message_fts_delete AFTER DELETE ON chat_message
        WHEN old.role IN {ROLES} BEGIN
        INSERT INTO chat_message_fts(chat_message_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END""",
    "chat_message_fts_update": f"""CREATE TRIGGER IF NOT EXISTS chat_message_fts_update
        AFTER UPDATE OF content ON chat_message WHEN new.role IN {ROLES} AND new.content IS NOT old.content BEGIN
        INSERT INTO chat_message_fts(chat_message_fts, rowid, content) VALUES ('delete', old.id, old.content);
        INSERT INTO chat_message_fts(rowid, content) VALUES (new.id, new.content);
    END""",
}


def restore_search_triggers(using: str = "default", **kwargs) -> bool:
    """post_migrate: make missing triggers again and rebuild the index if any was missing. True if it did."""
    connection = connections[using]
    if connection.vendor != "sqlite":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, type FROM sqlite_master WHERE name LIKE 'chat_message_fts%'")
        found = {name for name, kind in cursor.fetchall() if kind in ("table", "trigger")}
        if "chat_message_fts" not in found or all(name in found for name in TRIGGERS):
            return False
        for sql in TRIGGERS.values():
            cursor.execute(sql)
        cursor.execute("INSERT INTO chat_message_fts(chat_message_fts) VALUES ('delete-all')")
        cursor.execute(
            f"INSERT INTO chat_message_fts(rowid, content) SELECT id, content FROM chat_message WHERE role IN {ROLES}"
        )
    return True
