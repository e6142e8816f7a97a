"""The check an upload keeps (`Upload.result`), typed: what the dialog, the API, the
commands and the import read of a checked file, in one shape with a version.

The importer's `CheckResult` holds the file's plan, which is not kept (a 1,000-task file's
plan is rebuilt from the file by the import itself); this holds what is shown and compared
before that: the verdict, the problems and warnings as the API carries them
(`Problem.to_json`), the mapping, the preview's rows, and what the check worked out about
the dataset the file goes into (ids it shares, and where they stand in the file).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from datasets_app.importing import checker
from datasets_app.importing.spec import CheckResult, FieldMap, TaskPreview

# Raised when the stored form changes; a check kept in an older form is read as far as it
# goes (every field has a default), and an upload lives a day.
VERSION = 1

# Problems and warnings as `Problem.to_json` writes them: the form the API and the problems
# download carry, and the dialog groups.
ProblemJson = dict[str, Any]


@dataclass(frozen=True)
class FileDataset:
    """What the file says of its dataset: its name and settings, and its criteria for
    every task (by id, with their weight in all)."""

    name: str = ""
    description: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    criteria: tuple[str, ...] = ()
    criteria_weight: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "settings": dict(self.settings),
            "criteria": list(self.criteria),
            "criteria_weight": self.criteria_weight,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FileDataset:
        return cls(
            name=data.get("name", ""),
            description=data.get("description", ""),
            settings=dict(data.get("settings") or {}),
            criteria=tuple(data.get("criteria") or ()),
            criteria_weight=float(data.get("criteria_weight", 0.0)),
        )


@dataclass(frozen=True)
class StoredCheck:
    """A checked file, as its upload keeps it."""

    ok: bool = False
    format: str | None = None
    task_count: int = 0
    detected: str = ""
    problems: tuple[ProblemJson, ...] = ()
    warnings: tuple[ProblemJson, ...] = ()
    mapping: FieldMap | None = None
    tasks: tuple[TaskPreview, ...] = ()
    notes: tuple[str, ...] = ()
    # The number the first task the file leaves without an id is given (after the
    # dataset's `task-N` ids as they were at the check): the import numbers them alike.
    first_task_number: int = 1
    # The files a zip's tasks attach: {member: [size, sha256]}, as the check measured them.
    members: dict[str, list[Any]] = field(default_factory=dict)
    # None when the file has problems (there is no plan to say it).
    dataset: FileDataset | None = None
    # [prompt, its length, expected answer, its length] of each task, cut for the preview.
    texts: tuple[list[Any], ...] = ()
    metadata_keys: tuple[str, ...] = ()
    # Of the tasks whose ids the dataset had at the check: {id: digest}, for Replace.
    digests: dict[str, str] = field(default_factory=dict)
    # The preview of the tasks as added (graded by the dataset's criteria for every task
    # too); None without a dataset, where they are `tasks`.
    added_tasks: tuple[TaskPreview, ...] | None = None
    # {task index: [file, row, line]} of the tasks whose ids the dataset already has.
    places: dict[str, list[Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, result: CheckResult) -> StoredCheck:
        """The importer's check, as kept: the plan's facts, not the plan."""
        plan = result.plan
        return cls(
            ok=result.ok,
            format=result.format,
            task_count=result.task_count,
            detected=result.detected,
            problems=tuple(problem.to_json() for problem in result.problems),
            warnings=tuple(warning.to_json() for warning in result.warnings),
            mapping=result.mapping,
            tasks=tuple(checker.preview(result)),
            notes=tuple(result.notes),
            dataset=None
            if plan is None
            else FileDataset(
                name=plan.name,
                description=plan.description,
                settings=dict(plan.settings),
                criteria=tuple(c.id for c in plan.criteria),
                criteria_weight=math.fsum(c.weight for c in plan.criteria),
            ),
            metadata_keys=()
            if plan is None
            else tuple(dict.fromkeys(key for task in plan.tasks for key in task.metadata)),
        )

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> StoredCheck:
        """The check as `to_json` kept it; an upload not checked yet keeps `{}`."""
        data = data or {}
        added = data.get("added_tasks")
        return cls(
            ok=bool(data.get("ok")),
            format=data.get("format"),
            task_count=data.get("task_count", 0),
            detected=data.get("detected", ""),
            problems=tuple(data.get("problems") or ()),
            warnings=tuple(data.get("warnings") or ()),
            mapping=FieldMap.from_json(data["mapping"]) if data.get("mapping") else None,
            tasks=tuple(map(TaskPreview.from_json, data.get("tasks") or ())),
            notes=tuple(data.get("notes") or ()),
            first_task_number=data.get("first_task_number", 1),
            members=dict(data.get("members") or {}),
            dataset=FileDataset.from_json(data["dataset"]) if data.get("dataset") else None,
            texts=tuple(data.get("texts") or ()),
            metadata_keys=tuple(data.get("metadata_keys") or ()),
            digests=dict(data.get("digests") or {}),
            added_tasks=None if added is None else tuple(map(TaskPreview.from_json, added)),
            places=dict(data.get("places") or {}),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "ok": self.ok,
            "format": self.format,
            "task_count": self.task_count,
            "detected": self.detected,
            "problems": list(self.problems),
            "warnings": list(self.warnings),
            "mapping": self.mapping.to_json() if self.mapping is not None else None,
            "tasks": [task.to_json() for task in self.tasks],
            "notes": list(self.notes),
            "first_task_number": self.first_task_number,
            "members": dict(self.members),
            "dataset": self.dataset.to_json() if self.dataset is not None else None,
            "texts": list(self.texts),
            "metadata_keys": list(self.metadata_keys),
            "digests": dict(self.digests),
            "added_tasks": None
            if self.added_tasks is None
            else [task.to_json() for task in self.added_tasks],
            "places": dict(self.places),
        }

    @property
    def file_ids(self) -> list[str]:
        """The ids of the file's tasks, in its order."""
        return [task.id for task in self.tasks]

    @property
    def codes(self) -> set[str]:
        """The codes of everything the check said, problems and warnings."""
        return {item.get("code", "") for item in (*self.problems, *self.warnings)}

    @property
    def mapping_step_due(self) -> bool:
        """Whether the dialog asks the person which column is which: the checker guessed
        (or remembered) the mapping, or the person's own mapping left the file with
        problems."""
        mapping = self.mapping
        if mapping is None or not mapping.sources:
            return False
        return mapping.needs_confirmation or (mapping.how == "given" and not self.ok)
