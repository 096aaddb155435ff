"""Tables that fit the width they are printed at, without ever cutting an id.

A `FitTable` is laid out when it is rendered, for the console's width:

1. the whole table, when it fits (free-text columns may wrap down to their `wrap` width;
   every other column keeps its full width: nothing is squeezed, cut or ellipsised);
2. else, with `split`, the same table in blocks of columns, the key columns (ids, names)
   repeated at the left of every block (the report's wide tables);
3. else, when some columns may be dropped (`drop`), the table without them, lowest priority
   first, and one line saying which were left out and how to see them;
4. else one entry per row: the key columns on their own line (never wrapped by us, so an id
   longer than the terminal is wrapped by the terminal and copies whole), then the other
   values on an indented line.

An empty table prints its title and why it is empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text


@dataclass(frozen=True)
class Col:
    header: str
    justify: str = "left"
    key: bool = False          # an id or a name: never cut, repeated in every block
    wrap: int | None = None    # free text: may wrap, down to this many columns
    max: int | None = None     # free text: never wider than this (wraps beyond)
    drop: int | None = None    # may be left out when too wide; lower numbers go first
    style: str | None = None
    group: str | None = None   # adjacent columns of one group stay in one block (`split`)


def _text(text: str, style: str = "") -> Text:
    """Text that wraps at the width whatever the console's soft-wrap setting (rich takes
    overflow "ignore", a soft-wrapping console's, for "never wrap")."""
    return Text(text, style=style, no_wrap=False, overflow="fold")


def _width(markup: str) -> int:
    return max((cell_len(line) for line in Text.from_markup(markup).plain.split("\n")),
               default=0)


def _word(markup: str) -> int:
    """The longest word (what a wrapping column cannot go below without cutting it)."""
    return max((cell_len(w) for w in Text.from_markup(markup).plain.split()), default=0)


class FitTable:
    """A table laid out for the width it is printed at (see the module docstring). Cells are
    rich markup (escape ids that could hold `[`)."""

    def __init__(self, title: str, columns: Sequence[Col], *, compact: bool = False,
                 split: bool = False, empty: str = "nothing to show",
                 see: str = "--json, or a wider terminal (COLUMNS=200)",
                 title_justify: str = "center", max_drop: int | None = None):
        self.title = title
        self.columns = list(columns)
        self.compact = compact      # the report's style: no edge padding, collapsed padding
        self.split = split
        self.empty = empty
        self.see = see
        self.title_justify = title_justify
        self.max_drop = max_drop    # more to drop than this: one entry per row instead
        self.rows: list[list[str]] = []

    def add_row(self, *cells: str) -> None:
        self.rows.append(list(cells))

    # widths ---------------------------------------------------------------------------------

    def _content(self) -> list[int]:
        """Per column, its full width, or for a wrapping column the width it can wrap to."""
        widths = [_width(c.header) for c in self.columns]
        words = [_word(c.header) for c in self.columns]
        for row in self.rows:
            widths = [max(w, _width(cell)) for w, cell in zip(widths, row, strict=True)]
            words = [max(w, _word(cell)) for w, cell in zip(words, row, strict=True)]
        out = []
        for c, full, word in zip(self.columns, widths, words, strict=True):
            if c.wrap:
                full = min(full, max(c.wrap, word))
                full = min(full, max(c.max, word)) if c.max else full
            out.append(full)
        return out

    def need(self, idx: Sequence[int], content: list[int] | None = None) -> int:
        """The width the columns `idx` take, wrapping columns wrapped (borders and padding as
        rich lays them out)."""
        content = content or self._content()
        total = len(idx) + 1                         # the box: one rule per column, plus one
        for pos, i in enumerate(idx):
            w = content[i]
            if self.compact:                         # right padding only, none at the end
                pad = 0 if pos == len(idx) - 1 else 1
            else:
                pad = 2
            total += w + pad
        return total

    # layouts --------------------------------------------------------------------------------

    def _table(self, idx: Sequence[int], title: str | None) -> Table:
        # a Text title keeps its own style (rich applies title_style to str titles only)
        table = Table(title=_text(title, "bold" if self.compact else "table.title")
                      if title else None, title_justify=self.title_justify,
                      pad_edge=not self.compact, collapse_padding=self.compact)
        for i in idx:
            c = self.columns[i]
            table.add_column(c.header, justify=c.justify, style=c.style,
                             no_wrap=not c.wrap, overflow="fold",
                             max_width=c.max if c.wrap else None)
        for row in self.rows:
            table.add_row(*(row[i] for i in idx))
        return table

    def _blocks(self, width: int, content: list[int]) -> list[list[int]] | None:
        keys = [i for i, c in enumerate(self.columns) if c.key]
        units: list[list[int]] = []                  # columns that go together
        for i, c in enumerate(self.columns):
            if c.key:
                continue
            if units and c.group is not None and self.columns[units[-1][-1]].group == c.group:
                units[-1].append(i)
            else:
                units.append([i])
        blocks: list[list[int]] = []
        block: list[int] = []
        for unit in units:
            if self.need(keys + block + unit, content) <= width:
                block += unit
                continue
            if not block:
                return None                          # the keys and one unit do not fit
            blocks.append(block)
            block = list(unit)
            if self.need(keys + block, content) > width:
                return None
        blocks.append(block)
        return [sorted(keys + b) for b in blocks]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        title = _text(self.title, "bold")
        if not self.rows:
            yield title
            yield _text(f"none: {self.empty}", "dim")
            return
        content = self._content()
        every = list(range(len(self.columns)))
        if self.need(every, content) <= width:
            yield self._table(every, self.title)
            return
        if self.split:
            blocks = self._blocks(width, content)
            if blocks:
                yield title
                for n, block in enumerate(blocks):
                    if n:
                        yield _text("")
                    yield self._table(block, None)
                return
        droppable = sorted((c.drop, -i) for i, c in enumerate(self.columns)
                           if c.drop is not None)
        keep, dropped = list(every), []
        for _, neg in droppable[:self.max_drop]:
            keep.remove(-neg)
            dropped.append(-neg)
            if self.need(keep, content) <= width:
                yield self._table(keep, self.title)
                names = ", ".join(self.columns[i].header.replace("\n", " ")
                                  for i in sorted(dropped))
                yield _text(f"left out at {width} columns: {names}; see them with {self.see}",
                            "dim")
                return
        yield from self._stacked(title, width)

    def _stacked(self, title: Text, width: int) -> RenderResult:
        keys = [i for i, c in enumerate(self.columns) if c.key] or [0]
        rest = [i for i in range(len(self.columns)) if i not in keys]
        header = lambda i: self.columns[i].header.replace("\n", " ")  # noqa: E731
        yield title
        then = "the other values, each after its column's name" if self.compact else \
            " · ".join(header(i) for i in rest)
        yield _text(f"(too narrow for the table at {width} columns: each "
                    f"{' · '.join(header(i) for i in keys) or 'row'} on its own line, then "
                    f"{then})", "dim")
        for row in self.rows:
            line = Text.from_markup(" · ".join(row[i] for i in keys), style="bold")
            line.no_wrap, line.overflow = True, "ignore"
            yield line
            if rest:
                details = Text.from_markup(" · ".join(
                    (f"{header(i)} " if self.compact and header(i) else "")
                    + (row[i].replace("\n", " ") or "—") for i in rest))
                details.no_wrap, details.overflow = False, "fold"
                yield Padding(details, (0, 0, 0, 4), expand=False)
