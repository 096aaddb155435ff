"""`fill --context` / `--context-length`: what of each sequence a model sees, part of the
embeddings' identity (`store.vocab.context`, `engine.encoders.context`). The default is the
encoder as it always was; windows equal a plain loop over windows; crops cut the told side;
a run at another policy computes its own cells and every reader shows them apart."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import json  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from engine.encoders import EncoderOptions, build_encoder, preflight  # noqa: E402
from engine.encoders.context import ContextEncoder, window_starts  # noqa: E402
from engine.registry import resolve_model  # noqa: E402
from store.db import query  # noqa: E402
from store.paths import StorePaths  # noqa: E402
from store.vocab.context import ContextPolicy, parse_context  # noqa: E402
from store.vocab.errors import GenebError  # noqa: E402
from tests.engine.conftest import write_task  # noqa: E402
from tests.engine.in_process import computed, outputs, refused  # noqa: E402
from tests.engine.tiny_models import catalogued_bert, one_task_fill, random_dna  # noqa: E402

SEQS = random_dna(7, 5, 90, seed=11)


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return catalogued_bert(tmp_path_factory.mktemp("context"), max_len=64)


def encoder(bert, context: ContextPolicy | None = None, batch_size: int | None = None):
    return build_encoder(resolve_model("tiny-bert", bert["catalog"]),
                         EncoderOptions(device="cpu", context=context or ContextPolicy(),
                                        batch_size=batch_size))


def test_the_default_is_the_encoder_as_it_was(bert):
    plain = encoder(bert)
    assert not isinstance(plain, ContextEncoder) and "context" not in plain.settings
    same_side = encoder(bert, parse_context("crop:left"))     # the generic encoder's own side
    assert not isinstance(same_side, ContextEncoder)
    assert same_side.settings == plain.settings


def test_windows_equal_a_plain_loop_over_windows(bert):
    """Each sequence tiled with windows of 16 every 8 (the last ending at its end), each window
    embedded alone, their rows averaged: what the windows policy streams in groups of 3
    windows (groups that cross sequences)."""
    windowed = encoder(bert, parse_context("windows:16:8"), batch_size=3)
    assert windowed.settings["context"] == "windows-16-8" and windowed.group == 3
    plain = encoder(bert)
    expected = np.stack([
        np.mean([plain.encode([s[a:a + 16]])[0] for a in window_starts(len(s), 16, 8)], axis=0)
        for s in SEQS])
    got = windowed.encode(SEQS)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert not np.allclose(got, plain.encode(SEQS), atol=1e-3)   # windows changed something


@pytest.mark.parametrize(("side", "cut"), [("left", lambda s: s[:20]),
                                           ("right", lambda s: s[-20:]),
                                           ("centre", lambda s: s[(len(s) - 20) // 2:][:20])])
def test_a_context_length_cuts_the_told_side(bert, side, cut):
    cropped = encoder(bert, parse_context(f"crop:{side}", 20))
    assert cropped.settings["context"] == f"crop-{side}-20"
    np.testing.assert_allclose(cropped.encode(SEQS),
                               encoder(bert).encode([cut(s) for s in SEQS]), atol=1e-6)


def test_bad_policies_are_one_line_each(bert):
    for text, length, says in [("windows:0:8", None, "at least 1"),
                               ("windows:16", None, "a window and a stride"),
                               ("windows:8:16", None, "leaves nucleotides no window sees"),
                               ("windows:16:8", 100, "leave out --context-length"),
                               ("crop:middle", None, "left, centre, right"),
                               ("slide", None, "unknown policy 'slide'")]:
        with pytest.raises(GenebError, match=says):
            parse_context(text, length)
    meta = resolve_model("tiny-bert", bert["catalog"])
    with pytest.raises(GenebError, match="crop:right needs --context-length N"):
        preflight(meta, EncoderOptions(device="cpu", context=parse_context("crop:right")),
                  device=False)


def test_a_run_at_another_context_is_computed_and_shown_apart(bert, tmp_path, capsys):
    """`fill` then `fill --context windows:16:8` computes the second (before the policy was
    part of the variant: nothing to compute), keeps both embeddings and rows (the default's
    folders and attributes unchanged) and readers show them apart; a bad policy leaves the
    store as it was."""
    argv = one_task_fill(tmp_path, bert["folder"])
    store, suite = tmp_path / "store", tmp_path / "suite"

    def fill(*more: str) -> int:
        return computed(capsys, *argv, *more)

    assert fill() == 1
    split = store / "embeddings.zarr" / "tiny-bert" / "one_task"
    attrs = json.loads((split / "train" / "zarr.json").read_text())["attributes"]
    assert "context" not in attrs["encoder"] and "context_policy" not in attrs
    assert fill("--context", "windows:16:8") == 1
    assert fill("--context", "windows:16:8") == 0
    assert fill("--context", "crop") == 0
    assert sorted(p.name for p in split.iterdir() if p.is_dir()) == [
        "test", "test@windows-16-8", "train", "train@windows-16-8"]
    rows = query(StorePaths(store), "SELECT context_policy, count(*) AS n FROM results_all "
                                    "GROUP BY ALL ORDER BY ALL NULLS FIRST")
    assert rows.rows() == [(None, 5), ("windows-16-8", 5)]
    rc, out, err = outputs(capsys, "report", "--store", str(store), "--suite", str(suite),
                           "--resamples", "0", "--json")
    assert sorted(a["model"] for a in json.loads(out)["aggregates"]) == [
        "tiny-bert", "tiny-bert [crop]"]
    refused(capsys, store, *argv, "--context", "windows:16", names=("--context windows:16",))
    refused(capsys, store, *argv, "--context", "crop:right",
            names=("tiny-bert", "--context-length"))


def test_a_context_sweep_fills_each_length_and_reports_score_against_context(tmp_path, capsys):
    """`fill --context-lengths 10 20` computes each length's cells (one run each); `report`
    shows the model's three contexts in order of length, the default (its own limit) last,
    each with the score and task-bootstrap interval of its entry; a store without two contexts
    of a model has no such section."""
    suite = tmp_path / "suite"
    suite.mkdir()
    for i in range(3):
        write_task(suite / f"task_{i}.csv", 30, 12, 2, i, length=40)
    (suite / "manifest.csv").write_text(      # one category of three tasks: macro has intervals
        "task_id,category\n" + "".join(f"task_{i},Promoters\n" for i in range(3)))
    store = tmp_path / "store"
    argv = ("fill", "--store", str(store), "--suite", str(suite), "--models", "kmer-3",
            "--regimes", "full", "--json")
    report = ("report", "--store", str(store), "--suite", str(suite), "--resamples", "200",
              "--json")
    assert outputs(capsys, *argv)[0] == 0
    assert "context_curve" not in json.loads(outputs(capsys, *report)[1])
    refused(capsys, store, *argv, "--context-lengths", "10", "--context-length", "5",
            names=("--context-lengths", "--context-length"))
    refused(capsys, store, *argv, "--context", "windows:16:8", "--context-lengths", "10",
            names=("--context-length",))
    rc, out, err = outputs(capsys, *argv, "--context-lengths", "10", "20", "10")
    assert rc == 0, err
    assert sum(json.loads(x)["event"] == "cell" and json.loads(x)["computed"]
               for x in out.splitlines()) == 6                   # 3 tasks at each length
    doc = json.loads(outputs(capsys, *report)[1])
    curve = doc["context_curve"]
    assert [(c["model"], c["context"], c["context_length"]) for c in curve] == [
        ("kmer-3", "crop-left-10", 10), ("kmer-3", "crop-left-20", 20), ("kmer-3", "crop", None)]
    macro = {a["model"]: a["macro"] for a in doc["aggregates"]}
    for c in curve:
        assert c["value"] == pytest.approx(macro[c["entry"]])
        assert c["low"] <= c["value"] <= c["high"]
    assert macro["kmer-3 [crop-left-10]"] != macro["kmer-3 [crop]"]
