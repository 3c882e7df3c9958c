"""Full-text search over messages (chat/store/search.py), each vendor its own way.

PostgreSQL: a GIN index on the expression to_tsvector('simple', left(content, 100000)) of user and assistant
messages. An expression index, not a generated column: nothing more is stored in the table's rows, and the query
repeats the expression (chat/store/search.py) so the planner uses it. 'simple' (lower-cased words, no stemming, no
stop words), not a language's configuration: people write in many languages, often several in one thread, and an
English stemmer would both miss their words and drop short ones ("it", "on") that someone may be looking for.
The first 100,000 characters only: a tsvector holds at most 1 MB, and a longer message must never fail to save.

SQLite: an FTS5 table over chat_message's content (external content: the text is not stored twice), holding user
and assistant messages, kept in step by triggers; the unicode61 tokenizer splits words as 'simple' does, no
stemming either. Rows already there are indexed here.

Both cover every version of a message, shown or not (`active` is not in them).
"""

from django.db import migrations

ROLES = "('user', 'assistant')"

POSTGRES_FORWARD = [
    "CREATE INDEX IF NOT EXISTS chat_message_fts ON chat_message USING gin "
    f"(to_tsvector('simple'::regconfig, left(content, 100000))) WHERE role IN {ROLES}",
]
POSTGRES_BACKWARD = ["DROP INDEX IF EXISTS chat_message_fts"]

SQLITE_FORWARD = [
    "CREATE VIRTUAL TABLE chat_message_fts USING fts5(content, content='chat_message', content_rowid='id')",
    f"INSERT INTO chat_message_fts(rowid, content) SELECT id, content FROM chat_message WHERE role IN {ROLES}",
    f"""CREATE TRIGGER chat_message_fts_insert AFTER INSERT ON chat_message WHEN new.role IN {ROLES} BEGIN
        INSERT INTO chat_message_fts(rowid, content) VALUES (new.id, new.content);
    END""",
    f"""CREATE TRIGGER chat_message_fts_delete AFTER DELETE ON chat_message WHEN old.role IN {ROLES} BEGIN
        INSERT INTO chat_message_fts(chat_message_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END""",
    # A role never changes, but content does (a streamed answer is written as it comes).
    f"""CREATE TRIGGER chat_message_fts_update AFTER UPDATE OF content ON chat_message
    WHEN new.role IN {ROLES} AND new.content IS NOT old.content BEGIN
        INSERT INTO chat_message_fts(chat_message_fts, rowid, content) VALUES ('delete', old.id, old.content);
        INSERT INTO chat_message_fts(rowid, content) VALUES (new.id, new.content);
    END""",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS chat_message_fts_update",
    "DROP TRIGGER IF EXISTS chat_message_fts_delete",
    "DROP TRIGGER IF EXISTS chat_message_fts_insert",
    "DROP TABLE IF EXISTS chat_message_fts",
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        statements = statements_by_vendor.get(schema_editor.connection.vendor, [])
        for statement in statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("chat", "0020_group_token_budget")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRES_FORWARD, "sqlite": SQLITE_FORWARD}),
            _run({"postgresql": POSTGRES_BACKWARD, "sqlite": SQLITE_BACKWARD}),
        ),
    ]
