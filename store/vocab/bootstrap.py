"""The task bootstrap's settings, shared by `geneb-engine report` and the dashboard (standard
library only: the command line's defaults and the dashboard's first frame read them before
numpy is loaded). The bootstrap itself is `store.analyses.uncertainty`."""

from __future__ import annotations

RESAMPLES = 10_000    # resamples of `report` (its --resamples default) and the dashboard's views
SEED = 0              # their seed (`numpy.random.default_rng`; report --bootstrap-seed)
LEVEL = 0.95          # their intervals' level (report --level)
MIN_SCOPE_TASKS = 2   # a scope of fewer tasks has no task-level interval
ONE_TASK_NOTE = ("a scope of one task has no interval: the bootstrap resamples tasks, and it "
                 "would draw that one task every time")
SITE_RESAMPLES = 1_000   # `geneb-engine site`'s default (--resamples): 9 bootstraps (3 metrics x
#                         3 regimes) in a few seconds; `report --resamples 1000` gives its values
