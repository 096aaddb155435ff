"""The paper's figures of `geneb-engine report --figures DIR`: each analysis drawn with matplotlib
(Agg, a `Figure` of its own, no pyplot state) as `<name>.svg` and `<name>.png`, and the values
each one draws in `figures.json` (figure name -> its data).

The data is taken from the report's frames (the analysis layer's
`store.analyses.compute.compute`, what `report --json` prints), never recomputed: rows of those
frames as they are, filtered to what the figure shows. The only values a figure adds are the
scatter's parameter counts (the model catalog's `params`, the x of the scale analysis) and the
critical-difference diagram's groups (runs of entries whose average ranks differ by less than
the CD, Demšar's bars).

DIR is an output folder (`store.output_folder`): only the figures' own files are written and
replaced (`figures.json` last), a previous run's figure that is empty now removed, every other
file kept; a folder of the version before the marker is recognised by its `figures.json`
(`legacy_names`).

Text from the store (model ids, sources) is drawn literally: no mathtext (`text.parse_math`
off, no TeX) and SVG text kept as text (`svg.fonttype` none, escaped by matplotlib's writer).
The same frames give the same bytes: no date in the SVG, a fixed `svg.hashsalt`."""

from __future__ import annotations

import importlib.util
import io
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from store.analyses.presets import MIN_TASKS, TOO_FEW_TASKS
from store.catalog import params_text
from store.output_folder import OutputFolder, write_output
from store.vocab.context import axis_label
from store.vocab.protocol import FEW_SHOT_REGIMES, REGIMES

if TYPE_CHECKING:
    import polars as pl

FIGURES_JSON = "figures.json"
GENERATOR = "geneb-engine report --figures"   # the output's writer, in its marker
FORMATS = ("svg", "png")
# Figure name -> what its analysis is, in the line saying it was not written.
FIGURES = {
    "rank_shift": "rank shifts between regimes (no few-shot results)",
    "degradation": "few-shot degradation (no few-shot results)",
    "scale": "scale analysis (fewer than 3 entries with a known parameter count: nothing to "
             "correlate)",
    "critical_difference": "critical-difference diagram (no rank tests: --resamples 0, no "
                           f"entry with every task, or {TOO_FEW_TASKS}: fewer than {MIN_TASKS})",
    "controlled_pairs": "controlled pairs (no two entries that differ in one attribute)",
    # drawn only where the report has the frame (a model at two context policies or more):
    # every other store's figures, and the lines saying what was not written, as before
    "context_curve": "score against context (no model at two context policies or more)",
    "context_curve_categories": "score against context per category (no model at two context "
                                "policies or more in a suite of several categories)",
}
OPTIONAL = ("context_curve", "context_curve_categories")
STYLE = {"svg.hashsalt": "geneb", "svg.fonttype": "none", "text.usetex": False,
         "text.parse_math": False, "font.size": 9, "figure.dpi": 100}
PNG_DPI = 110


def missing() -> str | None:
    """Why figures cannot be drawn here (matplotlib not installed), or None."""
    if importlib.util.find_spec("matplotlib") is None:
        return "matplotlib is not installed; install the figures extra (pip install " \
               "'geneb[figures]')"
    return None


def _rows(frames: Mapping[str, pl.DataFrame], name: str, **equal) -> list[dict]:
    """The rows of frame `name` (none when the report has no such frame) whose columns have
    the given values."""
    import polars as pl  # lazy: polars

    frame = frames.get(name)
    if frame is None:
        return []
    for column, value in equal.items():
        frame = frame.filter(pl.col(column) == value)
    return frame.to_dicts()


def cd_groups(ranks: list[float], cd: float) -> list[list[int]]:
    """The CD diagram's bars: maximal runs (first, last index into `ranks`, sorted ascending)
    of two or more entries whose average ranks differ by less than `cd`."""
    groups: list[list[int]] = []
    reach = -1
    for i, rank in enumerate(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] - rank < cd:
            j += 1
        if j > reach and j > i:
            groups.append([i, j])
        reach = max(reach, j)
    return groups


def figure_data(frames: Mapping[str, pl.DataFrame], models: pl.DataFrame, *,
                regime: str) -> dict[str, dict | None]:
    """Figure name -> the values it draws (None: its analysis is empty on this store); the
    OPTIONAL figures only where the report has their frame."""
    shifts = {f"rank_shift_full_{r}": rows for r in FEW_SHOT_REGIMES
              if (rows := _rows(frames, f"rank_shift_full_{r}"))}
    summary = [r for r in _rows(frames, "degradation_summary")
               if any(r[x] is not None for x in FEW_SHOT_REGIMES)]
    params = dict(zip(models["model_id"], models["params"], strict=True))
    points = [{"model": r["model"], "source": r.get("source"), "params": params.get(r["model"]),
               "macro": r["macro"]}
              for r in _rows(frames, "aggregates")
              if (params.get(r["model"]) or 0) > 0 and r["macro"] is not None]
    rho = _rows(frames, "scale_rho_intervals", scope="macro") or _rows(frames, "scale",
                                                                        scope="macro")
    test = _rows(frames, "rank_tests", regime=regime, scope="all")
    ranks = sorted(_rows(frames, "average_ranks", regime=regime, scope="all"),
                   key=lambda r: r["average_rank"])
    cd = test[0]["critical_difference"] if test else None
    pairs = _rows(frames, "controlled_pairs")
    return {
        "rank_shift": shifts or None,
        "degradation": {"degradation_summary": summary} if summary else None,
        "scale": {"points": points, "rho": rho}
        if any(r["rho"] is not None for r in rho) else None,
        "critical_difference": {
            "rank_test": test[0], "average_ranks": ranks,
            "groups": cd_groups([r["average_rank"] for r in ranks], cd)}
        if ranks and cd is not None and test[0]["n_tasks"] >= MIN_TASKS else None,
        "controlled_pairs": {"controlled_pairs": pairs,
                             "intervals": _rows(frames, "controlled_pair_intervals",
                                                scope="macro")} if pairs else None,
        **_context_curves(_rows(frames, "context_curve")),
    }


def _context_curves(rows: list[dict]) -> dict[str, dict]:
    """The OPTIONAL figures of the report's `context_curve` rows: `context_curve` its macro
    rows, `context_curve_categories` its categories' (each figure's data keyed
    `context_curve`); none without such rows."""
    macro = [r for r in rows if r["scope"] == "macro"]
    categories = [r for r in rows if r["scope"] != "macro"]
    return {name: {"context_curve": part} for name, part in
            (("context_curve", macro), ("context_curve_categories", categories)) if part}


def _entry(row: dict, key: str = "model", source: str = "source") -> str:
    """An entry's label: the model id, with its source when the rows carry one."""
    return f"{row[key]} ({row[source]})" if row.get(source) else row[key]


def _rank_shift(fig, data: dict) -> None:
    names = sorted(data)
    regimes = [n.removeprefix("rank_shift_full_") for n in names]
    first = sorted(data[names[0]], key=lambda r: r["rank_a"])
    entries = [_entry(r) for r in first]
    shift = {(_entry(r), n): r["shift"] for n in names for r in data[n]}
    values = [[shift.get((e, n)) for n in names] for e in entries]
    grid = [[float("nan") if v is None else v for v in row] for row in values]
    fig.set_size_inches(5.5 + 0.9 * len(names), 1.2 + 0.2 * len(entries))
    ax = fig.add_subplot()
    top = max((abs(v) for row in values for v in row if v is not None), default=1) or 1
    image = ax.imshow(grid, cmap="RdBu", vmin=-top, vmax=top, aspect="auto")
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            if v is not None:
                ax.text(j, i, f"{v:+d}" if v else "0", ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(names)), [f"full → {r}" for r in regimes])
    ax.set_yticks(range(len(entries)), entries, fontsize=7)
    ax.set_title("Rank shift from full")
    fig.colorbar(image, ax=ax, label="rank shift (+: climbs)", shrink=0.5)


def _degradation(fig, data: dict) -> None:
    rows = data["degradation_summary"]
    fig.set_size_inches(1.2 + 0.55 * len(rows), 3.8)
    ax = fig.add_subplot()
    width = 0.8 / len(REGIMES)
    for k, regime in enumerate(REGIMES):
        heights = [float("nan") if r[regime] is None else r[regime] for r in rows]
        ax.bar([i + (k - 1) * width for i in range(len(rows))], heights, width, label=regime)
    ax.set_xticks(range(len(rows)), [r["scope"] for r in rows], rotation=45, ha="right")
    ax.set_ylabel("mean score over entries")
    ax.set_title("Few-shot degradation per category")
    ax.legend(title="regime")


def _scale(fig, data: dict) -> None:
    fig.set_size_inches(6.4, 4.4)
    ax = fig.add_subplot()
    by_source: dict[str | None, list[dict]] = {}
    for p in data["points"]:
        by_source.setdefault(p["source"], []).append(p)
    rho = {r.get("source"): r for r in data["rho"]}
    for source, points in by_source.items():
        r = rho.get(source)
        label = [source] if source else []
        if r is not None and r["rho"] is not None:
            label.append(f"ρ = {r['rho']:.2f}")
            if r.get("low") is not None:
                label.append(f"[{r['low']:.2f}, {r['high']:.2f}]")
        ax.scatter([p["params"] for p in points], [p["macro"] for p in points], s=14,
                   label=" ".join(label) or None)
    ax.set_xscale("log")
    # a count as every surface writes it (10M, 1.5B): the log axis's own labels are mathtext,
    # which the figures turn off
    ax.xaxis.set_major_formatter(lambda value, _position: params_text(value))
    ax.set_xlabel("parameters")
    ax.set_ylabel("macro score")
    ax.set_title("Scale: Spearman's ρ between size and macro score")
    ax.legend(loc="lower right")


def _critical_difference(fig, data: dict) -> None:
    ranks = data["average_ranks"]
    cd = data["rank_test"]["critical_difference"]
    n = len(ranks)
    fig.set_size_inches(8.5, 1.2 + 0.07 * len(data["groups"]) + 0.17 * ((n + 1) // 2))
    ax = fig.add_subplot()
    ax.set_axis_off()
    low, high = 1, max(n, 2)
    ax.set_xlim(low - 0.5, high + 0.5)
    ax.set_ylim(-(1.1 + 0.3 * len(data["groups"]) + (n + 1) // 2), 2.2)
    ax.hlines(0, low, high, color="black")
    for tick in range(low, high + 1):
        ax.vlines(tick, 0, 0.25, color="black", lw=0.6)
        # The ends, and every fifth rank not crowding the last (40 beside 41): wider labels
        # need more room.
        if tick in (low, high) or (tick % 5 == 0 and high - tick >= 2 * len(str(high)) - 1):
            ax.text(tick, 0.5, str(tick), ha="center", fontsize=7)
    ax.hlines(1.6, low, low + cd, color="black", lw=2)
    ax.text(low + cd / 2, 1.8, f"CD = {cd:.2f}", ha="center", fontsize=7)
    groups = data["groups"]
    for k, (first, last) in enumerate(groups):   # the bars just below the axis
        ax.hlines(-0.35 - 0.3 * k, ranks[first]["average_rank"] - 0.1,
                  ranks[last]["average_rank"] + 0.1, lw=2, color="black")
    top = 0.6 + 0.3 * len(groups)                  # the labels below the bars
    half = (n + 1) // 2
    for i, r in enumerate(ranks):
        left = i < half
        y = -(top + (i if left else n - 1 - i))
        end = low - 0.4 if left else high + 0.4
        ax.plot([r["average_rank"], r["average_rank"], end], [0, y, y], color="grey", lw=0.5,
                zorder=0)
        ax.text(end, y, f"{_entry(r)} {r['average_rank']:.2f}" if left
                else f"{r['average_rank']:.2f} {_entry(r)}", ha="right" if left else "left",
                va="center", fontsize=6)
    test = data["rank_test"]
    ax.set_title(f"Critical difference ({test['regime']}, {test['n_tasks']} tasks, Nemenyi "
                 f"alpha = {test['alpha']})", fontsize=9)


def _controlled_pairs(fig, data: dict) -> None:
    pairs = data["controlled_pairs"]
    ci = {(r["model_a"], r["model_b"], r.get("source")): r for r in data["intervals"]}
    fig.set_size_inches(11, 1.2 + 0.18 * len(pairs))
    ax = fig.add_subplot()
    ys = range(len(pairs))
    delta = [p["macro"] for p in pairs]
    span = [ci.get((p["model_a"], p["model_b"], p.get("source"))) for p in pairs]
    err = [[0 if s is None else d - s["low"] for d, s in zip(delta, span, strict=True)],
           [0 if s is None else s["high"] - d for d, s in zip(delta, span, strict=True)]]
    ax.errorbar(delta, ys, xerr=err if data["intervals"] else None, fmt="o", ms=3, lw=0.8)
    ax.axvline(0, color="grey", lw=0.6)
    ax.set_yticks(ys, [f"{p['model_a']} − {p['model_b']} ({p['attribute']}: {p['value_a']} vs "
                       f"{p['value_b']})" for p in pairs], fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("macro score difference A − B" + (" (interval: bootstrap)"
                                                   if data["intervals"] else ""))
    ax.set_title("Controlled pairs")


def _context_order(rows: list[dict]) -> list[dict]:
    """The x axis: every model's contexts in the frame's order (by length, windows after the
    crop of their length, the own limit last), each once (a row of each)."""
    return sorted({r["context"]: r for r in rows}.values(),
                  key=lambda r: (r["context_length"] is None, r["context_length"] or 0,
                                 r["context"].startswith("windows")))


def _curve_axes(ax, rows: list[dict], order: list[dict]) -> None:
    """One scope's curves on `ax` over the contexts `order`: a series per model, its interval
    as a bar, a line over the lengths of each crop side kept."""
    x = {r["context"]: i for i, r in enumerate(order)}
    by_model: dict[str, list[dict]] = {}
    for r in rows:
        by_model.setdefault(r["model"], []).append(r)
    nan = float("nan")
    for k, (model, points) in enumerate(by_model.items()):
        shift = (k - (len(by_model) - 1) / 2) * 0.06   # models side by side, bars apart
        xs = [x[p["context"]] + shift for p in points]
        ys = [nan if p["value"] is None else p["value"] for p in points]
        err = [[0 if None in (p["low"], p["value"]) else p["value"] - p["low"] for p in points],
               [0 if None in (p["high"], p["value"]) else p["high"] - p["value"] for p in points]]
        line = ax.errorbar(xs, ys, yerr=err, fmt="o", ms=4, lw=0.8, capsize=2, label=model)
        sweeps: dict[str, list] = {}     # a line over the lengths of each crop side kept
        for a, b, p in zip(xs, ys, points, strict=True):
            if p["context"].startswith("crop-"):
                sweeps.setdefault(p["context"].split("-")[1], []).append((a, b))
        for crops in sweeps.values():
            if len(crops) > 1:
                ax.plot(*zip(*crops, strict=True), color=line.lines[0].get_color(), lw=1)
    ax.set_xticks(range(len(order)),
                  [axis_label(r["context"], r["context_length"]) for r in order],
                  rotation=30, ha="right")


XLABEL = "context: the nucleotides each sequence was cut to (windows: each window's)"


def _context_curve(fig, data: dict) -> None:
    rows = data["context_curve"]
    order = _context_order(rows)
    fig.set_size_inches(2.8 + 0.9 * len(order), 4.2)
    ax = fig.add_subplot()
    _curve_axes(ax, rows, order)
    ax.set_xlabel(XLABEL)
    ax.set_ylabel(f"{rows[0]['scope']} score (interval: task bootstrap)")
    ax.set_title("Score against context")
    ax.legend(title="model", fontsize=7)


def _context_curve_categories(fig, data: dict) -> None:
    """Small multiples: a panel per category (in the frame's order), the same x and y axes."""
    rows = data["context_curve"]
    order = _context_order(rows)
    scopes = list(dict.fromkeys(r["scope"] for r in rows))
    columns = min(3, len(scopes))
    lines = -(-len(scopes) // columns)
    fig.set_size_inches(columns * (1.6 + 0.7 * len(order)), 0.6 + 3.0 * lines)
    axes = fig.subplots(lines, columns, sharex=True, sharey=True, squeeze=False).ravel()
    for ax, scope in zip(axes, scopes, strict=False):
        _curve_axes(ax, [r for r in rows if r["scope"] == scope], order)
        ax.set_title(scope, fontsize=9)
        ax.tick_params(labelbottom=True)
    for ax in axes[len(scopes):]:
        ax.set_visible(False)
    axes[0].legend(title="model", fontsize=7)
    fig.supxlabel(XLABEL)
    fig.supylabel("category score (interval: task bootstrap)")
    fig.suptitle("Score against context per category")


DRAW: dict[str, Callable] = {"rank_shift": _rank_shift, "degradation": _degradation,
                             "scale": _scale, "critical_difference": _critical_difference,
                             "controlled_pairs": _controlled_pairs,
                             "context_curve": _context_curve,
                             "context_curve_categories": _context_curve_categories}


def figure(name: str, data: dict):
    """Figure `name` of `data`, drawn (a matplotlib `Figure`; call under `STYLE`)."""
    from matplotlib.figure import Figure  # lazy: matplotlib

    fig = Figure(layout="constrained")
    DRAW[name](fig, data)
    return fig


def draw(name: str, data: dict) -> dict[str, bytes]:
    """Figure `name` of `data` as the bytes of each format in FORMATS."""
    import matplotlib  # lazy: matplotlib

    with matplotlib.rc_context(STYLE):
        fig = figure(name, data)
        out = {}
        for fmt in FORMATS:
            buffer = io.BytesIO()
            fig.savefig(buffer, format=fmt, dpi=PNG_DPI,
                        metadata={"Date": None} if fmt == "svg" else {"Software": None})
            out[fmt] = buffer.getvalue()
    return out


def legacy_names(folder: Path) -> list[str] | None:
    """The files `report --figures` of a version before the marker wrote into `folder`: its
    `figures.json` and the SVG and PNG of each figure that file holds; None when the folder
    holds no such `figures.json` (an object whose keys are figure names)."""
    try:
        doc = json.loads((folder / FIGURES_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not doc or not set(doc) <= set(FIGURES):
        return None
    return [FIGURES_JSON, *(f"{name}.{fmt}" for name in doc for fmt in FORMATS)]


def write_figures(out: OutputFolder, data: Mapping[str, dict | None]) -> list[str]:
    """Draw every figure with data and write them with `figures.json` as the output of folder
    `out` (see the module docstring); the names of the figures written. A folder that cannot
    be written is one GenebError naming the option."""
    files = {f"{name}.{fmt}": blob for name, d in data.items() if d is not None
             for fmt, blob in draw(name, d).items()}
    # As `report --json` writes its frames (`emit_json`), so the values read back equal.
    text = json.dumps({k: v for k, v in data.items() if v is not None}, default=str, indent=1)
    write_output(out, {**files, FIGURES_JSON: (text + "\n").encode("utf-8")}, last=FIGURES_JSON)
    return [name for name, d in data.items() if d is not None]
