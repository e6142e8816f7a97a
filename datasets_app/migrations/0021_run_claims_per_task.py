"""A run's tasks are claimed, not each criterion: a worker claims a task (`RunResult.lease`),
grades its criteria and inserts their outcomes together, once. An outcome row is made only
when it is written, where each was made pending when the run started and then updated
twice (claimed, written): a run of 1,000 tasks × 5 criteria wrote 15,000 rows for 5,000
verdicts, and a task whose criteria two workers shared had to be scored from both.

The criteria rows never written (pending or claimed) carry nothing the version does not
hold, and are removed: a criterion without a row shows as pending. Of a run still being
graded, the tasks not scored yet lose what was written of them too (they are graded again,
whole, by the new claim) and its count of written outcomes follows; an ended run keeps
every verdict it wrote.
"""

from django.db import migrations, models

NOT_WRITTEN = ("pending", "claimed")
GOING = ("queued", "grading")


def outcomes_written_whole(apps, schema_editor):
    Run = apps.get_model("datasets_app", "Run")
    RunOutcome = apps.get_model("datasets_app", "RunOutcome")
    RunOutcome.objects.filter(status__in=NOT_WRITTEN).delete()
    going = Run.objects.filter(state__in=GOING)
    RunOutcome.objects.filter(run__in=going, result__graded=False).delete()
    for run in going:
        Run.objects.filter(pk=run.pk).update(
            outcomes_done=RunOutcome.objects.filter(run=run).count()
        )


class Migration(migrations.Migration):
    dependencies = [
        ("datasets_app", "0020_version_task_count"),
    ]

    operations = [
        migrations.RunPython(outcomes_written_whole, migrations.RunPython.noop),
        migrations.RemoveIndex(
            model_name="runoutcome",
            name="runoutcome_run_status",
        ),
        migrations.RemoveField(
            model_name="runoutcome",
            name="claimed_at",
        ),
        migrations.RemoveField(
            model_name="runoutcome",
            name="lease",
        ),
        migrations.AddField(
            model_name="runresult",
            name="claimed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="runresult",
            name="lease",
            field=models.CharField(blank=True, max_length=64),
        ),
    ]
