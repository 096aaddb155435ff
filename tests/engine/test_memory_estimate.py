"""The memory estimate beyond the weights (`store.memory`, `engine.memory`): the formula against
hand-computed figures, and against the peak bytes of tensors a real forward holds on the CPU
(a tiny BERT and a tiny Llama saved with save_pretrained, each at two lengths, with attention
that holds its scores and with scaled dot-product attention), so the scaling is measured, not
restated; and the device check that counts the activations (`store.runnable.memory_fit`)."""

from __future__ import annotations

import weakref

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from engine.memory import batch_rows, estimate, scaling_of
from store.catalog import ModelMeta
from store.memory import EFFICIENT, LINEAR, QUADRATIC, Shape, activation_bytes
from store.paths import StorePaths
from store.runnable import memory_fit
from tests.engine.tiny_models import build

ROWS = 2
LENGTHS = (256, 1_024)
FACTOR = 2.0            # measured peak within [estimate / FACTOR, estimate x FACTOR]


class LiveBytes(TorchDispatchMode):
    """The peak bytes of the tensor storages the ops under it create and hold at once (each
    counted from the op that makes it until it is freed)."""

    def __init__(self):
        super().__init__()
        self.live: dict[int, int] = {}
        self.now = self.peak = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                storage = t.untyped_storage()
                key = storage.data_ptr()
                if key and key not in self.live:
                    self.live[key] = storage.nbytes()
                    self.now += storage.nbytes()
                    self.peak = max(self.peak, self.now)
                    weakref.finalize(storage, self._free, key)
        return out

    def _free(self, key: int) -> None:
        self.now -= self.live.pop(key, 0)


def test_the_formula_against_hand_computed_figures():
    shape = Shape(width=8, ffn=16, heads=2, scaling=QUADRATIC, decoder=True, basis="")
    # H = 3 x 10 x 8 x 4 = 960; F = 3 x 10 x 16 x 4 = 1,920; S = 3 x 2 x 10² x 4 = 2,400;
    # M = 3 x 10² x 4 = 1,200: attention 4H + 2S + M = 9,840 > FFN 2H + 3F = 7,680
    assert activation_bytes(shape, 3, 10, 4) == 9_840
    encoder = Shape(8, 16, 2, QUADRATIC, False, "")
    assert activation_bytes(encoder, 3, 10, 4) == 8_640              # no causal mask
    for scaling in (EFFICIENT, LINEAR):                             # no scores: FFN step
        assert activation_bytes(Shape(8, 16, 2, scaling, True, ""), 3, 10, 4) == 7_680
    assert activation_bytes(shape, 3, 10, 2) == 9_840 // 2          # 16-bit values
    # FFN and heads assumed where the config names none; the config's keys otherwise
    assumed = Shape.of({}, 256, "told", QUADRATIC, False)
    assert (assumed.ffn, assumed.heads) == (1_024, 4)
    read = Shape.of({"d_inner": 300, "n_head": 3}, 96, "told", QUADRATIC, False)
    assert (read.ffn, read.heads) == (300, 3) and "d_inner" in read.basis


def test_the_scaling_and_batch_follow_the_run():
    def meta(**known):
        return ModelMeta.one_off("m", hub_id="org/m", **known)

    encoder = {"architecture_family": "Transformer encoder"}
    assert scaling_of(meta(**encoder), None) == EFFICIENT                  # transformers' sdpa
    assert scaling_of(meta(**encoder, remote_code="required"), None) == QUADRATIC  # its own
    assert scaling_of(meta(architecture_family="Hyena"), None) == LINEAR
    assert scaling_of(meta(architecture_family="CNN-Transformer"), None) is None
    assert scaling_of(meta(), {"num_attention_heads": 4}) == EFFICIENT     # run once, unknown
    assert scaling_of(meta(), {}) is None
    # the Hugging Face encoder: the rows told, at most its padded-token budget over the piece
    hf = meta(**encoder)
    assert batch_rows(hf, 8, 1_000, "cpu", None) == (4, "4,096 padded tokens a batch")
    assert batch_rows(hf, 8, 1_000, "h100", None)[0] == 8                  # 32,768 on CUDA
    assert batch_rows(hf, None, 100_000, "cpu", None)[0] == 1              # one piece at least
    assert batch_rows(meta(encoder="evo"), None, 1_000, "cpu", None)[0] == 1


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("memory")
    return {kind: build(kind, root / kind, max_len=max(LENGTHS)) for kind in ("bert", "llama")}


def measured_peak(folder, attention: str, tokens: int) -> int:
    from transformers import AutoModel

    model = AutoModel.from_pretrained(folder, attn_implementation=attention).eval()
    ids = torch.randint(5, 9, (ROWS, tokens))
    with torch.inference_mode(), LiveBytes() as live:
        model(input_ids=ids, attention_mask=torch.ones_like(ids))
    return live.peak


@pytest.mark.parametrize("kind,family", [("bert", "Transformer encoder"),
                                         ("llama", "Transformer decoder")])
def test_the_estimate_holds_a_real_forward_at_two_lengths(checkpoints, tmp_path, kind, family):
    folder = checkpoints[kind]
    model = ModelMeta.one_off(f"tiny-{kind}", path=str(folder), params=1,
                              architecture_family=family)
    paths = StorePaths(tmp_path)
    ratios, peaks = {}, {}
    for attention, scaling in (("sdpa", EFFICIENT), ("eager", QUADRATIC)):
        for tokens in LENGTHS:
            found = estimate(paths, model, tokens, ROWS, "cpu", "float32", None)
            assert (found.rows, found.tokens) == (ROWS, tokens)
            assert found.scaling == EFFICIENT               # what the engine runs here: sdpa
            shape = Shape(found.shape.width, found.shape.ffn, found.shape.heads, scaling,
                          family == "Transformer decoder", found.shape.basis)
            expected = activation_bytes(shape, ROWS, tokens, 4)
            if scaling == EFFICIENT:
                assert expected == found.activations
            peaks[attention, tokens] = measured_peak(folder, attention, tokens)
            ratios[attention, tokens] = peaks[attention, tokens] / expected
    assert all(1 / FACTOR <= r <= FACTOR for r in ratios.values()), ratios
    # the scaling itself: 4x the tokens, about 4x the bytes with sdpa and about 16x with
    # attention that holds its scores
    grow = {a: peaks[a, LENGTHS[1]] / peaks[a, LENGTHS[0]] for a in ("sdpa", "eager")}
    assert 3 <= grow["sdpa"] <= 5 and grow["eager"] >= 10, grow


def test_the_device_check_counts_the_activations():
    gib = 1024 ** 3
    fits = memory_fit(10 * gib, None, "cpu", 16 * gib, "auto")        # the weights alone fit
    assert not fits.warning and fits.need == "≈10 GiB fp32"
    over = memory_fit(10 * gib, 8 * gib, "cpu", 16 * gib, "auto")     # with a long batch not
    assert over.warning == ("⚠ needs ≈18 GiB (fp32 weights + activations), the cpu has "
                            "16 GiB")
    assert memory_fit(10 * gib, 8 * gib, "cuda", None, "auto").need == (
        "≈18 GiB fp32 weights + activations")                        # not known: never a warning


def test_janusdna_is_at_its_documented_length_and_says_how_to_run_it():
    """The catalog's JanusDNA models were pretrained at 1,024 tokens (the repository's 72-dim
    pretraining scripts): the documented context and GENEB's cap agree, and asking for one
    names where its weights and code are and the extractor route, not only a hub folder."""
    from engine.encoders import kind_of
    from store.catalog import load_models
    from store.vocab.errors import GenebError

    models = load_models()
    for name in ("JanusDNA_72_w", "JanusDNA_72_wo"):
        meta = models[name]
        assert (meta.context, meta.max_tokens, meta.token_limit) == (1_024, 1_024, 1_024)
        with pytest.raises(GenebError) as err:
            kind_of(meta)
        said = str(err.value)
        assert "Harvard Dataverse" in said and 'encoder = "official-extractor"' in said
        assert said.count('"official-extractor"') == 2        # the note and the fix
