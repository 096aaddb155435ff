"""What the missing-evaluations screen would run, and whether it may: plain data in and out.

The screen shows the candidates and asks; this module decides (no Textual):

- which models a run takes (`ticked`: the ticked runnable candidates, in the list's order) and
  which cells (`cells_of`: every missing cell of those models, as the view cache computed them,
  `geneb_tui.core.view_cache.missing_view` over `geneb_tui.core.query.missing_cells`);
- the remote-code trust rule (`Trust`): which of the run's models need
  `--trust-remote-code` is `store.runnable.assess`'s decision (`Runnability.remote_code`, and
  `Runnability.spec` names the commit the code runs at: the entry's or the store's pin, else
  none and `fill` resolves the branch's when the run starts, `engine.encoders.pins`); the
  dashboard adds only that such a run waits for the user's opt-in (the `t` toggle,
  `FillChoices.trust_remote_code`), and what it asks meanwhile;
- the run (`plan`): its models, tasks and regimes from the cells (the whole suite's tasks not
  listed), the options from `FillChoices` and the two text fields, and the command
  (`geneb_tui.core.fill.fill_command`), or a `Refused` with the one line that says why not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from geneb_tui.core.fill import FillChoices, fill_command, parse_address, parse_batch_size
from store.runnable import Runnability
from store.vocab.protocol import REGIMES

Cell = tuple[str, str, str]          # (model, task, regime)
TRUST_OFF = " (t: off)"              # the needs cell of a model that waits for the toggle


def ticked(candidates: Iterable[str], chosen: Iterable[str],
           assessed: Mapping[str, Runnability]) -> list[str]:
    """The models a run takes: the chosen candidates that run here, in the candidates' order
    (a ticked model the filters hide, or one that cannot run, is not run)."""
    chosen = set(chosen)
    return [m for m in candidates if m in chosen and assessed[m].runnable]


def cells_of(cells: Iterable[Cell], models: Iterable[str]) -> list[Cell]:
    """The cells of `models`, in the order of `cells`."""
    models = set(models)
    return [c for c in cells if c[0] in models]


def missing_counts(candidates: Iterable[str], cells: Iterable[Cell]) -> dict[str, int]:
    """Each candidate's number of missing cells (0 for one with none)."""
    counts = dict.fromkeys(candidates, 0)
    for m, _, _ in cells:
        counts[m] += 1
    return counts


@dataclass(frozen=True)
class Trust:
    """The remote-code trust decision for a run: the models that run Python code from their
    hub repository (`needed`, from `store.runnable.assess`) and whether the user allowed it
    (`granted`: the trust toggle)."""

    needed: tuple[str, ...]
    granted: bool

    @classmethod
    def of(cls, models: Iterable[str], assessed: Mapping[str, Runnability],
           granted: bool) -> Trust:
        return cls(tuple(m for m in models if assessed[m].remote_code), granted)

    @property
    def waits(self) -> bool:
        """Whether the run waits for the user: some model runs hub code, the toggle is off."""
        return bool(self.needed) and not self.granted

    @property
    def question(self) -> str:
        """What the user is asked while the run waits ("" when it does not)."""
        if not self.waits:
            return ""
        return (f"{', '.join(self.needed)} run(s) Python code from the model's hub repository: "
                "press t to pass --trust-remote-code (the code runs at its pinned commit, else "
                "at the one its branch names when the run starts, then pinned for this store), "
                "or untick it.")


def needs_text(a: Runnability, trust: bool) -> str:
    """A model's needs cell: what a run of it needs (`Runnability.short`), and `TRUST_OFF`
    where it runs hub code and the toggle is off."""
    if a.runnable and a.remote_code and not trust:
        return a.short + TRUST_OFF
    return a.short


def detail_text(a: Runnability) -> str:
    """A runnable model's line under the list: what it needs, its warning and its doubt, and
    for a model that runs hub code the `--models` spec it runs as (its commit, where known)."""
    parts = [p for p in (a.needs, a.warning, a.unsure and "may not run: " + a.unsure) if p]
    if a.remote_code:
        parts.append(f"runs as --models {a.spec} with --trust-remote-code")
    return "; ".join(parts) or "ready to run"


@dataclass(frozen=True)
class FillPlan:
    """A run of `geneb-engine fill --json`: its models, tasks (none: the whole suite) and
    regimes, the command, and the first warning of its models (e.g. larger than the device's
    memory) to show as it starts."""

    models: tuple[str, ...]
    tasks: tuple[str, ...]
    regimes: tuple[str, ...]
    command: tuple[str, ...]
    warning: str = ""

    @property
    def shown(self) -> str:
        """The command as the user would type it (`geneb-engine fill ...`)."""
        return "geneb-engine " + " ".join(self.command[3:])


@dataclass(frozen=True)
class Refused:
    """No run: the one line that says why."""

    why: str


def plan(root: Path, suite: str, suite_tasks: Sequence[str], models: Sequence[str],
         cells: Sequence[Cell], assessed: Mapping[str, Runnability], choices: FillChoices,
         regimes: Sequence[str], batch_text: str, address_text: str) -> FillPlan | Refused:
    """The run for the ticked `models` (`ticked`) and their missing `cells` (`cells_of`) in
    suite `suite`, whose tasks in the store are `suite_tasks` (none: the store does not have
    them yet, and the run computes the whole suite at `regimes`), with the `choices` and the
    batch size and Ray address as typed; or why not."""
    if not models:
        return Refused("Nothing to run: tick runnable models first (space, or a for all).")
    try:
        batch = parse_batch_size(batch_text)
    except ValueError as exc:
        return Refused(f"Batch size: {exc}")
    address = ""
    if choices.executor == "ray":
        try:
            address = parse_address(address_text)
        except ValueError as exc:
            return Refused(f"Ray address: {exc}")
    if suite_tasks:
        if not cells:
            return Refused("Nothing missing for the ticked models in this selection.")
        run = list(dict.fromkeys(m for m, _, _ in cells))
        tasks = list(dict.fromkeys(t for _, t, _ in cells))
        present = {r for _, _, r in cells}
        regimes = [r for r in REGIMES if r in present]
        if set(tasks) == set(suite_tasks):
            tasks = []          # the whole suite: no need to list 100 ids
    else:
        run, tasks, regimes = list(models), [], list(regimes)
    trust = Trust.of(run, assessed, choices.trust_remote_code)
    if trust.waits:
        return Refused(trust.question)
    device = choices.device if choices.device != "auto" else None
    cmd = fill_command(root, suite, [assessed[m].spec for m in run], tasks, regimes,
                       device=device, batch_size=batch, dtype=choices.dtype,
                       trust_remote_code=trust.granted, executor=choices.executor,
                       address=address)
    warning = next((assessed[m].warning for m in models if assessed[m].warning), "")
    return FillPlan(tuple(run), tuple(tasks), tuple(regimes), tuple(cmd), warning)
