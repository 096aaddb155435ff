"""A task's verdict, by rules written once here with their thresholds.

- leaky: at least `LEAK_SHARE` of the test rows have a copy in train (exact, reverse
  complement, or near: k-mer Jaccard >= 0.9);
- noisy labels suspected: at least `CONFLICT_SHARE` of all rows are copies (exact or reverse
  complement) whose labels disagree;
- shortcut: a shortcut probe (length, GC or composition; the geneb-v1 probe) reaches a test
  MCC of `SHORTCUT_MCC`, or, where the store has results on the task's data, at least
  `SHORTCUT_SHARE` of the best model's MCC while being at least `SHORTCUT_FLOOR` (a probe
  near chance on a task near chance says nothing).

A task can have several flags; its verdict is the first of them in that order, else clean.
"""

from __future__ import annotations

from dataclasses import dataclass

from store.audit.report import TaskAudit

LEAK_SHARE = 0.01
CONFLICT_SHARE = 0.005
SHORTCUT_MCC = 0.5
SHORTCUT_SHARE = 0.8
SHORTCUT_FLOOR = 0.2

CLEAN = "clean"
LEAKY = "leaky"
NOISY = "noisy labels suspected"
SHORTCUT = "shortcut"
VERDICTS: tuple[str, ...] = (CLEAN, LEAKY, NOISY, SHORTCUT)


@dataclass(frozen=True)
class Health:
    verdict: str
    flags: tuple[str, ...]
    leak_share: float               # test rows with a copy in train / test rows
    conflict_share: float           # rows whose copies disagree on the label / all rows
    shortcut: str | None            # the feature whose probe scored highest
    shortcut_mcc: float | None
    best_model_mcc: float | None    # the best model's MCC on this data, where results exist
    shortcut_share: float | None    # shortcut_mcc / best_model_mcc, where that is positive

    @property
    def flagged(self) -> bool:
        return bool(self.flags)


def health(audit: TaskAudit, best_model_mcc: float | None = None) -> Health:
    """The verdict of `audit`, given the best model's MCC on its data (None: no results)."""
    leak = audit.leaked_test_rows / audit.n_test
    conflicts = (audit.exact.conflicting + audit.revcomp.conflicting) / (audit.n_train
                                                                         + audit.n_test)
    feature = max(audit.shortcuts, key=audit.shortcuts.__getitem__, default=None)
    mcc = audit.shortcuts[feature] if feature is not None else None
    share = (mcc / best_model_mcc if mcc is not None and best_model_mcc is not None
             and best_model_mcc > 0 else None)
    shortcut = mcc is not None and (mcc >= SHORTCUT_MCC or (
        share is not None and share >= SHORTCUT_SHARE and mcc >= SHORTCUT_FLOOR))
    flags = tuple(name for name, on in ((LEAKY, leak >= LEAK_SHARE),
                                        (NOISY, conflicts >= CONFLICT_SHARE),
                                        (SHORTCUT, shortcut)) if on)
    return Health(flags[0] if flags else CLEAN, flags, leak, conflicts, feature, mcc,
                  best_model_mcc, share)
