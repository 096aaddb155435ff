"""The SpliceBERT adapter on a tiny random BERT with SpliceBERT's vocabulary order, loaded the
way users load it (a `path` entry with `encoder = "splicebert"`). Its embeddings against the
official recipe: tests/engine/test_recipe_parity.py."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from engine.encoders import EncoderOptions, build_encoder, preflight  # noqa: E402
from engine.encoders.context import window_starts  # noqa: E402
from engine.encoders.splicebert import SpliceBERTEncoder  # noqa: E402
from engine.registry import resolve_model  # noqa: E402
from store.catalog import load_models  # noqa: E402
from store.fingerprint import checkpoint_fingerprint  # noqa: E402
from store.vocab.errors import GenebError  # noqa: E402
from tests.engine.tiny_models import build, char_tokenizer  # noqa: E402


@pytest.fixture(scope="module")
def zoo(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("splicebert")
    ckpt = build("bert-mlm", root / "tiny-splicebert", max_len=34)      # windows of 32
    no_n = root / "no-n"
    shutil.copytree(ckpt, no_n)
    char_tokenizer(34, letters="ACGT").save_pretrained(no_n)
    models = root / "models.toml"
    models.write_text("".join(
        f'[[model]]\nmodel_id = "{name}"\npath = "{path}"\nencoder = "splicebert"\n{extra}\n'
        for name, path, extra in (("tiny", ckpt, ""), ("tiny-short", ckpt, "max_tokens = 18"),
                                  ("no-n", no_n, ""), ("tiny-no-sep", ckpt,
                                                       "special_tokens = false"))))
    return {"catalog": load_models(models)}


def encoder(zoo, model_id: str) -> SpliceBERTEncoder:
    return build_encoder(resolve_model(model_id, zoo["catalog"]), EncoderOptions(device="cpu"))


def test_windows_cover_the_sequence_the_last_ending_at_its_end():
    assert window_starts(0, 32, 16) == window_starts(32, 32, 16) == [0]
    assert window_starts(33, 32, 16) == [0, 1]
    assert window_starts(60, 32, 16) == [0, 16, 28]
    assert window_starts(64, 32, 16) == [0, 16, 32]


def test_letters_become_the_vocabulary_s_ids_and_the_rest_n(zoo):
    enc = encoder(zoo, "tiny")
    assert (enc.window, enc.cls_id, enc.sep_id, enc.pad_id) == (32, 2, 3, 0)
    ids, cut = enc.tokenize(["ACGTN", "RYé", ""])
    assert [x.tolist() for x in ids] == [[6, 7, 8, 9, 5], [5, 5, 5], []] and not cut.any()
    # read upper case with U as T (the kind's rule), an IUPAC code as N
    got = enc.encode(["ACGUACGTRY", "acgtacgtnn", "ACGTACGTNN"])
    np.testing.assert_allclose(got[0], got[1], atol=1e-6)
    np.testing.assert_allclose(got[1], got[2], atol=1e-6)
    assert enc.settings == {"encoder": "splicebert", "source": enc.source,
                            "revision": checkpoint_fingerprint(Path(enc.source)),
                            "pooling": "mean", "window": 32, "stride": 16,
                            "letters": "ACGT, else N", "dtype": "float32", "layer": "last"}


def test_a_long_sequence_is_the_mean_of_its_windows(zoo):
    enc = encoder(zoo, "tiny")
    seq = "ACGTTGCA" * 7 + "ACGT"                       # 60 letters: windows at 0, 16, 28
    windows = [seq[a:a + 32] for a in (0, 16, 28)]
    np.testing.assert_allclose(enc.encode([seq])[0], enc.encode(windows).mean(axis=0),
                               atol=1e-6)
    together = enc.encode([seq, "ACGT", seq[:40]])
    np.testing.assert_allclose(together, np.stack([enc.encode([s])[0] for s in
                                                   (seq, "ACGT", seq[:40])]), atol=1e-5)


def test_max_tokens_narrows_the_window(zoo):
    assert encoder(zoo, "tiny-short").window == 16


def test_a_checkpoint_without_the_letters_is_one_clear_error(zoo):
    with pytest.raises(GenebError, match="no-n: .* is not a SpliceBERT checkpoint: its "
                                         "vocabulary lacks N"):
        encoder(zoo, "no-n")


def test_a_field_the_adapter_does_not_read_is_refused_before_loading(zoo):
    with pytest.raises(GenebError, match=r"^model tiny-no-sep: 'special_tokens' is read by the "
                                         r"generic Hugging Face encoder only, not by the "
                                         r"SpliceBERT adapter \(encoder = \"splicebert\"\)$"):
        preflight(zoo["catalog"]["tiny-no-sep"])


def test_the_catalog_entry_runs_where_its_weights_are(zoo):
    entry = load_models()["splicebert-1024nt"]
    assert (entry.encoder, entry.provenance, entry.params) == ("splicebert", "self-reported",
                                                               19_710_474)
    with pytest.raises(GenebError, match="splicebert-1024nt: give 'hub_id' or 'path'"):
        preflight(entry)
    preflight(zoo["catalog"]["tiny"])
