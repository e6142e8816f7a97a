"""Deleting a draft asks first, and the question works without JavaScript; removing a saved
task archives it at once, as before (versions and runs keep it)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from datasets_app.models import Task, TaskState
from datasets_app.services import datasets
from tests.as_rendered import forms_of

pytestmark = pytest.mark.django_db


def test_delete_on_a_draft_s_page_asks_before_anything_goes(auth_client, make_dataset):
    # The defect: Delete was a form that deleted the draft at once, with no way back.
    dataset = make_dataset(tasks=1)
    draft = dataset.tasks.get()
    delete_url = reverse("datasets_app:task_delete", args=[dataset.pk, draft.pk])
    page = auth_client.get(draft.get_absolute_url()).content.decode()
    assert not [form for form in forms_of(page) if form.attrs.get("action") == delete_url]
    assert f'href="{delete_url}"' in page

    question = auth_client.get(delete_url)
    assert question.status_code == 200
    text = question.content.decode()
    assert "Delete t1?" in text and "cannot be undone" in text
    assert Task.objects.filter(pk=draft.pk).exists(), "asking deletes nothing"
    assert [f for f in forms_of(text) if f.attrs.get("action") == delete_url], "the button"
    assert f'href="{draft.get_absolute_url()}"' in text  # Cancel

    response = auth_client.post(delete_url)
    assert response.status_code == 302
    assert not Task.objects.filter(pk=draft.pk).exists()


def test_remove_on_a_saved_task_s_page_archives_it_at_once(auth_client, make_dataset, user):
    dataset = make_dataset(tasks=1)
    datasets.version_save(dataset=dataset, user=user)
    saved = dataset.tasks.get()
    delete_url = reverse("datasets_app:task_delete", args=[dataset.pk, saved.pk])
    page = auth_client.get(saved.get_absolute_url()).content.decode()
    assert [form for form in forms_of(page) if form.attrs.get("action") == delete_url]
    auth_client.post(delete_url)
    saved.refresh_from_db()
    assert saved.state == TaskState.ARCHIVED
