"""The four starter templates the import dialog offers, built by code.

Rubric criteria and Expected answers are the reference page's templates ("Dataset files"),
with a `description` that explains the format to whoever opens the file; Files in and out
is a zip the zip reader builds; Blank has everything but tasks. Each template but Blank
passes the checker as it is (tests say so).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from datasets_app.importing import zip_format
from datasets_app.importing.document import FORMAT_NAME, FORMAT_VERSION


@dataclass(frozen=True)
class Starter:
    """One template: what the dialog shows (`title`) and the file it downloads."""

    slug: str
    title: str
    file_name: str
    content_type: str
    build: Callable[[], bytes]


def _json(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


RUBRIC_DESCRIPTION = (
    "Rubric template. Use it when there is no single right answer, only things a good answer "
    "must do. Each criterion has an id, the criterion itself and a weight (a blank weight "
    'counts as 1). Criteria in "criteria" at the top grade every task; criteria inside a task '
    "grade only that task. A criterion with no verifier of its own is checked the way "
    '"defaultVerifier" in "settings" says. Verifier kinds: llm_judge (a model checks the '
    "criterion; its instructions can use {{criterion}}, {{prompt}}, {{output}} and "
    "{{expected}}), "
    "agent_judge, exact_match and code_verifier (Python defining verify(task, output); Python "
    "checks need your administrator to turn them on). Give a task an expected answer too and "
    'it lands as a rubric with "Matches the expected answer" as one of its criteria.'
)

LENGTH_CHECK = (
    "from context_verifiers import Verdict\n\n"
    "def verify(task, output):\n"
    "    words = len(output.text.split())\n"
    '    return Verdict.boolean(passed=words <= 150, reasoning=f"{words} words")\n'
)


def rubric_criteria() -> bytes:
    """The page's Rubric template, with a description of the format."""
    return _json(
        {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "name": "Support and analytics rubric (scorecard)",
            "description": RUBRIC_DESCRIPTION,
            "settings": {
                "defaultVerifier": {
                    "kind": "llm_judge",
                    "outputType": "boolean",
                    "instructions": (
                        "You are grading an AI agent's response against one rubric criterion. "
                        "Pass only if the response clearly satisfies the criterion. Criterion: "
                        "{{criterion}}. Task: {{prompt}}. Response: {{output}}"
                    ),
                }
            },
            "criteria": [
                {
                    "id": "no-invented-facts",
                    "criterion": "Does not state any number or fact that is not in the prompt "
                    "or attached files.",
                    "weight": 20,
                }
            ],
            "tasks": [
                {
                    "id": "delayed-shipment",
                    "name": "Delayed shipment email",
                    "prompt": "Draft an email to a customer whose order #4417 will arrive 5 "
                    "days late because of a carrier delay. The new delivery date is 14 "
                    "November. Offer free shipping on their next order.",
                    "criteria": [
                        {
                            "id": "apology",
                            "criterion": "Apologizes for the delay once and sincerely.",
                            "weight": 10,
                        },
                        {
                            "id": "new-date",
                            "criterion": "States the new delivery date (14 November).",
                            "weight": 20,
                        },
                        {
                            "id": "offer",
                            "criterion": "Mentions the free shipping offer on the next order.",
                            "weight": 20,
                        },
                        {
                            "id": "length",
                            "criterion": "Is 150 words or fewer.",
                            "weight": 10,
                            "verifier": {"kind": "code_verifier", "code": LENGTH_CHECK},
                        },
                        {
                            "id": "tone",
                            "criterion": "Uses plain customer-facing language with no internal "
                            "jargon (no carrier codes or warehouse names).",
                            "weight": 10,
                            "verifier": {
                                "kind": "llm_judge",
                                "instructions": "Fail the response if it contains any internal "
                                "codes, ticket ids or warehouse names. Criterion: "
                                "{{criterion}}. Response: {{output}}",
                            },
                        },
                    ],
                }
            ],
        }
    )


def expected_answers() -> bytes:
    """The page's Expected answers template."""
    return _json(
        {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "name": "Finance QA (expected answers)",
            "description": "One expected answer per task. Blank verifier = agent judge "
            "comparing the output to the expected answer and scoring 0 to 1.",
            "settings": {"expectedAnswerVerifier": {"kind": "agent_judge", "outputType": "float"}},
            "tasks": [
                {
                    "id": "yoy-growth",
                    "name": "Year-over-year revenue growth",
                    "prompt": "Revenue was $120M in fiscal 2024 and $150M in fiscal 2025. What "
                    "was the year-over-year growth rate? Show the calculation.",
                    "expected": {"text": "25% growth: (150 - 120) / 120 = 0.25."},
                },
                {
                    "id": "q3-end-date",
                    "name": "Quarter end date",
                    "prompt": "Return only the ISO 8601 date of the last day of calendar Q3 "
                    "2025. No other text.",
                    "expected": {"text": "2025-09-30", "verifier": {"kind": "exact_match"}},
                },
            ],
        }
    )


BLANK_DESCRIPTION = (
    "Blank dataset file. Fill in: the dataset's name and this description; under tasks, one "
    'object per task with an "id", a "name", a "prompt" and either "expected": {"text": '
    '"..."} (the right answer) or "criteria": [{"id": "...", "criterion": "...", "weight": '
    '1}] (what a good answer does), or both. Criteria under "criteria" at the top grade '
    "every task. Leave settings empty to grade expected answers with an agent judge (0 to 1) "
    "and criteria with an LLM judge (pass or fail). A file can hold up to 1,000 tasks."
)


def blank() -> bytes:
    """Everything a dataset file has, with no tasks yet."""
    return _json(
        {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "name": "",
            "description": BLANK_DESCRIPTION,
            "settings": {},
            "criteria": [],
            "tasks": [],
        }
    )


def files_in_and_out() -> bytes:
    """A zip with a dataset file and the files its tasks attach (built by the zip reader)."""
    return zip_format.files_in_and_out_template()


STARTERS: tuple[Starter, ...] = (
    Starter(
        "rubric-criteria",
        "Rubric criteria",
        "rubric-criteria.json",
        "application/json",
        rubric_criteria,
    ),
    Starter(
        "expected-answers",
        "Expected answers",
        "expected-answers.json",
        "application/json",
        expected_answers,
    ),
    Starter(
        "files-in-and-out",
        "Files in and out",
        "files-in-and-out.zip",
        "application/zip",
        files_in_and_out,
    ),
    Starter("blank", "Blank", "blank.json", "application/json", blank),
)


def starter(slug: str) -> Starter | None:
    """The starter with this slug, or None."""
    return next((item for item in STARTERS if item.slug == slug), None)
