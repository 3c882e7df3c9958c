"""Search for one person (issue 42): on PostgreSQL the full-text index is keyed by person and word, so a word common
to everyone but not to the person, or a short prefix, is looked up among the person's own words before a row is read.

At 1M messages (bench/data) the word "anbene" was in 129,781 messages (13 %), 6,952 of them the heavy person's: the
index gave all 130,000, and PostgreSQL read each row and its chat to keep the person's (0.43 s in EXPLAIN ANALYZE,
0.63 s at p99 in the sidebar). Keyed by person it reads the person's 6,952 only (docs/performance.md, "Fourth pass").

- chat_message.owner_id (PostgreSQL only, not in the model: no Python path writes it): its chat's owner, set by a
  BEFORE INSERT trigger from chat_thread (every insert: the ORM's, bulk_create, COPY), and kept in step by
  chat_thread's triggers when a chat is made after its messages or given to someone else (the admin's owner field).
- chat_message_fts_owner replaces chat_message_fts (migration 0021): a GIN index on chat_message_search_document,
  0021's document with the owner's id and a space before each word ("1 anbene"). The search asks for "1 anbene":*;
  chat_thread.owner_id stays the authority (chat/store/search.py). One owner lexeme ANDed with 0021's document was
  tried first: a prefix is then looked up among everyone's words, and 'anbene':* (130,000 matches) overflowed
  work_mem and was rechecked row by row: 1.5 s.

What it costs on an existing installation: not one transaction (atomic = False, forward()), so writes to chat_message
wait only for the column and the triggers (an instant each). 0021's index is dropped first (the search no longer
uses it, and the backfill would otherwise update it row by row); the backfill writes every message once, 50,000 at a
time, each batch committed (a new version of each row: the table takes about its own size again until autovacuum
reclaims it); then the index is built CONCURRENTLY. Searches read without an index until it is there: seconds each
on a large installation, so migrate at a quiet hour. bench/data at 1M messages, on 2 CPUs shared with other work
(upper bounds, load average 7-9): 271 s in all; the index 146 MB (0021's: 93 MiB); chat_message's file 962 MB
after, the old row versions in it until vacuumed and reused. Interrupted, it is run again and goes on: each step
skips what is done (the column, the triggers, rows whose owner is right; a half-built, invalid index is dropped and
built again).

SQLite is unchanged: FTS5 reads its matches newest first and stops at the LIMIT.
"""

from django.db import migrations

ROLES = "('user', 'assistant')"
# Every lexeme of 0021's document with its owner in front, "<owner id> <word>": a person's words are keys of their
# own, so a word, or a prefix ('anbene':* as one types), is looked up among the person's keys only. A lexeme never
# holds a space (the 'simple' parser's "blank" token, which no dictionary maps), so "1 <word>" is person 1's alone:
# person 12's keys begin "12 ". IMMUTABLE (it is), and only pg_catalog's functions inside (a restore's empty
# search_path finds them). chat/store/search.py asks for it by name, or the index is not used.
SEARCH_DOCUMENT = """
CREATE OR REPLACE FUNCTION chat_message_search_document(owner bigint, content text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_to_tsvector(coalesce(array_agg(coalesce(owner::text, '') || ' ' || lexeme), '{}'))
    FROM unnest(to_tsvector('simple'::regconfig, left(content, 100000)))
$$"""
OWNER_FROM_THREAD = """
CREATE OR REPLACE FUNCTION chat_message_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT owner_id INTO NEW.owner_id FROM chat_thread WHERE id = NEW.thread_id;
    RETURN NEW;
END $$"""
THREAD_TO_MESSAGES = """
CREATE OR REPLACE FUNCTION chat_thread_owner_to_messages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE chat_message SET owner_id = NEW.owner_id
    WHERE thread_id = NEW.id AND owner_id IS DISTINCT FROM NEW.owner_id;
    RETURN NULL;
END $$"""
# Only the rows not yet right: a backfill done beforehand (docs/deploy.md) is not written again.
BACKFILL = """UPDATE chat_message m SET owner_id = t.owner_id FROM chat_thread t
    WHERE t.id = m.thread_id AND m.owner_id IS DISTINCT FROM t.owner_id"""
INDEX = (
    "CREATE INDEX IF NOT EXISTS chat_message_fts_owner ON chat_message USING gin "
    f"(chat_message_search_document(owner_id, content)) WHERE role IN {ROLES}"
)

POSTGRES_COLUMN = [
    "ALTER TABLE chat_message ADD COLUMN IF NOT EXISTS owner_id bigint",
    OWNER_FROM_THREAD,
    SEARCH_DOCUMENT,
    "DROP TRIGGER IF EXISTS chat_message_owner ON chat_message",
    "CREATE TRIGGER chat_message_owner BEFORE INSERT ON chat_message"
    " FOR EACH ROW EXECUTE FUNCTION chat_message_owner()",
    # A message never moves to another chat; if one did, its owner would follow. Only then: a message's saves
    # (every column written, a streamed answer many times) do not read its chat.
    "DROP TRIGGER IF EXISTS chat_message_owner_moved ON chat_message",
    "CREATE TRIGGER chat_message_owner_moved BEFORE UPDATE OF thread_id ON chat_message"
    " FOR EACH ROW WHEN (OLD.thread_id IS DISTINCT FROM NEW.thread_id) EXECUTE FUNCTION chat_message_owner()",
    THREAD_TO_MESSAGES,
    # A chat made after its messages (one transaction, the foreign key checked at the commit): they get its owner.
    "DROP TRIGGER IF EXISTS chat_thread_owner_new ON chat_thread",
    "CREATE TRIGGER chat_thread_owner_new AFTER INSERT ON chat_thread"
    " FOR EACH ROW EXECUTE FUNCTION chat_thread_owner_to_messages()",
    # A chat given to someone else (the admin's owner field): its messages follow. Only on a change of owner, so a
    # chat's ordinary saves (every column written) do not read its messages.
    "DROP TRIGGER IF EXISTS chat_thread_owner_moved ON chat_thread",
    "CREATE TRIGGER chat_thread_owner_moved AFTER UPDATE OF owner_id ON chat_thread"
    " FOR EACH ROW WHEN (OLD.owner_id IS DISTINCT FROM NEW.owner_id) EXECUTE FUNCTION chat_thread_owner_to_messages()",
]
# A build stopped half way (CREATE INDEX CONCURRENTLY leaves an invalid index behind) is begun again.
DROP_INVALID_INDEX = """DO $$ BEGIN
    IF EXISTS (SELECT FROM pg_index WHERE indexrelid = to_regclass('chat_message_fts_owner') AND NOT indisvalid) THEN
        DROP INDEX chat_message_fts_owner;
    END IF;
END $$"""
BACKFILL_BATCH = 50_000
POSTGRES_BACKWARD = [
    "DROP INDEX IF EXISTS chat_message_fts_owner",
    "DROP TRIGGER IF EXISTS chat_thread_owner_moved ON chat_thread",
    "DROP TRIGGER IF EXISTS chat_thread_owner_new ON chat_thread",
    "DROP TRIGGER IF EXISTS chat_message_owner_moved ON chat_message",
    "DROP TRIGGER IF EXISTS chat_message_owner ON chat_message",
    "DROP FUNCTION IF EXISTS chat_thread_owner_to_messages()",
    "DROP FUNCTION IF EXISTS chat_message_owner()",
    "DROP FUNCTION IF EXISTS chat_message_search_document(bigint, text)",
    "ALTER TABLE chat_message DROP COLUMN IF EXISTS owner_id",
    # 0021's index again, as it made it.
    "CREATE INDEX IF NOT EXISTS chat_message_fts ON chat_message USING gin "
    f"(to_tsvector('simple'::regconfig, left(content, 100000))) WHERE role IN {ROLES}",
]


def forward(apps, schema_editor):
    """Not in one transaction (atomic = False): each statement commits on its own, so writes to chat_message wait only
    for the column and the triggers (an instant each), the backfill locks BACKFILL_BATCH rows at a time, and the
    index is built CONCURRENTLY. Every step finds what an earlier, interrupted run did and goes on from there."""
    if schema_editor.connection.vendor != "postgresql":
        return
    for statement in POSTGRES_COLUMN:
        schema_editor.execute(statement)
    # Before the backfill: else each of its row writes would also insert into 0021's index (which the search no
    # longer uses: it asks for chat_message_search_document).
    schema_editor.execute("DROP INDEX IF EXISTS chat_message_fts")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT min(id), max(id) FROM chat_message")
        first, last = cursor.fetchone()
    for start in range(first or 0, (last or 0) + 1, BACKFILL_BATCH):
        schema_editor.execute(f"{BACKFILL} AND m.id >= %s AND m.id < %s", [start, start + BACKFILL_BATCH])
    schema_editor.execute(DROP_INVALID_INDEX)
    schema_editor.execute(INDEX.replace("CREATE INDEX", "CREATE INDEX CONCURRENTLY", 1))


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for statement in POSTGRES_BACKWARD:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("chat", "0024_thread_sidebar_indexes")]

    operations = [migrations.RunPython(forward, backward)]
