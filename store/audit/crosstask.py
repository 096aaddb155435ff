"""Sequences shared between tasks: the distinct test sequences of one task that are in another
task's train split (a model probed on one task family seeing another's test data), by the hash
of the canonical form (`store.audit.sequences.keys(..., reverse=True)`: a sequence and its
reverse complement are one)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from store.audit.join import equal_pairs


def shared(train: Mapping[str, np.ndarray], test: Mapping[str, np.ndarray]) -> list[dict]:
    """[{task, other, shared}]: `shared` distinct test sequences of `task` are in the train
    split of `other` (task -> unique canonical keys of each split), for every such pair of
    different tasks, by task then other."""
    names = sorted(train)
    keys = np.concatenate([train[t] for t in names]) if names else np.empty(0, np.uint64)
    owner = np.repeat(np.arange(len(names)), [train[t].size for t in names])
    found = []
    for task in sorted(test):
        _, match = equal_pairs(keys, test[task])
        others, counts = np.unique(owner[match], return_counts=True)
        found += [{"task": task, "other": names[o], "shared": int(c)}
                  for o, c in zip(others.tolist(), counts.tolist(), strict=True)
                  if names[o] != task]
    return found
