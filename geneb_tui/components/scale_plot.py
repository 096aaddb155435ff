"""Scale against score: a plotext scatter on log10(params), with Spearman ρ in the title."""

from __future__ import annotations

import math

from textual_plotext import PlotextPlot

from geneb_tui.core.compare import Scatter


class ScalePlot(PlotextPlot):
    def show(self, data: Scatter) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        if data.params:
            x = [math.log10(p) for p in data.params]
            plt.scatter(x, data.values, marker="dot")
            lo, hi = math.floor(min(x)), math.ceil(max(x))
            ticks = list(range(lo, hi + 1))
            plt.xticks(ticks, [_params_label(10**t) for t in ticks])
        rho = "n/a" if data.rho is None else f"{data.rho:+.2f}"
        plt.title(f"{data.column} vs params (log): Spearman ρ = {rho}, n = {data.n}")
        plt.xlabel("parameters")
        plt.ylabel(data.column)
        self.refresh()


def _params_label(n: float) -> str:
    for div, s in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= div:
            return f"{n / div:g}{s}"
    return f"{n:g}"
