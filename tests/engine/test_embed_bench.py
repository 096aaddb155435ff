"""bench/embed.py's padding ceiling: what removing the naive loop's padding can gain at most."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "embed.py"


@pytest.fixture(scope="module")
def embed_bench():
    spec = importlib.util.spec_from_file_location("embed_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_padding_ceiling_counts_padded_tokens_and_attention_pairs(embed_bench) -> None:
    # batches of 2: (1, 2) padded to 2, (3, 4) padded to 4, (5) alone
    tokens, pairs = embed_bench.padding_ceiling([1, 2, 3, 4, 5], batch=2)
    assert tokens == pytest.approx((2 * 2 + 2 * 4 + 5) / 15)
    assert pairs == pytest.approx((2 * 4 + 2 * 16 + 25) / 55)
    assert embed_bench.padding_ceiling([7, 7, 7], batch=8) == (1.0, 1.0)
