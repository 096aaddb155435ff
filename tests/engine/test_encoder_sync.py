"""The encoder's loop never waits for the device per batch, and computes the same numbers.

Every call that makes the host wait for a device (a tensor read as a number, a bool or a list,
a copy to the host, a CUDA synchronisation) is counted with torch patched: at most one per
window (the window's pooled rows, read by the writer thread), never one per batch. The
embeddings equal, to the bit, a reference loop over the same batches collated the way the
encoder collated them before (row by row, the 2D mask or the key mask built on the host); the
per-device choices (the padded batch's mask form, the token budget) differ for a CUDA device.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import threading  # noqa: E402
from collections import Counter  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from packaging.version import Version  # noqa: E402

from engine.encoders import batching  # noqa: E402
from engine.encoders.batching import WRITER_NAME, default_batch_tokens, mask_form  # noqa: E402
from engine.encoders.hf import HFEncoder  # noqa: E402
from engine.encoders.streaming import ArraySink  # noqa: E402
from tests.engine.tiny_models import build, random_dna  # noqa: E402

SEQS = random_dna(60, 10, 110, seed=7)
WINDOW = 20                      # three windows of 20 rows
TF5 = Version(transformers.__version__) >= Version("5")
SYNCING = {torch.Tensor: ("item", "__bool__", "tolist", "cpu", "numpy", "__int__", "__float__",
                          "__index__"),
           torch.cuda: ("synchronize",), torch.cuda.Event: ("synchronize",)}


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return build("bert", tmp_path_factory.mktemp("sync") / "bert")


@pytest.fixture
def windows(monkeypatch):
    monkeypatch.setattr("engine.encoders.streaming.WINDOW_ROWS", WINDOW)


@pytest.fixture
def syncs(monkeypatch) -> Counter:
    """Calls of every synchronising function while the test runs, by name."""
    counts: Counter = Counter()
    for owner, names in SYNCING.items():
        for name in names:
            original = getattr(owner, name)

            def counted(*args, _original=original, _name=name, **kwargs):
                counts[_name] += 1
                return _original(*args, **kwargs)

            monkeypatch.setattr(owner, name, counted)
    return counts


def reference(enc: HFEncoder, sequences: list[str]) -> np.ndarray:
    """The encoder's batches (the same windows, the same plan) collated as before this change:
    row by row, the mask 2D or as keys built on the host, pooled rows copied back per batch."""
    out = np.zeros((len(sequences), enc.model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for a in range(0, len(sequences), WINDOW):
            ids, _ = enc.tokenize(sequences[a:a + WINDOW])
            lengths = np.array([len(x) for x in ids])
            for rows in enc.plan_batches(lengths):
                width = int(lengths[rows].max())
                input_ids = torch.full((rows.size, width), enc.pad_id, dtype=torch.long)
                mask = torch.zeros((rows.size, width), dtype=torch.long)
                for r, i in enumerate(rows):
                    input_ids[r, :len(ids[i])] = torch.as_tensor(ids[i])
                    mask[r, :len(ids[i])] = 1
                keys = enc.key_mask and lengths[rows].min() < width
                with enc.autocast():
                    hidden = enc.model(input_ids=input_ids, attention_mask=(
                        mask.bool()[:, None, None, :] if keys else mask)).last_hidden_state
                keep = mask.bool().unsqueeze(-1)
                summed = torch.where(keep, hidden.float(), torch.zeros(())).sum(dim=1)
                out[a + rows] = (summed / keep.sum(dim=1).clamp(min=1)).numpy()
    return out


@pytest.mark.skipif(not TF5, reason="transformers 4's BERT refuses a 4D mask: it checks the "
                    "2D one on the host for every padded batch")
@pytest.mark.parametrize("sequences", [SEQS, ["ACGT" * 10] * 60],
                         ids=["padded batches", "batches without padding"])
def test_at_most_one_synchronising_call_per_window(bert, windows, syncs, sequences):
    enc = HFEncoder(str(bert), device="cpu", max_batch_tokens=300)
    assert enc.key_mask
    syncs.clear()
    stats = enc.encode_into(sequences, ArraySink(len(sequences)))
    windows_run = len(sequences) // WINDOW
    assert stats["n_batches"] >= 3 * windows_run            # several batches per window
    assert sum(syncs.values()) <= windows_run, syncs
    assert syncs == Counter(numpy=windows_run)               # the writer's read of each window


def test_embeddings_equal_the_loop_they_replace(bert, windows):
    for budget in (300, None):              # padded batches, and one batch per window
        enc = HFEncoder(str(bert), device="cpu", max_batch_tokens=budget)
        np.testing.assert_array_equal(enc.encode(SEQS), reference(enc, SEQS))


def test_the_full_mask_gives_the_2d_masks_numbers(bert, windows, monkeypatch):
    """The form CUDA runs, run on the CPU: the n x 1 x L x L mask transformers builds itself."""
    plain = HFEncoder(str(bert), device="cpu", max_batch_tokens=300)
    plain.key_mask = False
    monkeypatch.setitem(batching.MASK_FORMS, "cpu", "full")
    full = HFEncoder(str(bert), device="cpu", max_batch_tokens=300)
    assert full.key_mask == TF5 and full.padded_mask == ("full" if TF5 else "2d")
    np.testing.assert_array_equal(full.encode(SEQS), plain.encode(SEQS))


def test_the_device_type_decides_the_mask_form_and_the_budget(bert):
    enc = HFEncoder(str(bert), device="cpu")
    ids, _ = enc.tokenize(SEQS[:3])
    enc.key_mask = True
    assert enc.collate(ids)["mask"] == "keys"
    enc.device = torch.device("cuda")               # faked: only the choices are asked
    assert enc.collate(ids)["mask"] == "full" and enc.padded_mask == "full"
    assert enc.collate([ids[0]] * 2)["mask"] == "none"
    assert (mask_form(torch.device("cpu")), mask_form(torch.device("cuda"))) == ("keys", "full")
    assert default_batch_tokens(torch.device("cuda")) > default_batch_tokens(torch.device("cpu"))


def test_a_write_error_reaches_the_caller_and_leaves_no_thread(bert, windows):
    enc = HFEncoder(str(bert), device="cpu", max_batch_tokens=300)

    class Failing(ArraySink):
        def write(self, rows, block):
            raise OSError("disk full")

    enc.flush_rows = 1
    with pytest.raises(OSError, match="^disk full$"):
        enc.encode_into(SEQS, Failing(len(SEQS)))
    assert not [t for t in threading.enumerate() if t.name == WRITER_NAME]


def test_out_of_memory_back_off_keeps_every_row(bert, windows):
    enc = HFEncoder(str(bert), device="cpu", max_batch_tokens=600)
    expected = enc.encode(SEQS)
    forward = enc.forward

    def small_only(batch):
        if batch["input_ids"].numel() > 300:
            raise torch.OutOfMemoryError("simulated")
        return forward(batch)

    enc.forward = small_only
    sink = ArraySink(len(SEQS))
    stats = enc.encode_into(SEQS, sink)
    assert stats["n_oom_retries"] >= 1 and sink.done.all()
    np.testing.assert_allclose(sink.array, expected, atol=1e-6)
