"""The Evo-1 adapter: the `stripedhyena` model built from an `evo-model` YAML config, byte
tokens, the mean of the final-norm hidden states.

Recipe (the official GENEB extractor, `embedding_pipeline/extractors/evo.py` of
`darlednik/GENEB`, through its copy of the evo and stripedhyena code):

- each sequence is tokenized alone by the package's `CharLevelTokenizer`: one token per byte of
  the text as the task file holds it (no upper-casing, no special tokens), cut to the entry's
  `max_tokens`, else its documented `context` (`ModelMeta.token_limit`: 131,072 for
  evo-1-131k-base, the model card's pretraining context), and only then (the official
  extractor cut nothing, and no geneb-v1 sequence reaches 131,072; cuts are counted);
- the model runs on one sequence at a time (batch size 1, the catalog's) and the hidden states
  after the final RMSNorm, before the unembedding (what the official copy of
  `StripedHyena.forward` returns last), are averaged over every token (`pooling = "mean"`), in
  the model's dtype; sequences of one length may share a batch (`batch_size`): never padded;
- on CUDA the weights are the package's bfloat16 (`to_bfloat16_except_poles_residues`: poles
  and residues float32) without autocast, as the official extractor ran them; on the CPU,
  float32. The device, out-of-memory back-off and streaming into the split writer are
  `StreamingEncoder`'s (engine/encoders/streaming.py).

The StripedHyena config is a YAML file in the entry's checkpoint folder (`path`), else the
evo-model package's own for the entry's hub id (`evo/configs/*.yml`, picked as `evo.models.Evo`
picks them). Attention layers (`attn_layer_idxs`) run only through flash-attn, on CUDA: a
config with any is refused before a weight is read (`preflight`, and again by the builder);
Hyena-only configs run anywhere. That check depends on the device, so it runs where the model
runs: before a local `fill` writes anything, on a Ray actor before its first pair (the driver
leaves it out: `preflight(device=False)`). The weights are the hub checkpoint's format, read
as the package's `load_checkpoint` reads them: `model.safetensors`, or
`model.safetensors.index.json` and its shards, keys under `backbone.`, the tied unembedding
stored once; from a local folder, a cached snapshot or the hub
(`engine.encoders.hub.checkpoint`), never the hub's own code.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import pkgutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
import yaml

from engine.encoders.device import pick_device
from engine.encoders.hub import checkpoint
from engine.encoders.streaming import StreamingEncoder
from store.vocab.encoder_kinds import KINDS
from store.vocab.errors import GenebError, brief

try:
    from evo.models import HF_MODEL_NAME_MAP
    from evo.tokenizer import CharLevelTokenizer
    from stripedhyena.model import StripedHyena
    from stripedhyena.utils import dotdict
except ImportError as exc:      # one of the two packages (installed together, --no-deps)
    raise GenebError(f"the Evo-1 adapter needs {' and '.join(KINDS['evo'].packages)} "
                     f"({exc}); {KINDS['evo'].install}") from None

if TYPE_CHECKING:
    from engine.encoders import EncoderOptions
    from store.catalog import ModelMeta

CONFIG_SUFFIXES = (".yml", ".yaml")
INDEX, SINGLE = "model.safetensors.index.json", "model.safetensors"
PREFIX = "backbone."            # the hub checkpoint wraps the StripedHyena in `backbone`
# What a download from the hub takes: the weights, and the config.json that makes a cached
# snapshot whole for later offline runs (`store.hf_cache.missing_files`).
HUB_FILES = ("config.json", "*.safetensors", "*.safetensors.index.json")


def build(model: ModelMeta, options: EncoderOptions) -> EvoEncoder:
    """The encoder of a catalog entry that passed `preflight`."""
    return EvoEncoder.for_model(model, options, hub_id=model.hub_id,
                                max_tokens=model.token_limit)


def preflight(model: ModelMeta, options: EncoderOptions, *, device: bool = True) -> None:
    """The weight-free checks `engine.encoders.preflight` runs for this kind: the entry has a
    StripedHyena config, and (`device`: where the model runs) one with attention layers gets
    CUDA and flash-attn."""
    if options.dtype != "auto":
        raise GenebError(f"model {model.model_id}: --dtype {options.dtype}: Evo-1 runs in its "
                         "official extractor's precision (bfloat16 weights on CUDA, float32 on "
                         "the CPU); leave --dtype out")
    config = config_of(model.model_id, model.path or model.hub_id, model.hub_id)
    if device:
        check_attention(model.model_id, config, pick_device(options.device))


# ---- the StripedHyena config --------------------------------------------------------------

def package_config(hub_id: str | None) -> str | None:
    """The evo-model package's config file of a hub id it knows (as `evo.models.Evo` picks it:
    the 131k one for evo-1-131k-base, the 8k one for every other model), else None."""
    name = {hub: name for name, hub in HF_MODEL_NAME_MAP.items()}.get(hub_id or "")
    if name is None:
        return None
    base = "evo-1-131k-base" if name == "evo-1-131k-base" else "evo-1-8k-base"
    return f"configs/{base}_inference.yml"


@dataclass(frozen=True)
class Config:
    """A checkpoint's StripedHyena config: how messages and the settings name it, the sha256 of
    its file, its parsed settings."""

    name: str
    sha256: str
    settings: dict


def config_of(model_id: str, source: str, hub_id: str | None) -> Config:
    """The checkpoint's StripedHyena config: the one YAML file of the folder `source`, else
    the package's config of `hub_id` (see the module); read without weights or the hub."""
    folder = Path(source).expanduser()
    found = sorted(p for p in folder.iterdir() if p.suffix in CONFIG_SUFFIXES) \
        if folder.is_dir() else []
    if len(found) > 1:
        raise GenebError(f"model {model_id}: {folder} holds several YAML files "
                         f"({', '.join(p.name for p in found)}); keep only its StripedHyena "
                         "config")
    packaged = None if found else package_config(hub_id or source)
    if not found and packaged is None:
        raise GenebError(
            f"model {model_id}: no StripedHyena config for {source}: put its YAML config (the "
            "format of the evo-model package's evo/configs/*.yml) in the checkpoint folder, or "
            f"give a hub_id the package knows ({', '.join(HF_MODEL_NAME_MAP.values())})")
    name = found[0].name if found else f"evo/{packaged}"
    where = found[0] if found else f"the evo-model package's {packaged}"
    try:
        text = found[0].read_bytes() if found else pkgutil.get_data("evo", packaged)
        settings = yaml.safe_load(text)
    except (OSError, yaml.YAMLError) as exc:
        raise GenebError(f"model {model_id}: cannot read the StripedHyena config {where}: "
                         f"{brief(exc)}") from None
    if not isinstance(settings, dict):
        raise GenebError(f"model {model_id}: {where} is not a StripedHyena config (a YAML "
                         "mapping of its settings)")
    return Config(name, hashlib.sha256(text).hexdigest(), settings)


def check_attention(model_id: str, config: Config, device: torch.device) -> None:
    """Refuse a config with attention layers where they cannot run: they are flash-attn's,
    which needs CUDA (Hyena-only configs run on any device)."""
    layers = config.settings.get("attn_layer_idxs") or []
    if not layers:
        return
    if device.type != "cuda":
        why = (f"this run embeds on {device} (--device)" if torch.cuda.is_available()
               else "this machine has no CUDA")
    elif importlib.util.find_spec("flash_attn") is None:
        why = "flash-attn is not installed (pip install flash-attn --no-build-isolation)"
    else:
        return
    raise GenebError(
        f"model {model_id}: its StripedHyena config {config.name} has attention layers "
        f"({', '.join(map(str, layers))}), which need CUDA and the flash-attn package; {why}")


# ---- the encoder --------------------------------------------------------------------------

class EvoEncoder(StreamingEncoder):
    """Embeds sequences with a StripedHyena checkpoint (a hub id or a local directory)."""

    kind = "evo"
    default_batch_size = 1

    def __init__(self, source: str, *, hub_id: str | None = None, max_tokens: int | None = None,
                 **common):
        super().__init__(source, **common)
        self.config = config_of(self.model_id, source, hub_id)
        check_attention(self.model_id, self.config, self.device)    # before any weight is read
        self.max_tokens = max_tokens
        self.autocast_dtype = None      # on CUDA the weights themselves are bfloat16
        self.model = self._load().to(self.device).eval()
        self.tokenizer = CharLevelTokenizer(512)        # as evo.models.Evo makes it

    # ---- loading ---------------------------------------------------------------------------

    def _folder(self) -> Path:
        """The checkpoint's folder: local, a cached snapshot, or downloaded from the hub
        (`HUB_FILES`)."""
        folder = checkpoint(self.model_id, self.source, self.revision,
                            what="the Evo checkpoint ")
        if folder is not None:
            return folder
        from huggingface_hub import snapshot_download  # lazy: huggingface_hub

        try:
            return Path(snapshot_download(self.source, revision=self.revision,
                                          allow_patterns=list(HUB_FILES)))
        except Exception as exc:        # not found, gated, a revision it lacks, the connection
            raise GenebError(f"model {self.model_id}: cannot load the Evo checkpoint "
                             f"{self.source} from the Hugging Face hub: {brief(exc)}") from None

    def _state(self, folder: Path) -> dict[str, torch.Tensor]:
        """The checkpoint's tensors under the StripedHyena's names (the package's reading)."""
        from safetensors import SafetensorError  # lazy: safetensors
        from safetensors.torch import load_file  # lazy: safetensors

        if (folder / INDEX).is_file():
            shards = None
        elif (folder / SINGLE).is_file():
            shards = [SINGLE]
        else:
            raise GenebError(f"model {self.model_id}: cannot load the Evo checkpoint in "
                             f"{folder}: it needs {SINGLE}, or {INDEX} and its shards")
        state = {}
        try:
            if shards is None:
                index = json.loads((folder / INDEX).read_text(encoding="utf-8"))
                shards = sorted(set(index["weight_map"].values()))
            for shard in shards:
                state.update(load_file(str(folder / shard)))
        except (OSError, ValueError, KeyError, TypeError, AttributeError,
                SafetensorError) as exc:
            raise GenebError(f"model {self.model_id}: cannot read the Evo checkpoint in "
                             f"{folder}: {brief(exc)}") from None
        state = {k.removeprefix(PREFIX): v for k, v in state.items()}
        if "unembed.weight" not in state and "embedding_layer.weight" in state:
            state["unembed.weight"] = state["embedding_layer.weight"]     # tied, stored once
        return state

    def _load(self) -> StripedHyena:
        """The package's model with the checkpoint's weights, in the device's dtype."""
        state = self._state(self._folder())
        where = f"its config {self.config.name}"
        try:
            model = StripedHyena(dotdict(self.config.settings))
        except Exception as exc:    # a YAML the package's constructor cannot build
            raise GenebError(f"model {self.model_id}: StripedHyena cannot be built from "
                             f"{where}: {brief(exc)}") from None
        if self.device.type == "cuda":
            model.to_bfloat16_except_poles_residues()
        else:
            model.float()
        try:
            result = model.load_state_dict(state, strict=False)
        except RuntimeError as exc:     # shapes that differ from the config's
            lines = str(exc).strip().splitlines()
            raise GenebError(f"model {self.model_id}: the checkpoint does not match {where}: "
                             f"{lines[min(1, len(lines) - 1)].strip()}") from None
        if result.unexpected_keys:
            raise GenebError(f"model {self.model_id}: the checkpoint does not match {where} "
                             f"(unexpected weights: {', '.join(result.unexpected_keys[:5])})")
        if result.missing_keys:
            raise GenebError(f"model {self.model_id}: the checkpoint lacks weights the model "
                             f"needs ({', '.join(result.missing_keys[:5])})")
        return model

    # ---- identity --------------------------------------------------------------------------

    @property
    def precision(self) -> str:
        return KINDS["evo"].precision[self.device.type == "cuda"]

    def recipe(self) -> dict:
        return {"config": self.config.name, "config_sha256": self.config.sha256,
                "max_tokens": self.max_tokens, "tokens": "bytes", "special_tokens": False,
                "layer": "final-norm", "dtype": self.precision}

    # ---- encoding --------------------------------------------------------------------------

    def tokenize(self, sequences: Sequence[str]) -> tuple[list[np.ndarray], np.ndarray]:
        """Token ids per sequence (cut to `max_tokens` when set) and a cut flag per sequence."""
        ids = [np.asarray(self.tokenizer.tokenize(s), dtype=np.int64) for s in sequences]
        cap = self.max_tokens
        truncated = np.array([cap is not None and len(x) > cap for x in ids], dtype=bool)
        return ([x[:cap] for x in ids] if cap is not None else ids), truncated

    def collate(self, ids: list[np.ndarray]) -> torch.Tensor:
        """(n, length) token ids of sequences of one length."""
        return torch.from_numpy(np.stack(ids))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Pooled float32 embeddings (n × d): the mean over tokens of the final-norm states,
        taken in the model's dtype as the official extractor took it."""
        model = self.model
        ids = ids.to(self.device, non_blocking=True)
        x, _ = model.stateless_forward(model.embedding_layer.embed(ids))
        return model.norm(x).mean(dim=1).float()
