"""Files other tools wrote: their records turned into the canonical dataset document.

A .json or .jsonl file of records (a JSON array, an object holding one under a key such as
`data` or `goldens`, an object keyed by id, SQuAD's nesting, one record on its own) and a
spreadsheet's columns are read through the same steps:

1. `find_records` (JSON only) finds the list of records and where each one stands. A
   record a tool wraps in an envelope (the OpenAI Evals API's `{"item": …}`, the Hugging
   Face dataset viewer's `{"row_idx", "row", "truncated_cells"}`) is what it wraps. A row
   whose `truncated_cells` names a cell is refused (`CELLS_CUT`): the viewer cut that text
   short, and importing it would import part of a prompt or answer without a word.
2. A `Shape` (OpenAI evals, LangSmith, promptfoo, HealthBench, ...) recognises the records
   by their keys and says which key fills which field; the names in `aliases` do the rest.
   What a person gives (the mapping step, `--map FIELD=SOURCE`) overrides both.
3. `build_tasks` turns each record into a canonical task (`{"id", "name", "prompt",
   "expected", "criteria"}`), and the one validator checks it like any other document;
   problems keep the record's line (or row) in the person's own file.

When the keys do not say which is the prompt and which the expected answer, nothing is
imported: the check says so (`NEEDS_MAPPING`) with its best guess and the first records as
they would import, and the person confirms or changes the mapping.

The package: `base` (what every shape shares), `registry` (the shapes in the order they
are tried), one module per family of tools (`openai_evals`, `tracing`, `promptfoo`,
`deepeval_ragas`, `azure`, `rubrics`, `mt_bench`, `benchmarks`, `retrieval`), `refusals`
(files that are not datasets), and the steps: `stage` (the importer's shape stage, `shape`:
what a reader found as the page's document), `records` (JSON and JSON Lines),
`spreadsheets` (CSV and XLSX), `recognise`, `mapping`, `build`. Each family's decisions are
in its module's docstring.
"""

from __future__ import annotations

from datasets_app.importing.aliases import FIELD_KEYS
from datasets_app.importing.shapes.base import (
    BEST_GUESS,
    CELLS_CUT,
    FOLLOW_UPS_LEFT_OUT,
    IGNORED_KEYS,
    JUDGED_BY_TOOL,
    LABELS,
    NEEDS_MAPPING,
    NO_RECORDS,
    NOT_A_DATASET,
    UNANSWERABLE_LEFT_OUT,
    Shape,
)
from datasets_app.importing.shapes.build import build_tasks
from datasets_app.importing.shapes.mapping import MAP_FIELD_TWICE, parse_map_options
from datasets_app.importing.shapes.mt_bench import ARENA_HARD_JUDGE, MT_BENCH_JUDGE
from datasets_app.importing.shapes.promptfoo import (
    PROMPTFOO_LEFT_OUT,
    PROMPTFOO_UNSUPPORTED,
    promptfoo_assertion,
)
from datasets_app.importing.shapes.recognise import recognise
from datasets_app.importing.shapes.records import (
    find_records,
    is_canonical,
    read_records,
    records_of,
)
from datasets_app.importing.shapes.refusals import REFUSALS, Refusal, document_refusal
from datasets_app.importing.shapes.registry import SHAPES
from datasets_app.importing.shapes.rubrics import PENALTY_PREFIX, REQUIREMENT_WEIGHT
from datasets_app.importing.shapes.spreadsheets import (
    NUL_IN_CELL,
    NUL_IN_IGNORED_COLUMN,
    ONE_CELL_HEADER,
    PANDAS_INDEX,
    read_table,
)
from datasets_app.importing.shapes.stage import shape
from datasets_app.importing.shapes.values import CHAT_PART_NOT_TEXT

__all__ = [
    "ARENA_HARD_JUDGE",
    "BEST_GUESS",
    "CELLS_CUT",
    "CHAT_PART_NOT_TEXT",
    "FIELD_KEYS",
    "FOLLOW_UPS_LEFT_OUT",
    "IGNORED_KEYS",
    "JUDGED_BY_TOOL",
    "LABELS",
    "MAP_FIELD_TWICE",
    "MT_BENCH_JUDGE",
    "NEEDS_MAPPING",
    "NOT_A_DATASET",
    "NO_RECORDS",
    "NUL_IN_CELL",
    "NUL_IN_IGNORED_COLUMN",
    "ONE_CELL_HEADER",
    "PANDAS_INDEX",
    "PENALTY_PREFIX",
    "PROMPTFOO_LEFT_OUT",
    "PROMPTFOO_UNSUPPORTED",
    "REFUSALS",
    "REQUIREMENT_WEIGHT",
    "SHAPES",
    "UNANSWERABLE_LEFT_OUT",
    "Refusal",
    "Shape",
    "build_tasks",
    "document_refusal",
    "find_records",
    "is_canonical",
    "parse_map_options",
    "promptfoo_assertion",
    "read_records",
    "read_table",
    "recognise",
    "records_of",
    "shape",
]
