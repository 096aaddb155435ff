"""The CSV files a user gives (task files, suite manifests), read as rows with line numbers.

Files are UTF-8 (a leading BOM is accepted); fields may be as long as genomic sequences get.
Every problem with the file itself (unreadable file, missing columns, bytes that are not UTF-8,
a row the csv module cannot parse) raises one `GenebError` naming the file, the line or byte,
and the fix. Problems of its rows (a bad sequence, label or id) are gathered over the whole
file and raised together (`RowProblems`): one line each, the first `PROBLEMS_SHOWN` of a file,
then how many more it holds.
"""

from __future__ import annotations

import codecs
import csv
from collections.abc import Iterable
from pathlib import Path

from store.vocab.errors import GenebError

PROBLEMS_SHOWN = 20     # row problems listed per file; the rest are counted


class RowProblems(GenebError):
    """Every problem found in the rows of one or more files, one line each naming the file,
    the line and what is wrong (`total`: how many there are, listed or counted); a single one
    is its own message, several are listed under a line that counts them."""

    def __init__(self, lines: list[str], total: int | None = None,
                 where: str = "the suite's files"):
        self.lines = lines
        self.total = len(lines) if total is None else total
        super().__init__(lines[0] if self.total == 1 else
                         f"{self.total} problems in {where}, each to fix:\n  "
                         + "\n  ".join(lines))

    @classmethod
    def of_file(cls, path: Path, problems: list[str]) -> RowProblems:
        """The problems of one file's rows: the first PROBLEMS_SHOWN, then how many more."""
        more = len(problems) - PROBLEMS_SHOWN
        return cls(problems[:PROBLEMS_SHOWN]
                   + ([f"and {more} more problems in {path}"] if more > 0 else []),
                   len(problems))

    @classmethod
    def merged(cls, errors: Iterable[GenebError],
               where: str = "the suite's files") -> RowProblems:
        """The problems of several errors (of several files, `where`) as one; a message met
        again (a folder every task lacks) counts once."""
        lines: list[str] = []
        total = 0
        for exc in errors:
            if isinstance(exc, RowProblems):
                lines += exc.lines
                total += exc.total
            elif str(exc) not in lines:
                lines.append(str(exc))
                total += 1
        return cls(lines, total, where)


# Characters one CSV field may hold (the csv module's default, 131072, is below the length of
# many genomic sequences).
FIELD_LIMIT = 1 << 30


def invalid_utf8(path: Path) -> tuple[int, int, int] | None:
    """(absolute byte offset, byte, line) of the first byte that is not UTF-8, or None."""
    base = lines = 0            # offset of data[0] in the file, newlines before it
    data = b""
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 20)
            data += block
            try:
                _, used = codecs.utf_8_decode(data, "strict", not block)
            except UnicodeDecodeError as exc:
                return base + exc.start, data[exc.start], lines + data.count(b"\n", 0,
                                                                               exc.start) + 1
            if not block:
                return None
            lines += data.count(b"\n", 0, used)
            base += used
            data = data[used:]


def not_utf8_message(path: Path) -> str:
    try:
        found = invalid_utf8(path)
    except OSError:
        found = None
    where = (f": byte 0x{found[1]:02x} at byte offset {found[0]} (line {found[2]}) is invalid"
             if found else "")
    return f"{path}: not UTF-8 text{where}; save the file as UTF-8"


def header_of(path: Path) -> tuple[str, ...]:
    """The column names of a CSV file's header (empty for an empty file); one that cannot be
    read is left to `read_rows` to name (empty here)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            return tuple(next(csv.reader(f), ()))
    except (OSError, UnicodeDecodeError, csv.Error):
        return ()


def read_rows(path: Path, columns: tuple[str, ...],
              hint: str | None = None) -> Iterable[tuple[int, dict[str, str]]]:
    """(line number, row) pairs of a CSV file, after checking its header has `columns`.

    UTF-8 with or without a BOM; a short row has None for its missing fields, a long one its
    extra fields under the key None (`engine.data.skip_reason`). `hint`: what the
    missing-columns message says the file needs (default: a task file's columns)."""
    path = Path(path)
    if csv.field_size_limit() < FIELD_LIMIT:
        csv.field_size_limit(FIELD_LIMIT)
    try:
        f = open(path, newline="", encoding="utf-8-sig")
    except OSError as exc:
        raise GenebError(f"{path}: cannot read ({exc.strerror})") from None
    with f:
        reader = csv.DictReader(f)
        try:
            header = reader.fieldnames or []
            missing = [c for c in columns if c not in header]
            if missing:
                raise GenebError(f"{path}: missing column(s) {', '.join(missing)} (found "
                                 f"{', '.join(header) or 'no header'}); "
                                 + (hint or f"a task file needs the columns {','.join(columns)}"))
            for row in reader:
                yield reader.line_num, row
        except UnicodeDecodeError:
            raise GenebError(not_utf8_message(path)) from None
        except csv.Error as exc:
            raise GenebError(f"{path}, line {reader.reader.line_num}: not a valid CSV row ({exc}); "
                             "fix that line") from None
        except OSError as exc:
            raise GenebError(f"{path}: cannot read ({exc.strerror or exc})") from None
