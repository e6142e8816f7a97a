"""The Celery app. With no CELERY_BROKER_URL, tasks run eagerly in the web process."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextevals.settings")

app = Celery("contextevals")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# Python checks' own queue (datasets_app/verifier_tasks.py), for the Procfile's verifiers worker.
app.autodiscover_tasks(related_name="verifier_tasks")
