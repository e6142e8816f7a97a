"""How much contextgrid's checking costs over bare parsing, measured side by side.

Prints one line per figure: ``bench <name>: <ratio>x (goal <goal>) ok|FAIL``. The ratio is
contextgrid's time over the bare standard-library parse of the same text (`timing.median_ratio`).
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing import median_ratio

import contextgrid as cg
from contextgrid.evalset.io import (
    evalset_to_jsonl_text,
    parse_beir,
    parse_csv_text,
    parse_jsonl_text,
)

REPEATS = 9


def report(
    name: str, ours: Callable[[], object], bare: Callable[[], object], goal: float, against: str
) -> bool:
    ratio = median_ratio(ours, bare, rounds=REPEATS)
    ok = ratio <= goal
    print(f"bench {name}: {ratio:.1f}x {against} (goal {goal:g}x) {'ok' if ok else 'FAIL'}")
    return ok


def sample_evalset(size: int) -> cg.EvalSet:
    items = tuple(
        cg.EvalItem(
            id=f"q{i}",
            question=f"How many days of leave does policy {i} give?",
            anchors=(cg.GoldAnchor("handbook.pdf", f"Policy {i} gives {i % 30} days.", 2, i % 90),),
            gold=(cg.GoldSpan(cg.Span("handbook.pdf", i * 10, i * 10 + 40)),),
            meta={"reviewed": i % 2 == 0, "tags": ["leave", "hr"]},
        )
        for i in range(size)
    )
    return cg.EvalSet(id="bench", items=items)


def main() -> int:
    evalset = sample_evalset(20_000)
    jsonl = evalset_to_jsonl_text(evalset)
    lines = jsonl.splitlines()
    results = [
        report(
            "contextgrid_read_jsonl",
            lambda: parse_jsonl_text(jsonl, name="bench.jsonl"),
            lambda: [json.loads(line) for line in lines],
            goal=4.0,
            against="json.loads",
        )
    ]

    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "question", "source_id", "quote", "grade", "page", "meta"])
    for item in evalset:
        anchor = item.anchors[0]
        writer.writerow(
            [item.id, item.question, anchor.source_id, anchor.quote, 2, anchor.page_hint, "{}"]
        )
    csv_text = buffer.getvalue()
    results.append(
        report(
            "contextgrid_read_csv",
            lambda: parse_csv_text(csv_text, name="bench.csv"),
            lambda: list(csv.DictReader(io.StringIO(csv_text, newline=""))),
            goal=6.0,
            against="csv.DictReader",
        )
    )

    queries = "".join(
        json.dumps({"_id": str(q), "text": f"query {q}"}) + "\n" for q in range(5_000)
    )
    qrels = "query-id\tcorpus-id\tscore\r\n" + "".join(
        f"{q}\tdoc-{q}-{d}\t{d % 3}\r\n" for q in range(5_000) for d in range(20)
    )

    def bare_beir() -> object:
        texts = {json.loads(line)["_id"]: json.loads(line)["text"] for line in queries.splitlines()}
        gold: dict[str, list[tuple[str, int]]] = {}
        for line in qrels.splitlines()[1:]:
            qid, doc, score = line.split("\t")
            if int(score) > 0 and qid in texts:
                gold.setdefault(qid, []).append((doc, int(score)))
        return gold

    results.append(
        report(
            "contextgrid_read_beir",
            lambda: parse_beir(queries, qrels),
            bare_beir,
            goal=4.0,
            against="a split loop",
        )
    )
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
