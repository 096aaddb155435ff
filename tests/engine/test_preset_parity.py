"""The recipe presets held against the official extractors' loop, family by family, where the
batch changes the value (`store/catalogs/recipes.toml`: `presets = "can-differ"`).

METAGENE-1 (a Llama decoder whose official mean takes every position of the padded batch; its
loop is tests/engine/test_recipe_parity.py's), HyenaDNA (its model gets the ids only; a Mamba
stands in, with that file's loop), Caduceus and PlantCaduceus (a bidirectional Mamba that takes
the mask and reads none: a Mamba run both ways, its code in the checkpoint, with caduceus.py's
loop written out below; transformers' own Mamba applies a mask it is given, so it cannot stand
in for them): one tiny checkpoint per family, embedded by `fill` under the catalog's own model
ids (a user entry of the store with that id points at the checkpoint) with `--preset reference`
at batch 4 and 8 and with the default normalized preset, on one task of a dozen sequences of
different lengths per split. The reference preset equals the official loop at that batch,
padding included; the normalized preset equals it at batch 1; the two differ. To 1e-5 in
float32 on the CPU, under transformers 4 and 5 (the Makefile's TF4_TESTS).
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import json  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from transformers import AutoModel, AutoTokenizer  # noqa: E402

from store.catalog import load_models  # noqa: E402
from tests.engine.test_recipe_parity import (  # noqa: E402
    entry,
    hyenadna,
    loop,
    masked_mean,
    metagene,
)
from tests.engine.tiny_models import (  # noqa: E402
    build,
    hub_layout_task,
    mamba_left_padded,
    save_remote,
)

# As Caduceus: a Mamba read both ways, the mask taken and never read.
BIDIRECTIONAL_MAMBA = '''
from transformers import MambaConfig, MambaModel, PreTrainedModel
from transformers.modeling_outputs import MaskedLMOutput


class TinyRemoteConfig(MambaConfig):
    model_type = "tiny-bidirectional-mamba"


class TinyRemoteModel(PreTrainedModel):
    config_class = TinyRemoteConfig

    def __init__(self, config):
        super().__init__(config)
        self.mamba = MambaModel(config)
        self.post_init()

    def forward(self, input_ids, attention_mask=None, **kwargs):
        ahead = self.mamba(input_ids=input_ids).last_hidden_state
        back = self.mamba(input_ids=input_ids.flip(1)).last_hidden_state.flip(1)
        hidden = ahead + back
        return MaskedLMOutput(logits=hidden, hidden_states=(hidden,))
'''


def caduceus(folder, sequences, batch=1):
    """caduceus.py: no special tokens, padded on the tokenizer's side, the ids and the mask to
    the model, the masked mean of the last of hidden_states."""
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder, trust_remote_code=True).eval()

    def embed(chunk):
        enc = tok(chunk, add_special_tokens=False, padding=True, truncation=True,
                  return_attention_mask=True, return_tensors="pt")
        out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"])
        return masked_mean(out.hidden_states[-1], enc["attention_mask"])

    return loop(sequences, batch, embed)


# Catalog model: (tiny architecture, the official extractor's loop).
FAMILIES = {
    "METAGENE-1": ("llama", metagene),
    "hyenadna-medium-160k-seqlen-hf": ("mamba", hyenadna),
    "caduceus-ph_seqlen-1k_d_model-256_n_layer-4_lr-8e-3": ("bimamba", caduceus),
    "PlantCaduceus_l32": ("bimamba", caduceus),
}
BATCHES = (4, 8)
SIZES = (("train", 12), ("test", 9))     # batches of 8: 8 + 4, then the test split's 8 + 1


def checkpoints(root) -> dict:
    """A tiny Llama (right padding, as its tokenizer), a tiny Mamba and a bidirectional one whose
    tokenizers pad on the left, every weight random (as tests/engine/test_recipe_parity.py
    builds them)."""
    dirs = {"llama": build("llama", root / "llama"),
            "mamba": mamba_left_padded(root / "mamba")}
    dirs["bimamba"] = save_remote(root / "bimamba", BIDIRECTIONAL_MAMBA, dirs["mamba"],
                                  vocab_size=10, hidden_size=32, state_size=4,
                                  num_hidden_layers=2, expand=2, pad_token_id=None)
    return dirs


@pytest.fixture(scope="module")
def presets(tmp_path_factory) -> dict:
    """The four families filled at the normalized preset and the reference preset at batch 4
    and 8, in one store; every split's stored embeddings per preset value."""
    import zarr

    from engine.cli import main
    from store.embeddings import EmbeddingStore
    from store.paths import StorePaths

    root = tmp_path_factory.mktemp("presets")
    dirs = checkpoints(root / "ckpt")
    texts = hub_layout_task(root / "suite", sizes=SIZES)
    store = root / "store"
    store.mkdir()
    (store / "models.toml").write_text("\n".join(entry(m, dirs[a], as_id=m)
                                                 for m, (a, _) in FAMILIES.items()))
    common = ["fill", "--store", str(store), "--suite", str(root / "suite"), "--models",
              *FAMILIES, "--regimes", "full", "--device", "cpu", "--trust-remote-code"]
    assert main(common) == 0
    for batch in BATCHES:
        assert main([*common, "--preset", "reference", "--batch-size", str(batch)]) == 0
    embeddings = EmbeddingStore(StorePaths(store.resolve()))
    values = [None, *(f"reference@{b}" for b in BATCHES)]
    stored = {(m, v, split): zarr.open_group(str(embeddings.split_path(m, "task_a", split,
                                                                       None, v)), mode="r")
              for m in FAMILIES for v in values for split in texts}
    return {"dirs": dirs, "texts": texts, "stored": stored, "store": store}


@pytest.mark.parametrize("model_id", list(FAMILIES))
def test_the_reference_preset_is_the_official_loop_at_its_batch(presets, model_id):
    arch, official = FAMILIES[model_id]
    for split, sequences in presets["texts"].items():
        normalized = presets["stored"][model_id, None, split]["embeddings"][:]
        np.testing.assert_allclose(normalized, official(presets["dirs"][arch], sequences),
                                   atol=1e-5, rtol=0, err_msg=f"{model_id} {split} batch 1")
        for batch in BATCHES:
            group = presets["stored"][model_id, f"reference@{batch}", split]
            ours = group["embeddings"][:]
            want = official(presets["dirs"][arch], sequences, batch=batch)
            assert ours.dtype == np.float32
            np.testing.assert_allclose(ours, want, atol=1e-5, rtol=0,
                                       err_msg=f"{model_id} {split} batch {batch}")
            assert group.attrs["encoder"]["preset"] == f"reference@{batch}"
            # the batch matters for these families: the presets are not the same numbers
            assert np.abs(ours - normalized).max() > 1e-4, f"{model_id} {split} {batch}"


def test_readers_show_which_preset_a_row_used(presets, tmp_path):
    """The newest run (reference@8) is each model's current variant, shown under its id; the
    rows of the other presets are their own entries on every reader (one table, the notes,
    the dashboard's model information, `export --csv`), never pooled."""
    import csv

    from engine.cli import main
    from geneb_tui.core.query import StoreSnapshot
    from store.db import Snapshot
    from store.paths import StorePaths

    paths = StorePaths(presets["store"].resolve())
    snap = Snapshot(paths)
    shown = snap.query("SELECT model, any_value(recipe_preset) AS preset, count(*) AS n "
                       "FROM results WHERE model LIKE 'METAGENE-1%' GROUP BY model")
    assert dict(zip(shown["model"], shown["preset"], strict=True)) == {
        "METAGENE-1": "reference@8", "METAGENE-1 [normalized]": None,
        "METAGENE-1 [reference@4]": "reference@4"}
    assert ("METAGENE-1: results at float32, reference@8 shown as METAGENE-1, at other "
            "variants apart as METAGENE-1 [normalized], METAGENE-1 [reference@4] (never "
            "pooled)") in snap.notes
    snap.close()
    models = StoreSnapshot.load(paths).models
    display = dict(zip(models["model_id"], models["display"], strict=False))
    assert display["METAGENE-1 [reference@4]"].endswith(" [reference@4]")
    out = tmp_path / "scores.csv"
    assert main(["export", "--store", str(presets["store"]), "--csv", str(out)]) == 0
    with open(out) as f:
        exported = {(r["model"], r["recipe_preset"]) for r in csv.DictReader(f)
                    if r["model"].startswith("METAGENE-1")}
    assert exported == {("METAGENE-1", "reference@8"), ("METAGENE-1 [normalized]", ""),
                        ("METAGENE-1 [reference@4]", "reference@4")}


def test_each_preset_keeps_its_cells(presets):
    """After the reference runs, a normalized fill finds its cells done: nothing is computed
    again, nothing written."""
    from engine.cli import main
    from store.paths import StorePaths
    from store.tables.results import read_state

    paths = StorePaths(presets["store"].resolve())
    before = read_state(paths).version
    assert main(["fill", "--store", str(presets["store"]), "--suite",
                 str(presets["store"].parent / "suite"), "--models", *FAMILIES, "--regimes",
                 "full", "--device", "cpu", "--trust-remote-code"]) == 0
    assert read_state(paths).version == before


def test_a_batch_size_the_official_extractor_cannot_have_run_is_refused():
    """Evo-1's official extractor embeds the first sequence of each batch only: its reference
    batch is 1, and another is refused in one line naming why."""
    from engine.encoders import EncoderOptions, told_preset
    from store.vocab.errors import GenebError

    evo = load_models()["evo-1-131k-base"]
    assert told_preset(evo, EncoderOptions(preset="reference")) == "reference@1"
    assert told_preset(evo, EncoderOptions()) is None
    with pytest.raises(GenebError, match="batch size 1 only .*first sequence of each batch"):
        told_preset(evo, EncoderOptions(preset="reference", batch_size=4))
    metagene_1 = load_models()["METAGENE-1"]
    assert told_preset(metagene_1, EncoderOptions(preset="reference")) == "reference@4"
    assert told_preset(load_models()["kmer-3"], EncoderOptions(preset="reference")) is None


def test_status_counts_the_normalized_cells_and_names_the_reference_ones(presets, capsys):
    """`status` counts each model's cells at what a plain `fill` computes (the normalized
    preset) and names those done at a reference batch size as other cells."""
    from engine.cli import main

    capsys.readouterr()
    assert main(["status", "--store", str(presets["store"]), "--suite",
                 str(presets["store"].parent / "suite"), "--models", *FAMILIES,
                 "--regimes", "full", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["other_precisions"] == {m: {"float32, reference@4": 1, "float32, reference@8": 1}
                                       for m in FAMILIES}
    assert all(r["done"] == r["total"] == 1 for r in doc["rows"])


def test_a_resumed_split_runs_its_fixed_batches_again(presets):
    """A split interrupted after some rows: the reference preset runs again every batch that
    holds a row not yet written, whole, so the rows come out as one uninterrupted run's."""
    from engine.encoders.hf import HFEncoder
    from engine.encoders.streaming import ArraySink
    from store.official.recipes import reference_of

    encoder = HFEncoder(str(presets["dirs"]["llama"]), model_id="METAGENE-1",
                        pooling="mean-with-padding", preset="reference@4",
                        reference=reference_of("METAGENE-1"), device="cpu", dtype="float32")
    sequences = presets["texts"]["train"]
    whole = encoder.encode(sequences)
    sink = ArraySink(len(sequences))
    sink.array = np.full_like(whole, np.nan)
    sink.done[:6] = True                  # rows 0-5 written: the batch of rows 4-7 runs again
    encoder.encode_into(sequences, sink)
    np.testing.assert_allclose(sink.array[6:], whole[6:], atol=1e-6, rtol=0)
    assert np.isnan(sink.array[:4]).all()         # the first batch was not run again
