"""A long thread a page at a time (issue 42): the two reads of a page that no index served.

- message_first_question: the versions of a thread's first question (the only user messages without a parent) are
  read through it, not through the thread's every parentless message (tool results, later model calls).
- run_latest_in_thread: a snapshot's latest run of the thread in one index step, not a sort of all its runs.

Both are small (one row per thread's first question and its edits; one per run). On a large PostgreSQL installation
they can be made CONCURRENTLY by hand first, with the same names.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0001_initial"),
        ("chat", "0022_chat_defaults"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="message",
            index=models.Index(
                condition=models.Q(("parent__isnull", True), ("role", "user")),
                fields=["thread", "order"],
                name="message_first_question",
            ),
        ),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(fields=["thread", "-started_at", "-id"], name="run_latest_in_thread"),
        ),
    ]
