"""Embedding throughput without changing a number: token-budget batches, background preparation.

The encoder's batches stay within their padded-token budget and keep the input order; a run
prepared in background threads gives the same rows as one prepared inline; a tokenizer error or
an interrupt reaches the caller as raised and leaves no preparing thread behind. (The equality
with the official naive loop and the recorded settings are in test_hf_encoder.py, which also
runs under transformers 4.)
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import threading  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from engine.encoders import batching  # noqa: E402
from engine.encoders.batching import (  # noqa: E402
    THREAD_NAME,
    HostCopy,
    Prefetcher,
    default_batch_tokens,
    plan_batches,
)
from engine.encoders.hf import HFEncoder  # noqa: E402
from engine.encoders.streaming import ArraySink  # noqa: E402
from store.vocab.errors import GenebError  # noqa: E402
from tests.engine.tiny_models import build, random_dna  # noqa: E402

SEQS = random_dna(23, 10, 110, seed=11)


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return build("bert", tmp_path_factory.mktemp("throughput") / "bert")


@pytest.fixture
def small_windows(monkeypatch):
    """Windows of 5 rows, so 23 sequences make five of them."""
    monkeypatch.setattr("engine.encoders.streaming.WINDOW_ROWS", 5)


class Shapes(torch.nn.Module):
    """Wraps a model: records each batch's (rows, padded width); raises `error` on call
    `fail_at`."""

    def __init__(self, inner, fail_at: int | None = None,
                 error: type[BaseException] = RuntimeError):
        super().__init__()
        self.inner, self.fail_at, self.error = inner, fail_at, error
        self.shapes: list[tuple[int, int]] = []

    def forward(self, **kwargs):
        self.shapes.append(tuple(kwargs["input_ids"].shape))
        if self.fail_at is not None and len(self.shapes) == self.fail_at:
            raise self.error("simulated")
        return self.inner(**kwargs)


def preparing_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD_NAME]


def test_plan_batches_fill_the_token_budget_longest_first():
    lengths = np.array([10, 50, 30, 20, 50, 5, 5, 40, 120])
    batches = plan_batches(lengths, 100, exact_length=False, max_batch_tokens=100)
    assert [b.tolist() for b in batches] == [[8], [1, 4], [7, 2], [3, 0, 5, 6]]
    assert sorted(np.concatenate(batches).tolist()) == list(range(lengths.size))
    # the row cap still holds; a sequence longer than the budget runs alone
    assert [b.size for b in plan_batches(lengths, 2, exact_length=False,
                                         max_batch_tokens=1_000)] == [2, 2, 2, 2, 1]


def test_the_default_budget_is_per_device():
    assert default_batch_tokens(torch.device("cpu")) == batching.BATCH_TOKENS["cpu"]
    assert default_batch_tokens(torch.device("cuda")) == batching.BATCH_TOKENS["cuda"]
    assert default_batch_tokens(torch.device("meta")) is None


def test_token_budget_batches_respect_the_budget_and_keep_input_order(bert, small_windows):
    enc = HFEncoder(str(bert), device="cpu", max_batch_tokens=120)
    alone = np.stack([enc.encode([s])[0] for s in SEQS])
    enc.model = Shapes(enc.model)
    got = enc.encode(SEQS)
    assert all(rows * width <= 120 or rows == 1 for rows, width in enc.model.shapes)
    assert sum(rows for rows, _ in enc.model.shapes) == len(SEQS)
    assert max(rows for rows, _ in enc.model.shapes) > 1
    np.testing.assert_allclose(got, alone, atol=1e-5)


def test_background_preparation_gives_the_rows_of_inline_preparation(bert, small_windows):
    enc = HFEncoder(str(bert), device="cpu", max_batch_tokens=200)
    background = enc.encode(SEQS)
    enc.prefetch = False
    inline = enc.encode(SEQS)
    np.testing.assert_array_equal(background, inline)     # the same batches, the same sums
    assert not preparing_threads()


def test_a_tokenizer_error_reaches_the_caller_and_leaves_no_thread(bert, small_windows):
    enc = HFEncoder(str(bert), device="cpu", max_batch_tokens=200)
    tokenize, calls = enc.tokenize, []

    def failing(sequences):
        calls.append(len(sequences))
        if len(calls) == 3:
            raise GenebError("task t: row 11: the tokenizer rejected it")
        return tokenize(sequences)

    enc.tokenize = failing
    sink = ArraySink(len(SEQS))
    with pytest.raises(GenebError, match=r"^task t: row 11: the tokenizer rejected it$"):
        enc.encode_into(SEQS, sink)
    assert not preparing_threads()
    assert sink.done[:10].all() and not sink.done[10:].any()   # the first two windows written


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError])
def test_an_interrupt_or_a_model_error_leaves_no_thread(bert, small_windows, error):
    enc = HFEncoder(str(bert), device="cpu", batch_size=2)
    enc.model = Shapes(enc.model, fail_at=3, error=error)
    sink = ArraySink(len(SEQS))
    with pytest.raises(error, match="simulated"):
        enc.encode_into(SEQS, sink)
    assert not preparing_threads()
    assert sink.done.sum() == 4                     # the two batches that finished


def test_a_resumed_split_still_counts_every_truncation(bert, small_windows):
    enc = HFEncoder(str(bert), device="cpu", max_tokens=40)
    expected = enc.encode_into(SEQS, ArraySink(len(SEQS)))["n_truncated"]
    assert expected == sum(len(s) + 2 > 40 for s in SEQS) > 0
    sink = ArraySink(len(SEQS))
    sink.done[::2] = True                          # 12 of 23 rows written by an earlier run
    stats = enc.encode_into(SEQS, sink)
    assert stats["n_truncated"] == expected and stats["n_encoded"] == 11


def test_the_prefetcher_reraises_as_raised_and_stops_when_left_early():
    def failing():
        yield 1
        raise ValueError("bad row 7")

    with Prefetcher(failing) as items, pytest.raises(ValueError, match="^bad row 7$"):
        list(items)
    produced = []

    def endless():
        for i in range(10**9):
            produced.append(i)
            yield i

    with Prefetcher(endless) as items:
        for i in items:
            if i == 3:
                break
    assert not preparing_threads() and len(produced) < 10


def test_the_host_copy_on_the_cpu_is_the_tensor_itself():
    pooled = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    np.testing.assert_array_equal(HostCopy(pooled).array(), pooled.numpy())


def test_fill_options_reach_the_encoder(bert) -> None:
    """`fill --max-batch-tokens N --compile` as EncoderOptions: the budget the batches keep and
    the compiled model (the default: the device's budget, no compile)."""
    from engine.encoders import EncoderOptions, build_encoder
    from store.catalog import ModelMeta

    meta = ModelMeta("tiny", "tiny", 1, "T-enc", "Transformer encoder", "char", "BPE", "human",
                     path=str(bert))
    default = build_encoder(meta, EncoderOptions(device="cpu"))
    assert (default.max_batch_tokens, default.compiled) == (default_batch_tokens(
        torch.device("cpu")), False)
    chosen = build_encoder(meta, EncoderOptions(device="cpu", max_batch_tokens=256,
                                                compile=True))
    assert chosen.max_batch_tokens == 256 and chosen.compiled
    assert isinstance(chosen.model, torch._dynamo.eval_frame.OptimizedModule)
