from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('datasets_app', '0008_sitesettings_sandbox_self_test'),
    ]

    operations = [
        migrations.AddField(
            model_name='upload',
            name='heartbeat_at',
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
    ]
