"""Text files as people save them: which encoding they are in, and which delimiter a CSV uses.

One implementation of both, used by contextgrid's readers and by any application that reads
the same files (Context Evals' dataset readers do), so that a file decodes and splits the
same way whichever reader sees it. Pure Python, standard library only.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Collection
from dataclasses import dataclass

# Byte order marks, longest first: the UTF-32 little-endian mark starts with UTF-16's.
_BOMS: tuple[tuple[bytes, str, str, str | None], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32", "UTF-32", "LE"),
    (codecs.BOM_UTF32_BE, "utf-32", "UTF-32", "BE"),
    (codecs.BOM_UTF8, "utf-8-sig", "UTF-8", None),
    (codecs.BOM_UTF16_LE, "utf-16", "UTF-16", "LE"),
    (codecs.BOM_UTF16_BE, "utf-16", "UTF-16", "BE"),
)

# The delimiters a spreadsheet writes: `,` (most locales), `;` (locales whose decimal mark is
# a comma) and tab ("Unicode text", TSV). csv.Sniffer guesses from letter frequencies and
# gets long prose cells wrong, so only the header line is looked at.
DELIMITERS: tuple[str, ...] = (",", ";", "\t")


@dataclass(frozen=True)
class Decoded:
    """A file's bytes as text, and the encoding they were read in.

    `text` is None when the bytes are not text in any encoding tried; `bad_offset` is then
    the first byte that is not (0-based).
    """

    text: str | None
    encoding: str  # "UTF-8", "UTF-16", "UTF-32" or "Windows-1252"
    bom: bool = False
    byte_order: str | None = None  # "LE" or "BE" for UTF-16 and UTF-32
    bad_offset: int | None = None

    @property
    def label(self) -> str:
        """The encoding as a person reads it: `UTF-8 with BOM`, `UTF-16 LE`, `Windows-1252`."""
        if self.byte_order is not None:
            return f"{self.encoding} {self.byte_order}"
        return f"{self.encoding} with BOM" if self.bom else self.encoding


def has_bom(data: bytes) -> bool:
    """Whether the bytes start with a Unicode byte order mark."""
    return data.startswith(tuple(bom for bom, *_ in _BOMS))


def decode(data: bytes, *, windows_1252: bool = False) -> Decoded:
    """Decode a file: by its byte order mark when it has one, else as UTF-8.

    With `windows_1252`, bytes that are not UTF-8 are read as Windows-1252, what Excel's
    "CSV (Comma delimited)" writes on Western European Windows; its five undefined bytes
    still mean the file is something else, and no further guess is made. A file with a
    UTF-16 or UTF-32 mark is never read as Windows-1252.
    """
    for bom, codec, encoding, byte_order in _BOMS:
        if data.startswith(bom):
            try:
                text = data.decode(codec)
            except UnicodeDecodeError as exc:
                return Decoded(None, encoding, True, byte_order, exc.start)
            return Decoded(text, encoding, True, byte_order)
    try:
        return Decoded(data.decode("utf-8"), "UTF-8")
    except UnicodeDecodeError as exc:
        if not windows_1252:
            return Decoded(None, "UTF-8", bad_offset=exc.start)
    try:
        return Decoded(data.decode("cp1252"), "Windows-1252")
    except UnicodeDecodeError as exc:
        return Decoded(None, "Windows-1252", bad_offset=exc.start)


def header_span(text: str) -> tuple[int, int]:
    """Where a CSV's header line is: (start, end).

    Lines before it that hold nothing but white space and delimiters are skipped. The line
    ends at the first line break outside quotes, so a quoted header cell may span lines;
    `end` is the index of that line break (or the end of the text).
    """
    start = 0
    quoted = False
    for index, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "\r\n":
            if text[start:index].strip(" \t,;"):
                return start, index
            start = index + 1
    return start, len(text)


def head(data: bytes, size: int) -> str:
    """The first `size` bytes of a file as text, to look at only: decoded by its byte order
    mark, else as UTF-8, with what does not decode (a character cut in two) replaced."""
    start = data[:size]
    for bom, codec, _encoding, _byte_order in _BOMS:
        if start.startswith(bom):
            return start.decode(codec, errors="replace").lstrip("\ufeff")
    return start.decode("utf-8", errors="replace")


def pick_delimiter(text: str, *, wanted: Collection[str] = ()) -> str:
    """The delimiter of a CSV, from its header line.

    The one under which a header cell (stripped, lowercased) is among `wanted` (the column
    a reader needs, say `question`), else the one that splits the header into the most
    cells; a tie (a one-column file, say) goes to the earlier of `DELIMITERS`, the comma
    first.
    """
    start, end = header_span(text)
    line = text[start:end]
    best, best_cells = DELIMITERS[0], 0
    for delimiter in DELIMITERS:
        cells = next(csv.reader([line], delimiter=delimiter), [])
        if wanted and any(cell.strip().lower() in wanted for cell in cells):
            return delimiter
        if len(cells) > best_cells:
            best, best_cells = delimiter, len(cells)
    return best
