"""The foundation's pages as a person uses them."""

import pytest
from django.urls import reverse

from datasets_app.models import Dataset, TaskState

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        reverse("datasets_app:dataset_list"),
        reverse("datasets_app:dataset_create"),
        reverse("datasets_app:dataset_detail", args=[1]),
    ],
)
def test_every_page_asks_for_a_login(client, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_a_person_creates_a_dataset_sees_it_and_saves_it_as_v1(auth_client, make_dataset):
    response = auth_client.post(
        reverse("datasets_app:dataset_create"), {"name": "Support rubric", "description": "d"}
    )
    dataset = Dataset.objects.get(name="Support rubric")
    assert response.url == dataset.get_absolute_url()

    listing = auth_client.get(reverse("datasets_app:dataset_list"))
    assert "Support rubric" in listing.content.decode()

    seeded = make_dataset(tasks=2)
    page = auth_client.get(seeded.get_absolute_url()).content.decode()
    assert "Save as v1" in page
    assert "Draft" in page

    response = auth_client.post(reverse("datasets_app:version_save", args=[seeded.pk]), follow=True)
    page = response.content.decode()
    assert "Saved Finance QA as v1." in page
    assert "Save as v2" not in page, "no drafts left, so no save button"
    assert set(seeded.tasks.values_list("state", flat=True)) == {TaskState.SAVED}


def test_the_dataset_page_shows_how_each_task_is_scored(auth_client, make_dataset):
    dataset = make_dataset(tasks=2)
    page = auth_client.get(dataset.get_absolute_url()).content.decode()
    assert "expected answer" in page  # t1: no criteria
    assert "criteria" in page  # t2: one criterion of weight 2


def test_another_persons_dataset_is_not_found(client, other_user, make_dataset):
    dataset = make_dataset()
    client.force_login(other_user)
    assert client.get(dataset.get_absolute_url()).status_code == 404
    assert client.post(reverse("datasets_app:version_save", args=[dataset.pk])).status_code == 404


def test_saving_is_a_post_only(auth_client, make_dataset):
    dataset = make_dataset(tasks=1)
    response = auth_client.get(reverse("datasets_app:version_save", args=[dataset.pk]))
    assert response.status_code == 405


def test_the_dataset_page_runs_a_fixed_number_of_queries(
    auth_client, make_dataset, django_assert_max_num_queries
):
    dataset = make_dataset(tasks=30)
    # The page of tasks costs four: the count, its rows, their criteria and their files.
    with django_assert_max_num_queries(14):
        auth_client.get(dataset.get_absolute_url())
