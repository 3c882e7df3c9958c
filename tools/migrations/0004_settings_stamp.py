import uuid

from django.db import migrations, models


def create_stamp(apps, schema_editor):
    apps.get_model("tools", "SettingsStamp").objects.using(schema_editor.connection.alias).create(
        pk=1, stamp=uuid.uuid4().hex
    )


def drop_triggers(apps, schema_editor):
    """Back before the stamp's table: the triggers that change it (installed after migrate) go first, or every
    write to the tables they watch would fail for want of it (tools/settings_cache.py)."""
    from tools.settings_cache import drop_triggers

    drop_triggers(using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    dependencies = [("tools", "0003_encrypt_headers")]

    operations = [
        migrations.CreateModel(
            name="SettingsStamp",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("stamp", models.CharField(max_length=32)),
            ],
        ),
        migrations.RunPython(create_stamp, drop_triggers),
    ]
