"""Saved versions to run, and the site's judge pointed at the local test server."""

from __future__ import annotations

import pytest

from context_verifiers.judges import JudgeConfig
from datasets_app.models import Criterion, Dataset, Task, Version
from datasets_app.services import datasets
from tests.verifiers.conftest import judge_server  # noqa: F401 - the library's fixture

EXACT = {"kind": "exact_match"}
JUDGED = {"kind": "llm_judge", "outputType": "boolean", "instructions": "{{criterion}}\n{{output}}"}


def saved_version(
    user,
    *,
    tasks: int = 3,
    judged: bool = False,
    name: str = "Arithmetic",
    verifier: dict | None = None,
) -> Version:
    """A dataset of `tasks` tasks answered `Answer N` (exact match), each with a criterion
    `clear` when `judged` (judged, or checked by `verifier` when given), saved as v1."""
    dataset = Dataset.objects.create(
        owner=user, name=name, settings={"expectedAnswerVerifier": EXACT}
    )
    for index in range(tasks):
        task = Task.objects.create(
            dataset=dataset,
            task_id=f"t{index + 1}",
            name=f"Task {index + 1}",
            prompt=f"Prompt {index + 1}",
            expected_text=f"Answer {index + 1}",
            position=index,
        )
        if judged or verifier:
            Criterion.objects.create(
                dataset=dataset,
                task=task,
                criterion_id="clear",
                text="Is clear",
                verifier=verifier or JUDGED,
                position=1,
            )
    return datasets.version_save(dataset=dataset, user=user)


@pytest.fixture(autouse=True)
def no_judge(settings):
    settings.JUDGE = JudgeConfig()


@pytest.fixture
def site_judge(settings, judge_server):  # noqa: F811
    settings.JUDGE = JudgeConfig(
        base_url=judge_server.base_url, model="local-judge", seed=7, concurrency=4
    )
    return judge_server
