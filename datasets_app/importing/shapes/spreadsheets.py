"""A spreadsheet's columns (CSV, XLSX) read as records: the habits of exported sheets
(a pandas index, a quoted header, NUL bytes), promptfoo's columns, and the shapes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from datasets_app.importing.columns import Built as Built_
from datasets_app.importing.columns import (
    Row,
    Table,
    document_from_table,
    field_for_header,
)
from datasets_app.importing.shapes.base import (
    LABELS,
    SAMPLE_RECORDS,
    UNKNOWN_SOURCE,
    Record,
    _parts,
)
from datasets_app.importing.shapes.build import sample_of
from datasets_app.importing.shapes.mapping import _missing_sources, mapping_problems
from datasets_app.importing.shapes.prompt import CHOICE_KEYS, LETTERS, compose_prompt
from datasets_app.importing.shapes.promptfoo import (
    _PROMPTFOO_EXPECTED,
    _promptfoo_columns,
)
from datasets_app.importing.shapes.recognise import Recognised, recognise
from datasets_app.importing.shapes.refusals import Evidence, refusal_problem
from datasets_app.importing.shapes.registry import SHAPES
from datasets_app.importing.spec import (
    CheckOptions,
    FieldMap,
    Problem,
    Rule,
    field_path,
    nowhere,
    shorten,
)

PANDAS_INDEX = Rule(
    "pandas_index_column",
    "The first column has no name and counts 0, 1, 2, …: it is a pandas index and is not imported.",
)
ONE_CELL_HEADER = Rule(
    "one_cell_header",
    "The header row is one quoted cell ({header}): the column names are inside a single pair "
    "of quotes. Remove the quotes around the header row and save the file again.",
)
NUL_IN_IGNORED_COLUMN = Rule(
    "nul_in_ignored_column",
    "Column {column} holds NUL bytes (binary data); it is not imported, so they were left out.",
)


# The column names `columns` reads each field under, for a column the mapping renames.
_COLUMN_NAMES = {
    "id": "task_id",
    "name": "name",
    "prompt": "prompt",
    "expected": "expected_answer",
    "criterion": "criterion",
    "weight": "weight",
}


@dataclass
class ShapedTable:
    """A spreadsheet's rows made ready for `columns`: header renamed, rows rewritten."""

    header: list[str] | None
    rows: Sequence[Row]
    shape: str = ""
    mapping: FieldMap | None = None
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    # Columns whose names say a field the shape takes from another column (`Table.not_read`).
    not_read: frozenset[str] = frozenset()


def _pandas_index(header: Sequence[str], rows: Sequence[Row]) -> bool:
    if not header or header[0].strip() not in ("", "Unnamed: 0") or len(header) < 2:
        return False
    firsts = [cells[0].strip() if cells else "" for _, cells in rows]
    return bool(firsts) and firsts == [str(n) for n in range(len(firsts))]


def _one_cell_header(header: Sequence[str], rows: Sequence[Row]) -> bool:
    named = [cell for cell in header if cell.strip()]
    return (
        len(named) == 1
        and any(mark in named[0] for mark in (",", ";", "\t"))
        and any(len([c for c in cells if c.strip()]) > 1 for _, cells in rows[:SAMPLE_RECORDS])
    )


def _table_records(header: Sequence[str], rows: Sequence[Row]) -> list[Record]:
    names = [name.strip() for name in header]
    return [
        Record({n: c for n, c in zip(names, cells, strict=False) if n}, row=row)
        for row, cells in rows[:SAMPLE_RECORDS]
    ]


def _spreadsheet_habits(shaped: ShapedTable, file_name: str, first_task_number: int) -> set[str]:
    """A header in one quoted cell (refused), a pandas index (left out), promptfoo's
    `__expected` columns (made into ours); returns the names of the columns made."""
    header, rows = shaped.header or [], shaped.rows
    if _one_cell_header(header, rows):
        shaped.header = None
        shaped.problems.append(ONE_CELL_HEADER.at(file_name, row=1, header=header[0].strip()))
        return set()
    if _pandas_index(header, rows):
        header = header[1:]
        rows = [(row, cells[1:]) for row, cells in rows]
        shaped.warnings.append(PANDAS_INDEX.at(file_name, row=1))
    synthetic: set[str] = set()
    if any(_PROMPTFOO_EXPECTED.match(name.strip()) for name in header):
        before = {name.strip() for name in header}
        header, rows, problems, warnings = _promptfoo_columns(
            header, rows, file_name, first_task_number
        )
        synthetic = {name for name in header if name not in before}
        shaped.problems.extend(problems)
        shaped.warnings.extend(warnings)
        shaped.shape = "promptfoo test cases (__expected)"
    shaped.header, shaped.rows = header, rows
    return synthetic


def _reads_as_it_is(shaped: ShapedTable, reads: Callable[[str], str | None]) -> bool:
    """Whether `columns` reads the sheet without help (our own sheets: the header only);
    a recognised tool is still named for the Detected line."""
    header = shaped.header or []
    read = {reads(name) for name in header}
    names = {name.strip() for name in header if name.strip()}
    if "prompt" not in read or not read & {"expected", "criterion"}:
        return False
    if names & {*CHOICE_KEYS, *LETTERS[:3]}:
        return False  # a question's options go into its prompt
    records = _table_records(header, shaped.rows[:1])
    first = records[0].values if records else {}
    matched = next((s for s in SHAPES if s.matches(names, first)), None)
    if matched and _reads_otherwise(matched.fields(names, first), reads):
        # The tool's shape, not the names, says which column grades (Azure's `truth`
        # beside the app's own `answer`): the sheet is renamed as the shape says.
        return False
    if matched and not shaped.shape:
        shaped.shape = matched.name
    return True


def _reads_otherwise(fields: Mapping[str, str], reads: Callable[[str], str | None]) -> bool:
    """Whether a shape's prompt or expected answer is a column `columns` reads otherwise."""
    return any(
        reads(source) != key
        for key, source in fields.items()
        if key in ("prompt", "expected") and " + " not in source
    )


def shape_table(
    header: list[str],
    rows: Sequence[Row],
    *,
    file_name: str,
    given: Mapping[str, str] | None = None,
    remembered: Mapping[str, Mapping[str, str]] | None = None,
    reads: Callable[[str], str | None],
    first_task_number: int = 1,
) -> ShapedTable:
    """A spreadsheet's header and rows, with other tools' habits taken care of.

    `reads` is the spreadsheet reader's own header matching (`columns.field_for_header`):
    a sheet it reads as it is, which is every sheet in our own format, is returned as it
    is, after a look at the header only.
    """
    shaped = ShapedTable(header, rows)
    synthetic = _spreadsheet_habits(shaped, file_name, first_task_number)
    if shaped.header is None:
        return shaped
    if not given and _reads_as_it_is(shaped, reads):
        return shaped
    records = _table_records(shaped.header, shaped.rows)
    recognised = recognise(records, given=given, remembered=remembered)
    if not recognised.sources:
        return shaped
    shaped.shape = shaped.shape or recognised.shape
    # Asked before the made columns leave the sources: a given mapping may name them.
    missing = (
        _missing_sources(recognised.fields, recognised.sources) if recognised.how == "given" else []
    )
    if synthetic:
        # promptfoo's assertion columns are the file's own grading: the person maps the
        # columns they wrote, not the ones made from `__expected`.
        recognised.sources = [s for s in recognised.sources if s not in synthetic]
    sheet = _Sheet(shaped, recognised, synthetic, reads, file_name)
    if recognised.how == "given":
        return sheet.given_mapping(missing)
    return sheet.guessed_mapping(records)


@dataclass(frozen=True)
class _Sheet:
    """A sheet whose columns were recognised, on its way to its mapping."""

    shaped: ShapedTable
    recognised: Recognised
    # The columns made from promptfoo's `__expected` ones.
    synthetic: set[str]
    reads: Callable[[str], str | None]
    file_name: str

    def given_mapping(self, missing: Sequence[tuple[str, str]]) -> ShapedTable:
        """The mapping the person gave, refused when it names a column the sheet lacks."""
        if not missing:
            return self.mapped()
        recognised = self.recognised
        shown = ", ".join(recognised.sources)
        self.shaped.mapping = FieldMap(dict(recognised.fields), "given", tuple(recognised.sources))
        return self.refuse(
            [
                UNKNOWN_SOURCE.at(
                    self.file_name,
                    source=shorten(part),
                    label=LABELS[key],
                    kind="column",
                    found=shown,
                )
                for key, part in missing
            ]
        )

    def guessed_mapping(self, records: Sequence[Record]) -> ShapedTable:
        """The mapping recognised, when the sheet is not one to refuse and says enough."""
        recognised = self.recognised
        seen = Evidence(recognised.sources, recognised.named, "columns", records, recognised.fields)
        refused = refusal_problem(seen, self.file_name)
        if refused is not None:
            return self.refuse([refused])
        if not _is_complete(recognised.fields):
            # Nothing to guess from: `columns` names the missing column, as it always has.
            return self.shaped
        return self.mapped()

    def refuse(self, problems: list[Problem]) -> ShapedTable:
        """The sheet refused: no header to read, and the problems that say why."""
        self.shaped.header = None
        self.shaped.problems = problems
        return self.shaped

    def mapped(self) -> ShapedTable:
        """The sheet renamed as the mapping says, its prompt's parts in one column."""
        shaped, recognised, synthetic = self.shaped, self.recognised, self.synthetic
        header, rows = shaped.header or [], shaped.rows
        fields = recognised.fields
        if " + " in fields.get("prompt", ""):
            # A question and its options (or an instruction and its input): one prompt column.
            header, rows = _composed_prompt(header, rows, _parts(fields["prompt"]))
            fields = {**fields, "prompt": "prompt"}
        shaped.header, shaped.not_read = _renamed(header, fields, self.reads)
        shaped.rows = rows
        shaped.mapping = FieldMap(
            fields={k: v for k, v in recognised.fields.items() if v not in synthetic},
            how=recognised.how,
            sources=tuple(recognised.sources),
            shape=recognised.shape,
            graded=bool(synthetic),
        )
        if shaped.mapping.needs_confirmation:
            shaped.problems = mapping_problems(recognised, file_name=self.file_name, kind="columns")
        return shaped


def _is_complete(fields: Mapping[str, str]) -> bool:
    """Whether the fields say a prompt and something to grade it by."""
    return "prompt" in fields and bool(fields.keys() & {"expected", "criterion"})


def _composed_prompt(
    header: list[str], rows: Sequence[Row], parts: Sequence[str]
) -> tuple[list[str], Sequence[Row]]:
    """The sheet with the prompt's parts made into one `prompt` column (`compose_prompt`)."""
    names = [name.strip() for name in header]
    used = {names.index(part) for part in parts if part in names}
    keep = [i for i in range(len(header)) if i not in used]
    new_rows = []
    for row, cells in rows:
        values = {names[i]: cells[i] for i in used if i < len(cells)}
        kept = [cells[i] if i < len(cells) else "" for i in keep]
        new_rows.append((row, [*kept, compose_prompt(values, parts), *cells[len(header) :]]))
    return [header[i] for i in keep] + ["prompt"], new_rows


def _renamed(
    header: list[str], fields: Mapping[str, str], reads: Callable[[str], str | None]
) -> tuple[list[str], frozenset[str]]:
    """The header with each mapped column under our name, and the columns `columns` would
    read as a mapped field but are not the mapped one: not read (`Table.not_read`), so
    that they are named with the other columns not imported."""
    chosen = {source: key for key, source in fields.items()}
    mapped = {_COLUMN_NAMES[key] for key in fields}
    mapped_fields = {reads(name) for name in mapped}
    new_header, not_read = [], set()
    for name in header:
        stripped = name.strip()
        if stripped in chosen:
            key = chosen[stripped]
            # A column `columns` already reads as its field keeps the person's name.
            reads_as = reads(name)
            same = reads_as == ("task_id" if key == "id" else key)
            new_header.append(name if same else _COLUMN_NAMES[key])
            continue
        if stripped and reads(name) in mapped_fields:
            not_read.add(stripped)
        new_header.append(name)
    return new_header, frozenset(not_read)


NUL_IN_CELL = Rule(
    "nul_in_cell",
    "Column {column} holds a NUL byte on this row: it is binary data, or text saved in "
    "another encoding. Remove it, or save the file as “CSV UTF-8”.",
)


def _without_nul(table: Table, file_name: str) -> tuple[Table, list[Problem], list[Problem]]:
    """NUL bytes in a column that is not imported are left out, with one warning each;
    in an imported column they are a problem on their row."""
    problems: list[Problem] = []
    ignored: dict[int, None] = {}
    rows = []
    for row, cells in table.rows:
        if any("\x00" in cell for cell in cells):
            for index, cell in enumerate(cells):
                if "\x00" not in cell:
                    continue
                name = table.header[index] if index < len(table.header) else ""
                if name.strip() and table.reads(name) is not None:
                    problems.append(
                        NUL_IN_CELL.at(file_name, row=row, field=name.strip(), column=name.strip())
                    )
                else:
                    ignored[index] = None
            cells = [cell.replace("\x00", "") for cell in cells]
        rows.append((row, cells))
    warnings = [
        NUL_IN_IGNORED_COLUMN.at(
            file_name,
            row=table.header_row,
            column=(table.header[i].strip() if i < len(table.header) else "") or f"{i + 1}",
        )
        for i in ignored
    ]
    return replace(table, rows=rows, has_nul=False), problems, warnings


def read_table(
    table: Table, *, file_name: str, dataset_name: str, options: CheckOptions | None
) -> tuple[Built_, ShapedTable]:
    """`columns.document_from_table` for a sheet of any shape (see `shape_table`).

    When the mapping was guessed, the document is built to show its first rows in the
    mapping step, then withheld: nothing imports until the person confirms.
    """
    shaped = shape_table(
        table.header,
        table.rows,
        file_name=file_name,
        given=options.mapping if options else None,
        remembered=options.remembered_mappings if options else None,
        reads=field_for_header,
        first_task_number=options.first_task_number if options else 1,
    )
    if shaped.header is None:
        return Built_(None, nowhere, field_path, [], []), shaped
    if shaped.header is not table.header or shaped.rows is not table.rows or shaped.not_read:
        table = replace(table, header=shaped.header, rows=shaped.rows, not_read=shaped.not_read)
    if table.has_nul:
        table, problems, warnings = _without_nul(table, file_name)
        shaped.problems.extend(problems)
        shaped.warnings.extend(warnings)
        if problems:
            return Built_(None, nowhere, field_path, [], []), shaped
    built = document_from_table(
        table,
        file_name=file_name,
        dataset_name=dataset_name,
        first_task_number=options.first_task_number if options else 1,
    )
    if shaped.mapping is not None and built.document is not None:
        shaped.mapping = replace(shaped.mapping, sample=sample_of(built.document["tasks"]))
    if shaped.mapping is not None and shaped.mapping.needs_confirmation:
        built = Built_(None, built.locate, built.label, [], [])
    return built, shaped
