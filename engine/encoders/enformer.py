"""The Enformer adapter: the `enformer-pytorch` model, one-hot input, the mean over output bins.

Recipe (the official GENEB one for `enformer-official-rough`: `embedding_pipeline/extractors/
enformer.py` of `darlednik/GENEB` at 9fcbcbd, the last version that runs; see the recipe table,
`store/catalogs/recipes.toml`):

- each sequence (upper case, U as T: this kind's rule) is centred in `max_bp` bases (Enformer's
  196,608 bp input unless the registry entry's `max_tokens` says otherwise): a shorter one gets
  N on both sides, the odd one on the right; a longer one keeps its middle `max_bp` bases (cuts
  are counted);
- it is one-hot encoded with the package's `str_to_one_hot` (A, C, G, T; N and every other
  character give an all-zero row), and the model's output is cropped to the checkpoint's
  `target_length` central bins (896 for the official checkpoint; -1 keeps every bin);
- `pooling = "tracks"` (the official recipe): the mean over those bins of the human head's
  predicted tracks (5,313 values for the official checkpoint); `pooling = "trunk"`: the mean
  over them of the trunk embeddings (`return_only_embeddings`, 2 × dim = 3,072 values);
- every input has the same length, so a sequence embeds the same alone and inside a batch;
  rows are written back at their positions;
- an out-of-memory error halves the failed batch (down to one sequence); the device, autocast
  and streaming into the split writer are `StreamingEncoder`'s (engine/encoders/streaming.py).

The checkpoint (`config.json` plus `model.safetensors` or `pytorch_model.bin`, from a local
directory, a cached snapshot or the hub: `engine.encoders.hub.checkpoint`) is loaded here
rather than with `Enformer.from_pretrained`, which breaks on transformers 5 (the class never
calls `post_init`). The relative-position gamma features are
always computed in torch: the package's TensorFlow-precomputed gammas exist only for full-length
(1,536-bin) inputs, while benchmark sequences are short.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from enformer_pytorch import Enformer, EnformerConfig, str_to_one_hot
from enformer_pytorch.modeling_enformer import Attention

from engine.encoders.context import cropped
from engine.encoders.hub import checkpoint
from engine.encoders.streaming import StreamingEncoder
from store.vocab.errors import GenebError

if TYPE_CHECKING:
    from engine.encoders import EncoderOptions
    from store.catalog import ModelMeta

HEAD = "human"
MAX_BP = 196_608            # Enformer's input length
_WEIGHTS = ("model.safetensors", "pytorch_model.bin")


def build(model: ModelMeta, options: EncoderOptions) -> EnformerEncoder:
    """The encoder of a catalog entry that passed `preflight`."""
    return EnformerEncoder.for_model(model, options, max_bp=model.max_tokens)


class EnformerEncoder(StreamingEncoder):
    """Embeds sequences with an Enformer checkpoint (a hub id or a local directory)."""

    kind = "enformer"
    default_batch_size = 8
    halve, unit, limit = "rows", "bp", "max_tokens (bp)"

    def __init__(self, source: str, *, max_bp: int | None = None, **common):
        super().__init__(source, **common)
        self.max_bp = int(max_bp or MAX_BP)
        self.model = self.placed(self._load())
        bin_bp, bins = 2 ** int(self.model.config.num_downsamples), self.model.config.target_length
        if self.max_bp % bin_bp or bins > self.max_bp // bin_bp:
            raise GenebError(f"model {self.model_id}: max_tokens = {self.max_bp} bp must be a "
                             f"multiple of the model's {bin_bp}-bp bins holding at least its "
                             f"target_length of {bins} bins")
        if self.pooling == "tracks" and HEAD not in self.model.config.output_heads:
            raise GenebError(f"model {self.model_id}: the checkpoint has no {HEAD!r} head "
                             f"(heads: {', '.join(self.model.config.output_heads)}); use "
                             "pooling = \"trunk\"")
        self.dim = (int(self.model.config.output_heads[HEAD]) if self.pooling == "tracks"
                    else 2 * int(self.model.config.dim))

    # ---- loading -------------------------------------------------------------------------

    def _files(self) -> tuple[Path, Path]:
        """config.json and the weights file, from a local folder (a directory, a cached
        snapshot) or the hub."""
        folder = checkpoint(self.model_id, self.source, self.revision,
                            what="the enformer-pytorch checkpoint ")
        if folder is not None:
            weights = [folder / w for w in _WEIGHTS if (folder / w).is_file()]
            if not (folder / "config.json").is_file() or not weights:
                raise GenebError(
                    f"model {self.model_id}: cannot load the enformer-pytorch checkpoint in "
                    f"{folder}: it needs config.json and one of {', '.join(_WEIGHTS)}")
            return folder / "config.json", weights[0]
        from huggingface_hub import hf_hub_download  # lazy: huggingface_hub

        def fetch(name: str) -> Path:
            return Path(hf_hub_download(self.source, name, revision=self.revision))

        try:
            config = fetch("config.json")
            for name in _WEIGHTS:
                try:
                    return config, fetch(name)
                except Exception as exc:   # this weights file is absent: try the next one
                    last = exc
            raise last
        except Exception as exc:
            raise GenebError(
                f"model {self.model_id}: cannot load the enformer-pytorch checkpoint "
                f"{self.source} from the Hugging Face hub: "
                f"{(str(exc).splitlines() or [type(exc).__name__])[0]}") from None

    def _load(self):
        config_file, weights_file = self._files()
        config = EnformerConfig.from_json_file(str(config_file))
        config.use_tf_gamma = False
        config.use_checkpointing = False
        model = Enformer(config)
        if weights_file.suffix == ".safetensors":
            from safetensors.torch import load_file  # lazy: safetensors

            state = load_file(str(weights_file))
        else:
            state = torch.load(weights_file, map_location="cpu", weights_only=True)
        _load_state(model, state, self.model_id)
        for module in model.modules():
            if isinstance(module, Attention):
                module.use_tf_gamma = False
        return model

    # ---- identity ------------------------------------------------------------------------

    def recipe(self) -> dict:
        return {"head": HEAD if self.pooling == "tracks" else None, "max_bp": self.max_bp,
                "pad": "N-centred", "bins": int(self.model.config.target_length),
                "positional_gamma": "torch", "dtype": self.precision}

    # ---- encoding ------------------------------------------------------------------------

    def tokenize(self, sequences: Sequence[str]) -> tuple[list[str], np.ndarray]:
        """Each sequence centred in `max_bp` bases (see the module), and a cut flag each."""
        return ([centred(s, self.max_bp) for s in sequences],
                np.array([len(s) > self.max_bp for s in sequences], dtype=bool))

    def collate(self, sequences: list[str]) -> torch.Tensor:
        """(n, max_bp, 4) float32 of the centred sequences."""
        # Non-ASCII characters become "?" (an all-zero row, like N), one byte per base.
        return str_to_one_hot([s.encode("ascii", "replace").decode() for s in sequences])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Pooled float32 embeddings (n × d) of one one-hot batch."""
        x = x.to(self.device, self.weights_dtype or torch.float32, non_blocking=True)
        with self.autocast():
            if self.pooling == "trunk":
                out = self.model(x, return_only_embeddings=True)
            else:
                out = self.model(x, head=HEAD)
        return out.float().mean(dim=1)


def centred(sequence: str, width: int) -> str:
    """`sequence` in the middle of `width` bases: N on both sides (the odd one on the right),
    or its middle `width` bases."""
    extra = len(sequence) - width
    if extra >= 0:
        return cropped(sequence, width, "centre")
    return "N" * (-extra // 2) + sequence + "N" * (-extra - -extra // 2)


def _load_state(model: torch.nn.Module, state: dict, model_id: str) -> None:
    """Load a state dict whose tensors may be saved under one of several aliased names.

    Enformer registers its trunk twice (`stem.*` and `_trunk.1.*` name the same tensors), and a
    checkpoint may hold either or both names; every tensor of the model must be loaded once.
    """
    result = model.load_state_dict(state, strict=False)
    if result.unexpected_keys:
        raise GenebError(f"model {model_id}: the checkpoint does not match its config.json "
                         f"(unexpected weights: {', '.join(result.unexpected_keys[:5])})")
    names: dict[int, list[str]] = {}
    for name, tensor in model.state_dict(keep_vars=True).items():
        names.setdefault(id(tensor), []).append(name)
    missing = set(result.missing_keys)
    absent = [group[0] for group in names.values()
              if all(n in missing for n in group)
              and not group[0].endswith("num_batches_tracked")]
    if absent:
        raise GenebError(f"model {model_id}: the checkpoint lacks weights the model needs "
                         f"({', '.join(absent[:5])})")
