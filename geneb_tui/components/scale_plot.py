"""Scale against score: a plotext scatter on log10(params), with Spearman ρ in the title; the
best models are labelled with their names (and drawn in their own colour)."""

from __future__ import annotations

import math

from textual_plotext import PlotextPlot

from geneb_tui.core.compare import Scatter
from store.catalog import params_text

LABELLED = 5   # how many of the best points carry their model's name


def top_points(data: Scatter, n: int = LABELLED) -> list[int]:
    """Indices of the `n` best values (ties: the first listed), best first."""
    order = sorted(range(len(data.values)), key=lambda i: (-data.values[i], data.labels[i]))
    return order[:n]


class ScalePlot(PlotextPlot):
    def show_nothing(self) -> None:
        """An empty plot (while a new selection's points are computed)."""
        self.plt.clear_data()
        self.plt.clear_figure()
        self.labelled: list[str] = []
        self.refresh()

    def show(self, data: Scatter) -> None:
        self.show_nothing()
        plt = self.plt
        if data.params:
            x = [math.log10(p) for p in data.params]
            top = top_points(data)
            rest = [i for i in range(len(x)) if i not in top]
            if rest:
                plt.scatter([x[i] for i in rest], [data.values[i] for i in rest], marker="dot",
                            label="other models")
            plt.scatter([x[i] for i in top], [data.values[i] for i in top], marker="●",
                        color="orange", label=f"top {len(top)}")
            lo, hi = math.floor(min(x)), math.ceil(max(x))
            middle = (min(x) + max(x)) / 2
            for i in top:
                # the label carries its point: right of it in the left half, left of it
                # in the right half, so it is never cut at the frame
                right_half = x[i] > middle
                plt.text(f"{data.labels[i]} ●" if right_half else f"● {data.labels[i]}",
                         x=x[i], y=data.values[i], color="orange",
                         alignment="right" if right_half else "left")
                self.labelled.append(data.labels[i])
            ticks = list(range(lo, hi + 1))
            plt.xticks(ticks, [params_text(10**t) for t in ticks])
        rho = "n/a" if data.rho is None else f"{data.rho:+.2f}"
        plt.title(f"{data.column} vs params (log): Spearman ρ = {rho}, n = {data.n}")
        plt.xlabel("parameters")
        plt.ylabel(data.column)
        self.refresh()
