"""The outputs reader: .jsonl and .csv, every problem with its line or row, no database."""

from __future__ import annotations

from datasets_app.importing import outputs
from datasets_app.importing.outputs import read_outputs

IDS = {"t1", "t2", "t3"}


def test_jsonl_lines_give_each_task_its_output_and_what_it_cost():
    data = (
        b'{"task": "t1", "output": "four", "latency_ms": 1200, "tokens": 350, "cost": 0.002,'
        b' "model": "gpt-x", "trace": "https://traces.example/1", "labels": {"c1": true}}\n'
        b"\n"
        b'{"task": "t2", "output": null}\n'
    )
    read = read_outputs(data, "outputs.jsonl", IDS)
    assert read.ok and read.format == "jsonl"
    first = read.outputs["t1"]
    assert (first.output, first.latency_ms, first.tokens, first.cost) == (
        "four",
        1200.0,
        350,
        0.002,
    )
    assert (first.model, first.trace, dict(first.labels), first.line) == (
        "gpt-x",
        "https://traces.example/1",
        {"c1": True},
        1,
    )
    assert read.outputs["t2"].output is None and read.outputs["t2"].line == 3
    assert "t3" not in read.outputs


def test_every_bad_line_is_named_with_its_line_and_nothing_is_kept_silently():
    data = (
        b'{"task": "nope", "output": "x"}\n'
        b"not json\n"
        b'{"task": "t1", "output": 3}\n'
        b'{"task": "t1", "output": "a"}\n'
        b'{"task": "t1", "output": "b"}\n'
        b'{"task": "t2", "output": "b", "tokens": -3}\n'
        b'{"task": "t3", "output": "b", "labels": {"c1": "maybe"}}\n'
    )
    read = read_outputs(data, "o.jsonl", IDS)
    assert [(p.line, p.code) for p in read.problems] == [
        (1, outputs.UNKNOWN_TASK.code),
        (2, outputs.NOT_A_LINE_OBJECT.code),
        (3, outputs.NOT_A_LINE_OBJECT.code),
        (5, outputs.REPEATED_TASK.code),
        (6, outputs.BAD_COST.code),
        (7, outputs.BAD_LABEL.code),
    ]
    assert read.problems[3].message == 'Task "t1" already has an output, on line 4.'
    assert read.problems[4].task == "t2"


def test_csv_reads_the_task_and_output_columns_by_the_names_people_use():
    data = b'task_id,response,latency_ms,label:c1\nt1,four,15,pass\nt2,"=1+1",,\n'
    read = read_outputs(data, "outputs.csv", IDS)
    assert read.ok and read.format == "csv"
    assert read.outputs["t1"].output == "four" and read.outputs["t1"].row == 2
    assert read.outputs["t1"].labels == {"c1": True}
    assert read.outputs["t2"].output == "=1+1"


def test_csv_asks_when_two_columns_could_be_the_output_and_takes_the_persons_answer():
    data = b"id,answer,response\nt1,a,b\n"
    read = read_outputs(data, "o.csv", IDS)
    assert [(p.row, p.code) for p in read.problems] == [(1, outputs.AMBIGUOUS_COLUMN.code)]
    assert "'answer', 'response'" in read.problems[0].message
    chosen = read_outputs(data, "o.csv", IDS, mapping={"output": "response"})
    assert chosen.ok and chosen.outputs["t1"].output == "b"


def test_csv_without_an_output_column_and_rows_with_unknown_ids():
    assert [p.code for p in read_outputs(b"task,x\nt1,a\n", "o.csv", IDS).problems] == [
        outputs.NO_OUTPUT_COLUMN.code
    ]
    read = read_outputs(b"task,output\nt9,a\nt1,b\nt1,c\n", "o.csv", IDS)
    assert [(p.row, p.code) for p in read.problems] == [
        (2, outputs.UNKNOWN_TASK.code),
        (4, outputs.REPEATED_TASK.code),
    ]
    assert read.problems[1].message == 'Task "t1" already has an output, on row 3.'


def test_files_past_the_limits_or_of_another_kind_are_refused_whole():
    big = read_outputs(b"x" * 2048, "o.jsonl", IDS, max_bytes=1024)
    assert [p.code for p in big.problems] == [outputs.OUTPUTS_TOO_BIG.code]
    assert [p.code for p in read_outputs(b"{}", "o.json", IDS).problems] == [
        outputs.NOT_AN_OUTPUTS_FILE.code
    ]
    assert [p.code for p in read_outputs(b"\n\n", "o.jsonl", IDS).problems] == [
        outputs.NO_OUTPUTS.code
    ]
    long = b'{"task": "t1", "output": "' + b"x" * (outputs.MAX_TEXT_CHARS + 1) + b'"}\n'
    assert [p.code for p in read_outputs(long, "o.jsonl", IDS).problems] == [
        outputs.OUTPUT_TOO_LONG.code
    ]


def test_the_format_s_own_names_win_over_their_aliases_without_asking():
    read = read_outputs(b"task,id,output,response\nt1,9,a,b\n", "o.csv", IDS)
    assert read.ok and read.outputs["t1"].output == "a"
    assert read.mapping == {"task": "task", "output": "output"}


def test_the_question_offers_the_columns_the_likeliest_first():
    read = read_outputs(b"id,answer,response,notes\nt1,a,b,c\n", "o.csv", IDS)
    assert read.mapping_due
    assert read.ask == {"output": ("response", "answer")}
    assert read.columns == ("id", "answer", "response", "notes")
    data = b"id,answer,response\nt1,a,b\n"
    chosen = read_outputs(data, "o.csv", IDS, mapping={"output": "answer"})
    assert chosen.mapping == {"task": "id", "output": "answer"}
    assert not read_outputs(b"task,x\nt1,a\n", "o.csv", IDS).mapping_due


def test_jsonl_keys_are_read_through_the_same_aliases_and_asked_once():
    data = (
        b'{"id": "t1", "response": "four", "latency_ms": 5}\n{"task_id": "t2", "completion": "x"}\n'
    )
    read = read_outputs(data, "o.jsonl", IDS)
    assert read.ok and read.outputs["t1"].output == "four" and read.outputs["t1"].latency_ms == 5
    assert read.outputs["t2"].output == "x"
    line = '{"id": "%s", "answer": "a", "response": "b"}\n'
    both = (line % "t1" + line % "t2").encode()
    asked = read_outputs(both, "o.jsonl", IDS)
    assert [(p.line, p.code) for p in asked.problems] == [(1, outputs.AMBIGUOUS_COLUMN.code)]
    assert asked.problems[0].message == (
        "The keys 'answer', 'response' could each be the output: choose which one is."
    )
    chosen = read_outputs(both, "o.jsonl", IDS, mapping={"output": "answer"})
    assert chosen.ok and chosen.outputs["t2"].output == "a"


def test_what_a_row_cost_is_read_through_the_aliases_and_a_bad_number_named_by_its_column():
    data = (
        b"task,output,duration_ms,total_tokens,cost_usd,model_name,trace_url\n"
        b't1,four,"1,200",350,0.25,gpt-x,https://traces.example/1\n'
        b"t2,five,fast,10,,,\n"
        b"t3,six,,1.5,,,javascript:alert(1)\n"
    )
    read = read_outputs(data, "o.csv", IDS)
    first = read.outputs["t1"]
    assert (first.latency_ms, first.tokens, first.cost, first.model, first.trace) == (
        1200.0,
        350,
        0.25,
        "gpt-x",
        "https://traces.example/1",
    )
    assert [(p.row, p.code, p.task) for p in read.problems] == [
        (3, outputs.BAD_COST.code, "t2"),
        (4, outputs.BAD_COST.code, "t3"),
    ]
    assert read.problems[0].message == "duration_ms must be a number of milliseconds, 0 or more."
    assert read.problems[1].message == "total_tokens must be a whole number, 0 or more."


def test_a_jsonl_key_of_what_it_cost_is_read_by_its_alias_and_its_own_name_wins():
    data = b'{"task": "t1", "output": "x", "cost": 0.5, "total_cost": 9, "num_tokens": 7}\n'
    read = read_outputs(data, "o.jsonl", IDS)
    assert read.ok and (read.outputs["t1"].cost, read.outputs["t1"].tokens) == (0.5, 7)
