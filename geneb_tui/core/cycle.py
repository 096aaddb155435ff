"""The one rule of the keys that cycle through choices (a regime, a metric, a category, a
device...): the next value after `current`, or the first when `current` is not one of them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")


def cycled(values: Iterable[T], current: object, step: int = 1) -> T:
    """The value `step` places after `current` in `values` (around the end; -1: the one
    before), or the first value when `current` is not among them."""
    values = list(values)
    if current not in values:
        return values[0]
    return values[(values.index(current) + step) % len(values)]
