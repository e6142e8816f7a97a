"""What changed from one saved version to the next: tasks added, removed and changed (with
the text differences), criteria for every task and settings changed.

A version's tasks are rows that never change (migration 0007), and a task saved unchanged
stays the same row from version to version: only the rows one version holds and the other
does not are read, never the whole of either version (nor its snapshot). A saved version
never changes, so its changes are worked out once and kept in the cache.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache

from datasets_app import selectors, wording
from datasets_app.importing.spec import CriterionSpec, TaskSpec
from datasets_app.models import Task, TaskFile, Version

# The page lists this many tasks of each kind (added, removed, changed) and counts the rest:
# a Replace of 10,000 tasks is a number, not a page of 10,000 rows.
SHOWN = 50
# Past this many words a text is compared line by line: word by word, two long texts cost
# what the square of their length does.
WORD_DIFF_TOKENS = 4_000
# Unchanged text either side of a change is shown up to this many characters.
CONTEXT_CHARS = 160


@dataclass(frozen=True)
class Piece:
    """A stretch of a text difference: `kind` is "same", "removed" or "added"."""

    kind: str
    text: str


@dataclass(frozen=True)
class FieldChange:
    """One thing of a task (or of the version) that changed: before, after, and the
    difference between the two as pieces."""

    label: str
    before: str
    after: str
    pieces: tuple[Piece, ...]


@dataclass(frozen=True)
class TaskRef:
    """A task as the list of changes names it (its page is found by its id)."""

    task_id: str
    name: str


@dataclass(frozen=True)
class TaskChange:
    task: TaskRef
    fields: tuple[FieldChange, ...]


@dataclass(frozen=True)
class VersionChanges:
    """What `number` changed since the version before it (`previous`, None for the first)."""

    number: int
    previous: int | None
    added: tuple[TaskRef, ...]
    added_count: int
    removed: tuple[TaskRef, ...]
    removed_count: int
    changed: tuple[TaskChange, ...]
    changed_count: int
    unchanged_count: int
    criteria: tuple[FieldChange, ...]
    settings: tuple[FieldChange, ...]

    @property
    def nothing(self) -> bool:
        return not (
            self.added_count
            or self.removed_count
            or self.changed_count
            or self.criteria
            or self.settings
        )


def text_pieces(before: str, after: str) -> tuple[Piece, ...]:
    """The difference between two texts, word by word (line by line for long ones).

    Changes apart by a space alone read as one change ("5 days" became "a week"), not as
    two words each struck and added.
    """
    tokens = re.compile(r"\s+|\w+|[^\w\s]")
    old, new = tokens.findall(before), tokens.findall(after)
    if len(old) + len(new) > WORD_DIFF_TOKENS:
        old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    blocks: list[list[str]] = []  # ["same", text] or ["change", removed, added]
    for index, (op, i1, i2, j1, j2) in enumerate(opcodes):
        removed, added = "".join(old[i1:i2]), "".join(new[j1:j2])
        between = 0 < index < len(opcodes) - 1 and op == "equal" and not removed.strip()
        if op == "equal" and not between:
            blocks.append(["same", removed])
        elif blocks and blocks[-1][0] == "change":
            blocks[-1][1] += removed
            blocks[-1][2] += added
        else:
            blocks.append(["change", removed, added])
    pieces: list[Piece] = []
    for index, block in enumerate(blocks):
        if block[0] == "same":
            text = _around(block[1], first=index == 0, last=index == len(blocks) - 1)
            pieces.append(Piece("same", text))
            continue
        _change, removed, added = block
        pieces += [Piece(k, text) for k, text in (("removed", removed), ("added", added)) if text]
    return tuple(pieces)


def _around(text: str, *, first: bool, last: bool) -> str:
    """Text that did not change, cut to what stands next to a change: a one-word edit of a
    long prompt shows the words around it, not the whole prompt again."""
    if len(text) <= 2 * CONTEXT_CHARS:
        return text
    head = "" if first else text[:CONTEXT_CHARS]
    tail = "" if last else text[-CONTEXT_CHARS:]
    return f"{head}…{tail}"


def _verifier_text(verifier: Any) -> str:
    document = verifier.to_json() if verifier is not None else None
    return json.dumps(document, indent=2, sort_keys=True) if document else ""


def _criterion_text(criterion: CriterionSpec) -> str:
    verifier = criterion.verifier.to_json() if criterion.verifier else None
    kind = wording.verifier_kind((verifier or {}).get("kind")) or "the dataset's default"
    text = f"{criterion.criterion}\n(weight {wording.weight(criterion.weight)}, graded by {kind})"
    if verifier and (verifier.get("instructions") or verifier.get("code")):
        text += "\n" + (verifier.get("instructions") or verifier.get("code") or "")
    return text


def _criteria_facets(criteria: tuple[CriterionSpec, ...]) -> dict[str, str]:
    return {f"Criterion {c.id}": _criterion_text(c) for c in criteria}


def _files_text(task: TaskSpec, role: str) -> str:
    files = task.input_files if role == TaskFile.Role.INPUT else task.expected_files
    return "\n".join(f"{f.name} ({f.url or 'SHA-256 ' + (f.sha256 or '')[:12]})" for f in files)


def _task_facets(task: TaskSpec) -> dict[str, str]:
    """What a person reads of a task, each thing as text to compare."""
    return {
        "Name": task.name,
        "Prompt": task.prompt,
        "Expected answer": task.expected_text or "",
        "Expected answer's verifier": _verifier_text(task.expected_verifier),
        **_criteria_facets(task.criteria),
        "Input files": _files_text(task, TaskFile.Role.INPUT),
        "Expected files": _files_text(task, TaskFile.Role.EXPECTED),
        **{f"Metadata {key}": json.dumps(value) for key, value in task.metadata.items()},
        "Retrieval evidence": json.dumps(task.evidence, indent=2, sort_keys=True)
        if task.evidence
        else "",
    }


def facet_changes(before: dict[str, str], after: dict[str, str]) -> tuple[FieldChange, ...]:
    """Each thing whose text differs, in the order the newer side lists them."""
    labels = [*after, *(label for label in before if label not in after)]
    return tuple(
        FieldChange(label, old, new, text_pieces(old, new))
        for label in labels
        if (old := before.get(label, "")) != (new := after.get(label, ""))
    )


# The settings as the Settings page names them; another key (set in the admin) as it is.
SETTING_NAMES = {
    "expectedAnswerVerifier": wording.EXPECTED_ANSWER_SETTING,
    "defaultVerifier": wording.DEFAULT_VERIFIER_SETTING,
}


def _head_facets(head: selectors.VersionHead) -> dict[str, str]:
    """A version's name and settings, each as text to compare."""
    return {
        "Name": head.name,
        **{
            SETTING_NAMES.get(key, key): json.dumps(value, indent=2, sort_keys=True)
            for key, value in sorted(head.settings.items())
        },
    }


def _refs(rows: list[dict[str, Any]], ids: list[str]) -> tuple[TaskRef, ...]:
    by_id = {row["task_id"]: row for row in rows}
    return tuple(TaskRef(task_id=i, name=by_id[i]["name"]) for i in ids[:SHOWN])


def _rows_only_in(version: Version, other: Version) -> list[dict[str, Any]]:
    """The task rows `version` holds and `other` does not, in the dataset's order."""
    rows = (
        selectors.version_tasks(version)
        .exclude(pk__in=selectors.version_tasks(other).values("pk"))
        .values_list("pk", "task_id", "name")
    )
    return [{"pk": pk, "task_id": task_id, "name": name} for pk, task_id, name in rows]


def _changed(pairs: list[tuple[int, int]]) -> list[tuple[int, int, tuple[FieldChange, ...]]]:
    """(new pk, old pk, what differs) of each pair of rows of one task id whose content
    differs (a Replace makes new rows for tasks it leaves as they were)."""
    pks = [pk for pair in pairs for pk in pair]
    rows = Task.objects.filter(pk__in=pks).prefetch_related("criteria", "files")
    specs = {task.pk: selectors.task_spec(task) for task in rows}
    found = []
    for new, old in pairs:
        fields = facet_changes(_task_facets(specs[old]), _task_facets(specs[new]))
        if fields:
            found.append((new, old, fields))
    return found


def version_changes(version: Version) -> VersionChanges:
    """What `version` changed since the one before it; worked out once, then cached."""
    key = f"version-changes:{version.pk}:{version.created_at.timestamp()}"
    changes: VersionChanges | None = cache.get(key)
    if changes is None:
        changes = _version_changes(version)
        cache.set(key, changes, timeout=None)
    return changes


def _version_changes(version: Version) -> VersionChanges:
    previous = (
        Version.objects.filter(dataset_id=version.dataset_id, number__lt=version.number)
        .defer("snapshot")
        .order_by("-number")
        .first()
    )
    if previous is None:
        return VersionChanges(version.number, None, (), 0, (), 0, (), 0, 0, (), ())
    new_rows, old_rows = _rows_only_in(version, previous), _rows_only_in(previous, version)
    old_ids = {row["task_id"]: row["pk"] for row in old_rows}
    new_ids = {row["task_id"]: row["pk"] for row in new_rows}
    added = [row["task_id"] for row in new_rows if row["task_id"] not in old_ids]
    removed = [row["task_id"] for row in old_rows if row["task_id"] not in new_ids]
    pairs = [(new_ids[i], old_ids[i]) for i in new_ids if i in old_ids]
    changed = _changed(pairs)
    by_pk = {row["pk"]: row for row in new_rows}
    held = selectors.version_task_count(version)
    head, before = selectors.version_head(version), selectors.version_head(previous)
    return VersionChanges(
        number=version.number,
        previous=previous.number,
        added=_refs(new_rows, added),
        added_count=len(added),
        removed=_refs(old_rows, removed),
        removed_count=len(removed),
        changed=tuple(
            TaskChange(
                task=TaskRef(task_id=by_pk[new]["task_id"], name=by_pk[new]["name"]),
                fields=fields,
            )
            for new, _old, fields in changed[:SHOWN]
        ),
        changed_count=len(changed),
        unchanged_count=held - len(added) - len(changed),
        criteria=facet_changes(_criteria_facets(before.criteria), _criteria_facets(head.criteria)),
        settings=facet_changes(_head_facets(before), _head_facets(head)),
    )
