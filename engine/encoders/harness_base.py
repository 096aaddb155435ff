"""The official harness's extractor base class, `BaseEmbeddingExtractor` (its
harness/extractors/base.py), so that extractor files written for it run unmodified.

Such a file imports it as the harness lets it, `from .base import BaseEmbeddingExtractor` or
`from extractors.base import BaseEmbeddingExtractor`: `official_extractor.load_class` makes this
module the `base` of the package the file is loaded in. The interface is the harness's use of
it (harness/run_GENEB.py): the class is built with `name_model=` and `device=` keywords, and
`extract_embeddings(sequences, batch_size)` returns an (n_sequences, embedding_dim) array, one
row per sequence, in order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


class BaseEmbeddingExtractor(ABC):
    """One model for the harness: a subclass loads it in `__init__` (usually its own, keeping
    `name_model` and `device`) and implements `extract_embeddings`."""

    def __init__(self, name_model: str, device: str = "cpu"):
        self.name_model = name_model
        self.device = device

    @abstractmethod
    def extract_embeddings(self, sequences: list[str], batch_size: int = 8) -> np.ndarray:
        """The embeddings of `sequences`, shape (len(sequences), embedding_dim), in order."""
