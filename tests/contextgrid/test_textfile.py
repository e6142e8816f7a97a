"""One way to read text: encodings and delimiters, for contextgrid and the dataset readers."""

from __future__ import annotations

import codecs

import pytest

from contextgrid import parse_csv_text, textfile
from datasets_app.importing import csv_format, evalset_format

TEXT = "id;question\r\nq1;Où est l’été?\r\n"


@pytest.mark.parametrize(
    ("data", "label"),
    [
        (TEXT.encode("utf-8"), "UTF-8"),
        (codecs.BOM_UTF8 + TEXT.encode("utf-8"), "UTF-8 with BOM"),
        (codecs.BOM_UTF16_LE + TEXT.encode("utf-16-le"), "UTF-16 LE"),
        (codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"), "UTF-16 BE"),
        (codecs.BOM_UTF32_LE + TEXT.encode("utf-32-le"), "UTF-32 LE"),
    ],
)
def test_a_byte_order_mark_says_the_encoding_else_utf8(data, label):
    decoded = textfile.decode(data)

    assert (decoded.text, decoded.label) == (TEXT, label)


def test_windows_1252_only_when_asked_and_only_when_not_utf8():
    data = TEXT.encode("cp1252")

    assert textfile.decode(data).text is None
    assert textfile.decode(data).bad_offset == data.index("Où".encode("cp1252")) + 1
    decoded = textfile.decode(data, windows_1252=True)
    assert (decoded.text, decoded.label) == (TEXT, "Windows-1252")
    # 0x81 is one of Windows-1252's five undefined bytes: no further guess.
    assert textfile.decode(b"a,b\n\x81\n", windows_1252=True).bad_offset == 4


@pytest.mark.parametrize(
    ("text", "wanted", "delimiter"),
    [
        ("a,b,c\n1;2;3;4;5\n", (), ","),
        ("a;b;c\n", (), ";"),
        ("a\tb;c\tq\n", (), "\t"),
        ("prompt\n", (), ","),  # one column: the comma
        ('"a;b",c\n', (), ","),  # quoted delimiters do not count
        ('"a\nb";c;d\n', (), ";"),  # a header cell spanning lines
        ("\r\n,,\r\nx;y\r\n", (), ";"),  # blank lines before the header are skipped
        ("q,notes;a;b\n", {"q"}, ","),  # the column a reader wants decides
    ],
)
def test_the_delimiter_comes_from_the_header_line(text, wanted, delimiter):
    assert textfile.pick_delimiter(text, wanted=wanted) == delimiter


def test_the_dataset_reader_and_contextgrid_read_the_same_bytes_alike():
    data = codecs.BOM_UTF16_LE + "id\tquestion\tanswer\r\nq1\tWhen?\t1999\r\n".encode("utf-16-le")

    evalset = parse_csv_text(data, name="q.csv")
    decoded = csv_format.decode(data, "q.csv")

    assert [(item.id, item.question, item.answer) for item in evalset] == [("q1", "When?", "1999")]
    assert decoded.detected == "CSV, UTF-16 LE, tab-delimited, CRLF"
    assert decoded.table.header == ["id", "question", "answer"]
    assert evalset_format._csv_header(textfile.head(data, 1024)) == (
        "\t",
        ["id", "question", "answer"],
    )
