import uuid

from django.db import migrations, models


def create_stamp(apps, schema_editor):
    apps.get_model("tools", "SettingsStamp").objects.using(schema_editor.connection.alias).create(
        pk=1, stamp=uuid.uuid4().hex
    )


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
        migrations.RunPython(create_stamp, migrations.RunPython.noop),
    ]
