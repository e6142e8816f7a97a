from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('datasets_app', '0006_task_reviewed'),
    ]

    operations = [
        migrations.AddField(
            model_name='upload',
            name='heartbeat_at',
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
    ]
