"""Text tables that are not UTF-8: which legacy code page they are in, never guessed silently.

Excel's "CSV" and the tools of many locales write the machine's code page: Windows-1252 in
Western Europe, GBK in China, Shift_JIS in Japan, Windows-1251 for Cyrillic. Any of them
decodes most bytes, so "it decoded" says nothing; charset-normalizer, a detector made for
this, measures how much each reading looks like text (`chaos`), over the code pages below
only. The reading that fits best is taken and said (a warning with a sample of its
non-ASCII text); when readings that differ fit equally well, the person is asked to choose
(`Reading.sure` is False). Windows-1252 wins a tie: it is what most such files are in.

The person's choice (`CheckOptions.encoding`, one of `CHOICES`) is then read strictly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import charset_normalizer

UTF8 = "utf-8"
WINDOWS_1252 = "cp1252"
# The code pages told apart, by Python's codec name, each as a person knows it. GB18030 is
# the superset of GBK and GB2312, which it reads the same way: named GBK, as people know it.
LEGACY: dict[str, tuple[str, str]] = {
    WINDOWS_1252: ("Windows-1252", "Western European"),
    "cp1250": ("Windows-1250", "Central European"),
    "cp1251": ("Windows-1251", "Cyrillic"),
    "cp1253": ("Windows-1253", "Greek"),
    "cp1254": ("Windows-1254", "Turkish"),
    "cp1255": ("Windows-1255", "Hebrew"),
    "cp1256": ("Windows-1256", "Arabic"),
    "cp1257": ("Windows-1257", "Baltic"),
    "cp1258": ("Windows-1258", "Vietnamese"),
    "gb18030": ("GBK", "Simplified Chinese"),
    "big5": ("Big5", "Traditional Chinese"),
    "shift_jis": ("Shift_JIS", "Japanese"),
    "euc_jp": ("EUC-JP", "Japanese"),
    "euc_kr": ("EUC-KR", "Korean"),
    "koi8_r": ("KOI8-R", "Russian"),
    "mac_roman": ("Mac OS Roman", "Western European"),
}
# What a person may choose, in the order offered: "Windows-1251 (Cyrillic)".
CHOICES: dict[str, str] = {
    UTF8: "UTF-8",
    **{codec: f"{name} ({script})" for codec, (name, script) in LEGACY.items()},
}
# What `--encoding` says on the command line.
ENCODING_HELP = (
    "A CSV's text encoding, read strictly (a byte order mark wins); by default it is found "
    "from the text, and asked for when it cannot be told. One of: " + ", ".join(CHOICES) + "."
)
# Readings whose chaos differs by less than this fit equally well.
_TIE = 0.01
# charset-normalizer reads this many bytes per sample, at most this many samples: enough to
# tell the code pages apart, and the same few milliseconds for a file of any size.
_CHUNK = 2048
_STEPS = 32
_SAMPLE_CHARS = 60
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


@dataclass(frozen=True)
class Candidate:
    """One way to read the bytes: its codec, and a sample of the text it gives."""

    codec: str
    sample: str

    @property
    def label(self) -> str:
        return CHOICES[self.codec]


@dataclass(frozen=True)
class Reading:
    """A file's bytes read in a legacy code page, or why not.

    `text` is None when no code page reads them (`bad_offset` is then the first byte the
    chosen or best code page does not read) or when the choice is the person's to make
    (`sure` False, `candidates` the readings that fit equally well, best first).
    """

    text: str | None
    codec: str | None
    sure: bool
    candidates: tuple[Candidate, ...] = ()
    bad_offset: int | None = None

    @property
    def label(self) -> str:
        """As a person chooses it: "GBK (Simplified Chinese)"."""
        return CHOICES[self.codec] if self.codec else ""

    @property
    def name(self) -> str:
        """As a file's description says it: "GBK"."""
        return LEGACY[self.codec][0] if self.codec in LEGACY else self.label

    @property
    def sample(self) -> str:
        return sample(self.text or "")


def sample(text: str) -> str:
    """Where the text's first non-ASCII characters stand, about `_SAMPLE_CHARS` of it on
    one line: what a person looks at to tell whether it was read right."""
    found = _NON_ASCII.search(text)
    if found is None:
        return ""
    line_start = text.rfind("\n", 0, found.start()) + 1
    start = max(line_start, found.start() - _SAMPLE_CHARS // 4)
    shown = " ".join(text[start : start + _SAMPLE_CHARS].split())
    return ("…" if start > line_start else "") + shown + "…"


def read_chosen(data: bytes, codec: str) -> Reading:
    """The bytes read in the code page a person chose, strictly."""
    try:
        # A UTF-8 file's byte order mark is not part of its text.
        return Reading(data.decode("utf-8-sig" if codec == UTF8 else codec), codec, sure=True)
    except UnicodeDecodeError as exc:
        return Reading(None, codec, sure=True, bad_offset=exc.start)


def read_legacy(data: bytes) -> Reading:
    """The bytes (not UTF-8) read in the code page that fits them best (see the module)."""
    matches = charset_normalizer.from_bytes(
        data, cp_isolation=list(LEGACY), steps=_STEPS, chunk_size=_CHUNK, explain=False
    )
    if not matches:
        # Nothing reads them: say where Windows-1252, the likeliest, stops.
        return read_chosen(data, WINDOWS_1252)
    best = min(match.chaos for match in matches)
    tied = [match for match in matches if match.chaos - best < _TIE]
    for match in tied:
        if WINDOWS_1252 in match.could_be_from_charset:
            return read_chosen(data, WINDOWS_1252)
    if len(tied) == 1:
        return read_chosen(data, tied[0].encoding)
    candidates = tuple(Candidate(match.encoding, sample(str(match))) for match in tied)
    return Reading(None, None, sure=False, candidates=candidates)
