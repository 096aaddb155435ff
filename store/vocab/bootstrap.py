"""The task bootstrap's one-task rule (standard library only). The bootstrap itself is
`store.analyses.uncertainty`; its presets (resamples, seed, level) `store.analyses.presets`."""

from __future__ import annotations

MIN_SCOPE_TASKS = 2   # a scope of fewer tasks has no task-level interval
ONE_TASK_NOTE = ("a scope of one task has no interval: the bootstrap resamples tasks, and it "
                 "would draw that one task every time")
