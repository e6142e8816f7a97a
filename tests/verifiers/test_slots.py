"""At most JUDGE_CONCURRENCY requests in flight to one judge's server, counted by the local
chat completions server itself (`most_in_flight`): in one process, however many threads
and judges ask it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from context_verifiers.judges import Judge
from datasets_app.importing.spec import Verifier
from tests.verifiers.test_judges import TASK, answer

BOOLEAN = Verifier(kind="llm_judge", output_type="boolean", instructions="{{output}}")


def grade_at_once(judges: list[Judge], calls: int, threads: int) -> list[str]:
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(
            pool.map(
                lambda n: (
                    judges[n % len(judges)].grade(BOOLEAN, TASK, answer(f"correct {n}")).status
                ),
                range(calls),
            )
        )


def test_two_judges_of_one_server_share_its_limit_in_a_process(judge_config, judge_server):
    judge_server.latency = 0.05
    config = replace(judge_config, concurrency=3, seed=None)
    judges = [Judge(config), Judge(config)]

    statuses = grade_at_once(judges, calls=24, threads=12)

    assert statuses == ["passed"] * 24
    assert len(judge_server.requests) == 24
    assert judge_server.most_in_flight == 3


def test_a_reply_from_the_cache_takes_no_slot(judge_config, judge_server):
    judge = Judge(replace(judge_config, concurrency=1))
    assert judge.grade(BOOLEAN, TASK, answer("correct")).status == "passed"

    with judge.slots.hold():  # the only slot, held: a request would wait for it for ever
        again = judge.grade(BOOLEAN, TASK, answer("correct"))

    assert again.status == "passed" and again.calls[0].cached
    assert len(judge_server.requests) == 1
