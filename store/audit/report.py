"""One task's audit as plain data (`TaskAudit`): what `store.tables.audit` stores per data
hash, built by `audit_task` from the task's sequences and labels and the shortcut probes' test
MCCs (fitted by the engine). The verdict is not stored: `store.audit.verdict` derives it when
read, with the best model's MCC of the moment."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from store.audit.duplicates import Copies, copies
from store.audit.near import NearDuplicates, near_duplicates
from store.audit.sequences import keys

# What the stored measures mean (k, sketch, features, forms): a stored audit of another
# version is measured again.
AUDIT_VERSION = 1


@dataclass(frozen=True)
class TaskAudit:
    task_id: str
    data_hash: str
    n_train: int
    n_test: int
    classes: dict[str, dict[str, int]]      # split -> label -> rows
    exact: Copies
    revcomp: Copies                          # found by the canonical form beyond `exact`
    near: NearDuplicates                     # beyond the exact and reverse-complement copies
    shortcuts: dict[str, float] = field(default_factory=dict)   # feature -> probe test MCC
    version: int = AUDIT_VERSION

    @property
    def leaked_test_rows(self) -> int:
        """Test rows with a copy in train: exact, reverse complement or near."""
        return self.exact.across + self.revcomp.across + self.near.test_rows

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TaskAudit:
        raw = json.loads(text)
        return cls(**{**raw, "exact": Copies(**raw["exact"]), "revcomp": Copies(**raw["revcomp"]),
                      "near": NearDuplicates(**raw["near"])})


def class_counts(labels: np.ndarray) -> dict[str, int]:
    values, counts = np.unique(labels, return_counts=True)
    return {str(v): int(c) for v, c in zip(values.tolist(), counts.tolist(), strict=True)}


def audit_task(task_id: str, data_hash: str, train: Sequence[str], y_train: np.ndarray,
               test: Sequence[str], y_test: np.ndarray,
               shortcuts: Mapping[str, float]) -> tuple[TaskAudit, np.ndarray, np.ndarray]:
    """The measures of one task (rows in file order), and the distinct canonical keys of its
    train and test splits (what `store.audit.crosstask.shared` compares across tasks)."""
    canonical_train, canonical_test = keys(train, reverse=True), keys(test, reverse=True)
    exact, revcomp = copies((keys(train), keys(test)), (canonical_train, canonical_test),
                            y_train, y_test)
    copied = np.isin(canonical_test, canonical_train)
    audit = TaskAudit(task_id, data_hash, len(train), len(test),
                      {"train": class_counts(y_train), "test": class_counts(y_test)},
                      exact, revcomp, near_duplicates(train, test, skip=copied),
                      dict(shortcuts))
    return audit, np.unique(canonical_train), np.unique(canonical_test)
