import django.db.models.deletion
from django.db import migrations, models


def link_existing_messages(apps, schema_editor):
    """Every stored message is on its thread's one branch (active, the default): a user message's parent is the
    message before it, an answer right after a user message has that message as its parent; a summary covers the
    message at its order."""
    Message = apps.get_model("chat", "Message")
    ThreadSummary = apps.get_model("chat", "ThreadSummary")
    rows = Message.objects.order_by("thread_id", "order").values_list("pk", "thread_id", "role")
    linked, previous = [], None
    for pk, thread_id, role in rows.iterator(chunk_size=2000):
        before = previous if previous is not None and previous[1] == thread_id else None
        if role == "user" and before is not None:
            linked.append(Message(pk=pk, parent_id=before[0]))
        elif role == "assistant" and before is not None and before[2] == "user":
            linked.append(Message(pk=pk, parent_id=before[0]))
        previous = (pk, thread_id, role)
        if len(linked) >= 1000:
            Message.objects.bulk_update(linked, ["parent"])
            linked = []
    if linked:
        Message.objects.bulk_update(linked, ["parent"])
    for summary in ThreadSummary.objects.filter(through_message__isnull=True):
        summary.through_message = Message.objects.filter(
            thread_id=summary.thread_id, order=summary.through_order
        ).first()
        summary.save(update_fields=["through_message"])


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0014_thread_pin_archive"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="message",
            name="message_order_unique_in_thread",
        ),
        migrations.AddField(
            model_name="message",
            name="active",
            field=models.BooleanField(default=True),
        ),
        migrations.AddField(
            model_name="message",
            name="hidden_under",
            field=models.BigIntegerField(blank=True, db_index=True, null=True),
        ),
        migrations.AddField(
            model_name="message",
            name="parent",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to="chat.message"
            ),
        ),
        migrations.AddField(
            model_name="thread",
            name="has_versions",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="threadsummary",
            name="through_message",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to="chat.message"
            ),
        ),
        migrations.AddConstraint(
            model_name="message",
            constraint=models.UniqueConstraint(
                condition=models.Q(("active", True)), fields=("thread", "order"), name="message_order_unique_in_branch"
            ),
        ),
        migrations.RunPython(link_existing_messages, migrations.RunPython.noop),
    ]
