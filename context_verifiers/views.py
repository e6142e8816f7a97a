"""What `verify(task, output)` receives: read-only views of a task and an agent's output.

Standard library only, like `verdict`: the sandbox rebuilds these from JSON (`from_json`)
inside a `python -I` process, and the app writes them with `to_json`.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

# What a verifier is given of one attached file. The page allows 10 MiB a file and 20 files
# a task; handing all of that (200 MiB, more again as JSON) to every check would make each
# check's input larger than its memory limit. 1 MiB of each file is more than a check that
# reads a CSV or a report needs; `truncated` says when a file was cut.
MAX_FILE_VIEW_BYTES = 1024 * 1024


class ViewError(ValueError):
    """A task or output document that is not the shape `to_json` writes."""


def _text(data: dict[str, Any], key: str, *, where: str, optional: bool = False) -> Any:
    value = data.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ViewError(f"{where}.{key} must be text")
    return value


def _object(data: object, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ViewError(f"{where} must be a JSON object")
    return data


@dataclass(frozen=True, slots=True)
class FileView:
    """An input or expected file: its name and up to MAX_FILE_VIEW_BYTES of its content."""

    name: str
    data: bytes
    # The whole file's size, which is more than len(data) when the file was cut.
    size: int
    truncated: bool = False

    @classmethod
    def of(cls, name: str, data: bytes, *, limit: int = MAX_FILE_VIEW_BYTES) -> FileView:
        """A view of a file's bytes, cut at `limit`."""
        return cls(name=name, data=data[:limit], size=len(data), truncated=len(data) > limit)

    @property
    def text(self) -> str | None:
        """The content as UTF-8 text; None for a binary file (read `data` instead)."""
        # A file cut at the limit may end inside a character of up to 4 bytes: drop those.
        for cut in range(4 if self.truncated else 1):
            try:
                return self.data[: len(self.data) - cut].decode("utf-8")
            except UnicodeDecodeError:
                continue
        return None

    def to_json(self) -> dict[str, Any]:
        """`{"name", "text"}` for text, `{"name", "base64"}` otherwise, with size, truncated."""
        text = self.text
        data: dict[str, Any] = {"name": self.name}
        if text is not None:
            data["text"] = text
        else:
            data["base64"] = base64.b64encode(self.data).decode("ascii")
        data["size"] = self.size
        data["truncated"] = self.truncated
        return data

    @classmethod
    def from_json(cls, data: object, *, where: str = "file") -> FileView:
        item = _object(data, where)
        name = _text(item, "name", where=where)
        if isinstance(item.get("text"), str):
            content = item["text"].encode("utf-8")
        else:
            try:
                content = base64.b64decode(_text(item, "base64", where=where), validate=True)
            except binascii.Error as exc:
                raise ViewError(f"{where}.base64 is not base64") from exc
        size = item.get("size", len(content))
        if isinstance(size, bool) or not isinstance(size, int) or size < len(content):
            raise ViewError(f"{where}.size must be a whole number of bytes")
        return cls(name=name, data=content, size=size, truncated=bool(item.get("truncated")))


def _files(data: object, where: str) -> tuple[FileView, ...]:
    if data is None:
        return ()
    if not isinstance(data, list):
        raise ViewError(f"{where} must be a list")
    return tuple(FileView.from_json(item, where=f"{where}[{i}]") for i, item in enumerate(data))


@dataclass(frozen=True, slots=True)
class CriterionView:
    """The criterion being checked: its id, its text and its weight."""

    id: str
    text: str
    weight: float = 1.0

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "weight": self.weight}

    @classmethod
    def from_json(cls, data: object, *, where: str = "criterion") -> CriterionView:
        item = _object(data, where)
        weight = item.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise ViewError(f"{where}.weight must be a number")
        return cls(
            id=_text(item, "id", where=where),
            text=_text(item, "text", where=where),
            weight=float(weight),
        )


@dataclass(frozen=True, slots=True)
class TaskView:
    """The task a verifier grades: `task.prompt`, `task.expected`, `task.criterion.text`, ..."""

    id: str
    name: str
    prompt: str
    expected: str | None = None
    criterion: CriterionView | None = None
    input_files: tuple[FileView, ...] = ()
    expected_files: tuple[FileView, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "prompt": self.prompt,
            "expected": self.expected,
            "criterion": self.criterion.to_json() if self.criterion else None,
            "input_files": [file.to_json() for file in self.input_files],
            "expected_files": [file.to_json() for file in self.expected_files],
        }

    @classmethod
    def from_json(cls, data: object) -> TaskView:
        item = _object(data, "task")
        criterion = item.get("criterion")
        return cls(
            id=_text(item, "id", where="task"),
            name=_text(item, "name", where="task"),
            prompt=_text(item, "prompt", where="task"),
            expected=_text(item, "expected", where="task", optional=True),
            criterion=(
                CriterionView.from_json(criterion, where="task.criterion")
                if criterion is not None
                else None
            ),
            input_files=_files(item.get("input_files"), "task.input_files"),
            expected_files=_files(item.get("expected_files"), "task.expected_files"),
        )


@dataclass(frozen=True, slots=True)
class OutputView:
    """The agent's answer under test: `output.text` and the files it produced."""

    text: str
    files: tuple[FileView, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "files": [file.to_json() for file in self.files]}

    @classmethod
    def from_json(cls, data: object) -> OutputView:
        item = _object(data, "output")
        return cls(
            text=_text(item, "text", where="output"),
            files=_files(item.get("files"), "output.files"),
        )
