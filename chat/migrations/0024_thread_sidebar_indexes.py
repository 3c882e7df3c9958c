"""The sidebar of a person with many chats (issue 42): its two lists read in their order, as far as they show.

- thread_sidebar: the chats not archived, pinned first (newest pin first), then by activity (chat/store/turns.py
  list_threads). Without it, every chat of the person's was read and sorted for the first 200 on each page.
- thread_archived: the "Archived" group, the last archived first (list_archived_threads).

Both are partial (a chat is in one or the other). On a large PostgreSQL installation they can be made CONCURRENTLY by
hand first, with the same names (docs/deploy.md, "Indexes").
"""

from django.db import migrations, models

import chat.indexes


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0023_thread_pages_indexes"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="thread",
            index=chat.indexes.DescNullsLastIndex(
                models.F("owner"),
                models.OrderBy(models.F("pinned_at"), descending=True, nulls_last=True),
                models.OrderBy(models.F("updated_at"), descending=True),
                condition=models.Q(("archived_at__isnull", True)),
                name="thread_sidebar",
            ),
        ),
        migrations.AddIndex(
            model_name="thread",
            index=models.Index(
                condition=models.Q(("archived_at__isnull", False)),
                fields=["owner", "-archived_at"],
                name="thread_archived",
            ),
        ),
    ]
