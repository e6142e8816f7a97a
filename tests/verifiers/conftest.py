"""Fixtures for the verifiers: a real judge server on 127.0.0.1 and a judge pointed at it."""

from __future__ import annotations

import pytest

from context_verifiers.judges import Judge, JudgeConfig
from tests.verifiers.judge_server import JudgeServer


@pytest.fixture
def judge_server():
    server = JudgeServer().start()
    yield server
    server.stop()


@pytest.fixture
def judge_config(judge_server):
    return JudgeConfig(
        base_url=judge_server.base_url,
        api_key="test-key",
        model="local-judge",
        timeout_seconds=5,
        seed=7,
    )


@pytest.fixture
def judge(judge_config):
    return Judge(judge_config)
