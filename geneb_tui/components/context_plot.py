"""Score against context (`geneb_tui.core.context.ContextCurves`): a plotext curve per model,
each point an entry at one context policy with its interval as a vertical bar; a line joins a
model's crops of one side over their lengths (its own limit and windows stand apart)."""

from __future__ import annotations

from textual_plotext import PlotextPlot

from geneb_tui.core.context import ContextCurves

COLOURS = ("orange", "cyan", "green", "magenta", "blue", "red", "yellow")
SPREAD = 0.08   # x offset between the models' points at one context, so bars stay apart


class ContextPlot(PlotextPlot):
    data: ContextCurves | None = None   # what is drawn

    def show_nothing(self) -> None:
        """An empty plot (while a new selection's curve is computed)."""
        self.data = None
        self.plt.clear_data()
        self.plt.clear_figure()
        self.refresh()

    def show(self, data: ContextCurves) -> None:
        self.show_nothing()
        self.data, plt = data, self.plt
        x = {context: i for i, (context, _) in enumerate(data.order)}
        models = data.models()
        for k, name in enumerate(models):
            colour = COLOURS[k % len(COLOURS)]
            shift = (k - (len(models) - 1) / 2) * SPREAD
            points = [p for p in data.points if p["name"] == name]
            sweeps: dict[str, list[tuple[float, float]]] = {}
            for p in points:
                px = x[p["context"]] + shift
                if p["low"] is not None and p["high"] is not None:
                    plt.plot([px, px], [p["low"], p["high"]], marker="│", color=colour)
                if p["value"] is not None and p["context"].startswith("crop-"):
                    sweeps.setdefault(p["context"].split("-")[1], []).append((px, p["value"]))
            for crops in sweeps.values():
                if len(crops) > 1:
                    plt.plot(*zip(*crops, strict=True), marker="braille", color=colour)
            shown = [(x[p["context"]] + shift, p["value"]) for p in points
                     if p["value"] is not None]
            if shown:
                plt.scatter(*zip(*shown, strict=True), marker="●", color=colour, label=name)
        if data.order:
            plt.xticks(list(range(len(data.order))), [label for _, label in data.order])
            plt.xlim(-0.5, len(data.order) - 0.5)
        plt.title(f"{data.scope} score against context (bars: its interval)")
        plt.xlabel("context: the nucleotides each sequence was cut to")
        self.refresh()
