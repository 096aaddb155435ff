"""The time a `fill` has left (its `eta_s`): measured throughput applied to the work left.

The work of a planned (model, task) pair is what `fill --dry-run` counts (`engine.dry_run.Counts`,
filled as `engine.fill.validate_tasks` reads each task): the nucleotides of its two splits to
embed, and the training examples its cells fit (`Counts.examples`, per protocol and regime).
Its seconds:

- embedding, until the pair's `embedded` event: the runs table's throughput of the model on the
  device and at the precision it runs at where the table has one (`engine.dry_run.from_runs`,
  the dry run's own figure: tokens over tokens per second); else the seconds per nucleotide of
  the pairs this run has embedded (the `embedded` events' own seconds: that model's, else every
  model's);
- probes, until the pair's last `cell` event: where the store's local rows measured every
  (protocol, regime) the pair fits (`engine.dry_run.stored_fit_rate`), their seconds per
  example over the probe workers, as the dry run adds them; else the run's own rate: the time
  since its first embedding began less its embedding seconds, over the examples of the pairs it
  finished (what probing added to the wall time, parallel workers included).

The ETA is the sum over the pairs left, None until every part of it can be told (no runs-table
figure and no pair embedded yet, or no fit rate and no pair finished). Load times count in the
run's own probe rate only after the first embedding (a first model's load and warm-up do not
inflate every later estimate). With the Ray executor pairs embed side by side on several GPUs,
which this sum does not divide: there it errs long.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.data import TaskData
from engine.dry_run import Counts, Measured, from_runs, stored_fit_rate
from engine.fill import FillOptions
from engine.planner import Plan
from store.paths import StorePaths

CLOCK: Callable[[], float] = time.perf_counter      # what `EtaWatch` reads the time from


@dataclass
class PairLoad:
    """One planned pair's work and what the store says it costs."""

    model: str
    nucleotides: int
    sequences: int
    examples: int                     # training examples its cells fit, every fit counted
    cells: int
    embed_prior_s: float | None       # the runs table's seconds for its embedding
    probe_prior_s: float | None       # the store's fit seconds over the probe workers
    embedded: bool = False
    cells_done: int = 0


@dataclass
class Eta:
    """The ETA of one run: `observe` each fill event, read `seconds()`; see the module."""

    pairs: dict[tuple[str, str], PairLoad]
    clock: Callable[[], float] = time.perf_counter
    embed_seconds: dict[str, float] = field(default_factory=dict)       # per model, this run
    embed_nucleotides: dict[str, float] = field(default_factory=dict)
    started: float | None = None      # when the first embedding began
    probed_examples: int = 0

    def observe(self, event: dict) -> None:
        key = (event.get("model"), event.get("task"))
        pair = self.pairs.get(key)
        if pair is None:
            return
        if event["event"] == "embedded":
            now, seconds = self.clock(), float(event["seconds"])
            if self.started is None:
                self.started = now - seconds
            pair.embedded = True
            share = event["sequences"] / pair.sequences if pair.sequences else 0.0
            self.embed_seconds[pair.model] = self.embed_seconds.get(pair.model, 0.0) + seconds
            self.embed_nucleotides[pair.model] = (self.embed_nucleotides.get(pair.model, 0.0)
                                                  + pair.nucleotides * share)
        elif event["event"] == "cell":
            pair.cells_done += 1
            if pair.cells_done == pair.cells:
                pair.embedded = True                    # reused, or done by another process
                self.probed_examples += pair.examples

    def seconds(self) -> float | None:
        """The seconds the run has left, None where they cannot be told yet."""
        left = [p for p in self.pairs.values() if p.cells_done < p.cells]
        total = 0.0
        for p in left:
            if not p.embedded:
                rate = self._embed_rate(p.model)
                embed = p.embed_prior_s if p.embed_prior_s is not None else (
                    None if rate is None else p.nucleotides * rate)
                if embed is None:
                    return None
                total += embed
            if p.probe_prior_s is not None:
                total += p.probe_prior_s
            elif (rate := self._probe_rate()) is not None:
                total += p.examples * rate
            else:
                return None
        return total

    def _embed_rate(self, model: str) -> float | None:
        """Seconds per nucleotide this run measured: the model's, else every model's."""
        for seconds, nucleotides in ((self.embed_seconds.get(model, 0.0),
                                      self.embed_nucleotides.get(model, 0.0)),
                                     (sum(self.embed_seconds.values()),
                                      sum(self.embed_nucleotides.values()))):
            if nucleotides > 0:
                return seconds / nucleotides
        return None

    def _probe_rate(self) -> float | None:
        """Wall seconds per training example that probing added in this run so far."""
        if not self.probed_examples or self.started is None:
            return None
        probing = self.clock() - self.started - sum(self.embed_seconds.values())
        return max(probing, 0.0) / self.probed_examples


def eta_of(paths: StorePaths, the_plan: Plan, counts: Counts, hashes: dict[str, str],
           options: FillOptions, clock: Callable[[], float] = time.perf_counter) -> Eta:
    """The ETA of a run of `the_plan` (its tasks seen by `counts`), its priors from the store."""
    measured = Measured(paths, counts, hashes)
    fit_rates: dict[tuple[str, str, str], tuple[float, str] | None] = {}
    pairs = {}
    for w in the_plan.work:
        model, task = w.model.model_id, w.task.task_id
        sizes = [counts.splits[task, name] for name in ("train", "test")]
        sequences, nucleotides = sum(s[0] for s in sizes), sum(s[1] for s in sizes)
        known = from_runs(w.model, options, sequences, nucleotides, measured)
        probe: float | None = 0.0
        examples = 0
        for protocol, regimes in w.todo:
            for regime in regimes:
                n = counts.examples(task, protocol, regime)
                examples += n
                if (model, protocol.hash, regime) not in fit_rates:
                    fit_rates[model, protocol.hash, regime] = stored_fit_rate(
                        measured, model, protocol, regime)
                rate = fit_rates[model, protocol.hash, regime]
                probe = None if rate is None or probe is None else probe + n * rate[0]
        pairs[model, task] = PairLoad(
            model, nucleotides, sequences, examples, w.cells,
            None if known is None else known[0].seconds,
            None if probe is None else probe / max(options.jobs or 1, 1))
    return Eta(pairs, clock)


class EtaWatch:
    """What `engine.fill.run_fill` shows the ETA (its `watch`): each task as it is read, then
    the plan; `eta` is set from then on."""

    def __init__(self, clock: Callable[[], float] | None = None):
        self.counts, self.clock = Counts(), clock or CLOCK
        self.eta: Eta | None = None

    def see(self, data: TaskData) -> None:
        self.counts.see(data)

    def planned(self, paths: StorePaths, the_plan: Plan, hashes: dict[str, str],
                options: FillOptions) -> None:
        self.eta = eta_of(paths, the_plan, self.counts, hashes, options, self.clock)
