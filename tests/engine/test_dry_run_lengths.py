"""`fill --dry-run` knows the sequence lengths: what a model is given of each sequence is the
run's context policy's (crop, `--context-length`, windows) and then the model's limit (its
documented `context`), so the nucleotides, tokens and time to embed grow with the tasks' lengths
up to that limit and with the windows, and each model's line names the longest sequence and the
tokens of a batch it implies. A hub model never fetched (params x tokens on a device profile):
nothing downloaded, nothing calibrated."""

from __future__ import annotations

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from huggingface_hub import constants  # noqa: E402

from engine.cli import main  # noqa: E402
from engine.encoders.context import pieces, window_starts  # noqa: E402
from store.vocab.context import parse_context  # noqa: E402
from tests.engine.conftest import write_task  # noqa: E402

TRAIN, TEST = 6, 4
ROWS = TRAIN + TEST
PARAMS = 1_000_000
LIMIT = 6_000            # the entry's documented context, in tokens


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """Two tasks: 2,000 and 8,000 nucleotides a sequence; a store whose models.toml holds a hub
    model never fetched, documented to 6,000 tokens."""
    root = tmp_path_factory.mktemp("long")
    folder = root / "suite"
    folder.mkdir()
    write_task(folder / "short_task.csv", TRAIN, TEST, 2, 1, length=2_000)
    write_task(folder / "long_task.csv", TRAIN, TEST, 2, 2, length=8_000)
    (folder / "manifest.csv").write_text(
        "task_id,category,label\nshort_task,Promoters,Short\nlong_task,Promoters,Long\n")
    store = root / "store"
    store.mkdir()
    (store / "models.toml").write_text(
        f'[[model]]\nmodel_id = "long-model"\nhub_id = "org/long-model"\nparams = {PARAMS}\n'
        f'context = {LIMIT}\nbatch_size = 2\narchitecture_family = "Transformer encoder"\n')
    return {"suite": folder, "store": store}


def plan_of(capsys, monkeypatch, tmp_path, suite, task, *extra) -> dict:
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-hf-cache"))
    capsys.readouterr()
    assert main(["fill", "--store", str(suite["store"]), "--suite", str(suite["suite"]),
                 "--tasks", task, "--models", "long-model", "--regimes", "full",
                 "--device-profile", "h100", "--dry-run", "--json", *extra]) == 0
    [model] = json.loads(capsys.readouterr().out)["models"]
    return model


def dry_run_text(capsys, monkeypatch, tmp_path, suite) -> str:
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-hf-cache"))
    capsys.readouterr()
    assert main(["fill", "--store", str(suite["store"]), "--suite", str(suite["suite"]),
                 "--tasks", "long_task", "--models", "long-model", "--regimes", "full",
                 "--device-profile", "h100", "--dry-run"]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_pieces_are_the_windows_the_encoder_tiles():
    lengths = np.array([500, 2_000, 2_001, 8_000, 8_000])
    windows = pieces(lengths, parse_context("windows:2000:1000"))
    assert windows.tolist() == [500, 2_000] + [2_000] * 2 + [2_000] * 14
    assert sum(len(window_starts(int(n), 2_000, 1_000)) for n in lengths) == windows.size
    assert pieces(lengths, parse_context(None, 1_000)).tolist() == [500] + [1_000] * 4


def test_the_estimate_grows_with_the_lengths_up_to_the_limit_and_with_windows(
        suite, capsys, monkeypatch, tmp_path):
    short = plan_of(capsys, monkeypatch, tmp_path, suite, "short_task")
    long = plan_of(capsys, monkeypatch, tmp_path, suite, "long_task")
    cut = plan_of(capsys, monkeypatch, tmp_path, suite, "long_task", "--context-length", "1000")
    windows = plan_of(capsys, monkeypatch, tmp_path, suite, "long_task", "--context",
                      "windows:2000:1000")
    # (pieces, nucleotides given, longest sequence, tokens of the longest piece, a batch of 2)
    shape = {name: (m["reach"]["pieces"], m["reach"]["nucleotides"], m["reach"]["longest"],
                    m["reach"]["longest_tokens"], m["reach"]["batch_tokens"])
             for name, m in (("short", short), ("long", long), ("cut", cut),
                             ("windows", windows))}
    assert shape == {"short": (ROWS, ROWS * 2_000, 2_000, 2_000, 4_000),
                     "long": (ROWS, ROWS * LIMIT, 8_000, LIMIT, 2 * LIMIT),   # cut at 6,000
                     "cut": (ROWS, ROWS * 1_000, 8_000, 1_000, 2_000),
                     "windows": (7 * ROWS, 7 * ROWS * 2_000, 8_000, 2_000, 4_000)}
    assert [m["tokens"] for m in (short, long, cut, windows)] == [
        ROWS * 2_000, ROWS * LIMIT, ROWS * 1_000, 7 * ROWS * 2_000]   # one a nucleotide
    seconds = [m["embedding"]["seconds"] for m in (cut, short, long, windows)]
    assert seconds == sorted(seconds) and len(set(seconds)) == 4
    assert seconds[2] / seconds[1] == pytest.approx(LIMIT / 2_000)
    assert not (tmp_path / "empty-hf-cache").exists()                     # nothing downloaded


def test_the_dry_run_line_names_the_longest_sequence_and_the_batch(suite, capsys, monkeypatch,
                                                                   tmp_path):
    out = dry_run_text(capsys, monkeypatch, tmp_path, suite)
    assert ("long-model lengths: longest sequence 8,000 nt, given as ~6,000 tokens (its limit "
            f"6,000 tokens); {ROWS} sequences, {ROWS * LIMIT:,} nt given; a batch of 2: "
            "~12,000 tokens") in out


def test_the_memory_estimate_knows_the_lengths(suite, capsys, monkeypatch, tmp_path):
    """Weights plus the activations of the largest batch: the entry's 2 rows of the longest
    piece (6,000 tokens at its limit, 1,000 at --context-length 1000), 16-bit on the profile's
    GPU, the width assumed (a hub model never fetched: 1,024, FFN 4 x 1,024), sdpa attention
    (no scores held): max(4H, 2H + 3F) = 14 H with H = rows x tokens x 1,024 x 2 bytes."""
    full = plan_of(capsys, monkeypatch, tmp_path, suite, "long_task")["memory"]
    cut = plan_of(capsys, monkeypatch, tmp_path, suite, "long_task", "--context-length",
                  "1000")["memory"]
    for memory, tokens in ((full, LIMIT), (cut, 1_000)):
        assert (memory["rows"], memory["tokens"]) == (2, tokens)
        assert memory["weights"] == 4 * PARAMS                   # fp32 weights (--dtype auto)
        assert memory["activations"] == 14 * 2 * tokens * 1_024 * 2
    out = dry_run_text(capsys, monkeypatch, tmp_path, suite)
    assert ("long-model memory: ≈332 MiB: 4 MiB weights (fp32) + 328 MiB activations of a "
            "batch of 2 x 6,000 tokens (the batch size told; sdpa/flash attention") in out
    assert "the h100's memory is not known here: not compared" in out
