"""A task drill-down's plot of one model's test values (`geneb_tui.core.kind_plots.DrillPlot`):
a regression task's predicted against true values, a variant task's ROC curve (plotext)."""

from __future__ import annotations

from textual_plotext import PlotextPlot

from geneb_tui.core.kind_plots import DrillPlot
from store.vocab.kinds import TaskKind


class KindPlot(PlotextPlot):
    data: DrillPlot | None = None   # what is drawn

    def show_nothing(self) -> None:
        """An empty plot (while another model's values are read)."""
        self.data = None
        self.plt.clear_data()
        self.plt.clear_figure()
        self.refresh()

    def show(self, data: DrillPlot) -> None:
        self.show_nothing()
        self.data, plt = data, self.plt
        if TaskKind(data.kind) is TaskKind.REGRESSION:
            if data.x:   # each axis fitted to its values (no y = x line: a ridge fit's
                # predictions keep the targets' order, not their scale; Pearson r in the title)
                plt.scatter(list(data.x), list(data.y), marker="dot", color="orange")
            plt.xlabel("true value")
            plt.ylabel("predicted")
        else:
            if data.x:
                plt.plot([0, 1], [0, 1], marker="braille", color="gray", label="chance")
                plt.plot(list(data.x), list(data.y), marker="braille", color="orange",
                         label="ROC")
            plt.xlim(0, 1)
            plt.ylim(0, 1)
            plt.xlabel("false-positive rate")
            plt.ylabel("true-positive rate")
        plt.title(data.note or data.title)
        self.refresh()
