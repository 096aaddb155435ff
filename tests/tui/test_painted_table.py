"""`PaintedTable` paints the lines Textual's DataTable paints (cell by cell: character, style,
mouse metadata), for every kind of cell, with the cursor and the hover anywhere and any window,
but for the column cut at the window's left edge, shown without its text; its own painting takes
the plain cells and leaves every other to DataTable. And every table of the dashboard's views
(the comparison tabs, the Significance tabs, the task view) paints as DataTable would."""

from __future__ import annotations

import pytest
from conftest import cut_at_left, painted, settle
from rich.style import Style
from rich.text import Text
from textual.app import App
from textual.coordinate import Coordinate

from geneb_tui.app import GenebApp
from geneb_tui.components.painted_table import PaintedTable
from geneb_tui.components.results_table import ResultsTable
from geneb_tui.components.view_table import ViewTable
from geneb_tui.core.compare import VIEWS

TEXTS = ["0.123", "x", "a name longer than its column", "漢字", "ok ", " lead", "a\tb",
         "two\nlines", "[b]not markup[/b]", "#4 [2-7] ≈", "—", ""]
STYLES = [None, "", "bold", "#101010 on #ff8800 bold", Style(dim=True, italic=True)]
JUSTIFY = [None, "default", "left", "right", "center", "full"]
# what the table's own painting leaves to DataTable wherever it is (tab, line break, trailing
# space, empty; also full justification and spans); a text longer than its column is left to it
# in the fixed-width columns and painted in the auto-width one
DECLINED = {"a\tb", "two\nlines", "ok ", ""}
LONG = "a name longer than its column"


class TableApp(App):
    def __init__(self, **table) -> None:
        super().__init__()
        self.table = table

    def compose(self):
        yield PaintedTable(id="t", **self.table)


def fill(table: PaintedTable) -> None:
    table.add_column("Cell", width=12)
    for j in JUSTIFY:
        table.add_column(Text(f"{j}", style="bold"), width=9)
    table.add_column("auto")
    for text in TEXTS:
        for style in STYLES:
            kwargs = {} if style is None else {"style": style}
            table.add_row(Text(f"{text}"[:10], **kwargs),
                          *(Text(text, justify=j, **kwargs) for j in JUSTIFY),
                          Text(text, **kwargs))
    table.add_row(Text.assemble(("span", "bold"), " x"), "plain [i]markup[/i]", 0.5, 7,
                  None, Text("x", style="on red"), Text("ok"), Text(""))


@pytest.mark.parametrize("table_kwargs", [
    {"cursor_type": "cell", "fixed_columns": 1},
    {"cursor_type": "row", "zebra_stripes": True},
    {"cursor_type": "none", "cell_padding": 0},
    {"cursor_type": "column", "cell_padding": 2, "fixed_columns": 2},
])
async def test_every_kind_of_cell_paints_as_datatable(table_kwargs, monkeypatch):
    taken = []
    plain_cell = PaintedTable._plain_cell

    def counting(self, *args):
        lines = plain_cell(self, *args)
        taken.append((self.get_cell_at(Coordinate(args[0], args[1])), lines is not None))
        return lines

    monkeypatch.setattr(PaintedTable, "_plain_cell", counting)
    app = TableApp(**table_kwargs)
    async with app.run_test(size=(90, 80)) as pilot:
        table = app.query_one(PaintedTable)
        fill(table)
        await pilot.pause()
        for row, column, x in ((0, 0, 0), (7, 3, 0), (30, 5, 17), (60, 7, 40)):
            table.move_cursor(row=row, column=column, animate=False)
            table.hover_coordinate = Coordinate(row + 2, column)
            table.scroll_to(x=x, animate=False, immediate=True)
            await pilot.pause()
            mine = painted(table, stock=False)
            assert mine == painted(table, stock=True)
            assert sum(len(text) for line in mine for text, _, _ in line) > 1000
    took = {str(cell) for cell, fast in taken if fast}
    left = {cell.plain if isinstance(cell, Text) else str(cell) for cell, fast in taken
            if not fast}
    assert {"0.123", "x", "漢字", " lead", "[b]not markup[/b]", "#4 [2-7] ≈", "—"} <= took
    assert DECLINED <= left and "span x" in left
    assert not DECLINED & took
    assert LONG in took and LONG in left


async def test_the_views_tables_paint_as_datatable(official_store):
    app = GenebApp(official_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        for i, (name, _) in enumerate(VIEWS, 1):
            await pilot.press(str(i))
            await settle(pilot)
            if name == "scale":
                continue
            table = app.screen.query_one(f"#{name}-table", ViewTable)
            assert table.row_count > 0, name
            for x in (0, 23):
                table.scroll_to(x=x, animate=False, immediate=True)
                await settle(pilot)
                assert painted(table, stock=False) == painted(table, stock=True), name
        await pilot.press("6")   # Tasks
        await pilot.press("enter")
        await settle(pilot)
        task = app.screen.query_one("#task-table", ViewTable)
        assert task.row_count > 0 and painted(task, False) == painted(task, True)
        await pilot.press("escape", "escape", "d")
        await settle(pilot)
        for tab, table_id in (("2", "#matrix-table"), ("3", "#pair-table")):
            await pilot.press(tab)
            await settle(pilot)
            table = app.screen.query_one(table_id, ViewTable)
            assert table.row_count > 0 and painted(table, False) == painted(table, True)


async def test_a_column_cut_at_the_left_edge_shows_no_fragment_of_its_text(small_store):
    """The main table scrolled right by 3 cells: the Source column (10 wide, after the fixed
    Model column, 9 wide) is cut at the window's left edge; DataTable would show the tail of
    "Source" and "official" there ("urce", "ficial"), the table shows its 7 cells blank."""
    app = GenebApp(small_store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        table = app.query_one(ResultsTable)
        assert [c.get_render_width(table) for c in table.ordered_columns[:2]] == [9, 10]
        table.scroll_to(x=3, animate=False, immediate=True)
        await settle(pilot)
        assert cut_at_left(table) == range(9, 16)

        def texts(lines):
            return ["".join(ch for ch, _, _ in line) for line in lines[:3]]

        stock = texts(painted(table, stock=True, raw=True))
        assert [line[9:16] for line in stock] == ["urce   ", "ficial ", "ficial "]
        mine = texts(painted(table, stock=False))
        assert [line[9:16] for line in mine] == [" " * 7] * 3
        assert [line[:9] + line[16:] for line in mine] == [line[:9] + line[16:] for line in stock]
        assert mine[0].startswith(" Model           Params")
        assert painted(table, stock=False) == painted(table, stock=True)
