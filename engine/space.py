"""The bytes a `fill` would write into the store's embeddings, and whether the disk holds them.

For each model of a plan: the splits it would embed (those of its pairs' tasks that no complete
split of the same data, revision and variant stands in for, `EmbeddingStore.stored`: what
`fill --dry-run` counts too), each split's rows (the sequences it embeds) and the model's width,
summed by `store.sizes.split_bytes` (the layout of `store.embeddings`: whole chunks of 1,024
rows, labels, done flags and metadata). The width, best basis first:

1. its stored splits' recorded width (`store.sizes.stored_width`);
2. a weight-free encoder's own (the k-mer spectra: 4**k);
3. the `config.json` of its checkpoint at hand (a folder, or a cached hub snapshot:
   `store.memory.WIDTH_KEYS`: `hidden_size`, `d_model`, ...), read, never downloaded;
4. else `ASSUMED_WIDTH` (1,024), said so.

Results and predictions are left out of the estimate: a pair's rows are a few kilobytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engine.data import SPLITS
from engine.encoders import (
    EncoderOptions,
    build_encoder,
    told_context,
    told_precision,
    told_preset,
    told_storage,
)
from engine.encoders.hub import local_checkpoint
from engine.planner import PairWork
from store.catalog import ModelMeta
from store.embeddings import STORED, EmbeddingStore
from store.memory import WIDTH_KEYS, config_value
from store.paths import StorePaths
from store.runnable import format_bytes
from store.sizes import free_space, split_bytes, stored_width
from store.vocab.encoder_kinds import KINDS
from store.vocab.errors import GenebError

ASSUMED_WIDTH = 1024         # the width of a model no record tells (said where used)
OVERRIDE = "--ignore-free-space"


@dataclass(frozen=True)
class ModelSpace:
    model: str
    splits: int           # splits to embed
    rows: int
    width: int
    basis: str            # where the width comes from
    bytes: int


@dataclass(frozen=True)
class Space:
    """The bytes a run would write into the embeddings, per model, and the free space."""

    models: tuple[ModelSpace, ...]
    free: int

    @property
    def bytes(self) -> int:
        return sum(m.bytes for m in self.models)

    @property
    def fits(self) -> bool:
        return self.bytes <= self.free

    def line(self) -> str:
        return (f"embeddings to write: about {format_bytes(self.bytes)}; free where the store "
                f"is: {format_bytes(self.free)}")


def splits_to_embed(paths: StorePaths, model: ModelMeta, work: Iterable[PairWork],
                    hashes: Mapping[str, str], revision: str | None,
                    options: EncoderOptions) -> list[tuple[str, str]]:
    """(task, split) of the model's pairs whose embeddings a run would compute: those no
    complete stored split of the same data, revision and variant stands in for."""
    embeddings = EmbeddingStore(paths)
    precision, preset = told_precision(model, options), told_preset(model, options)
    context, storage = told_context(model, options), told_storage(model, options)
    return [(w.task.task_id, name) for w in work for name in SPLITS
            if not embeddings.stored(model.model_id, w.task.task_id, name,
                                     hashes.get(w.task.task_id), revision, precision=precision,
                                     preset=preset, context=context, storage=storage)]


def model_width(paths: StorePaths, model: ModelMeta) -> tuple[int, str]:
    """The width of the model's rows and its basis (see the module)."""
    if (width := stored_width(paths, model.model_id)) is not None:
        return width, "its stored embeddings"
    kind = KINDS[model.encoder]
    if kind.weight_free:
        try:
            if (width := getattr(build_encoder(model), "dim", None)) is not None:
                return int(width), "the encoder's own"
        except GenebError:
            pass
    if (found := config_value(checkpoint_config(model) or {}, WIDTH_KEYS)) is not None:
        return found[0], f"its checkpoint's config.json ({found[1]})"
    return ASSUMED_WIDTH, f"assumed ({ASSUMED_WIDTH:,}: no stored embeddings or config tell it)"


def checkpoint_config(model: ModelMeta) -> dict | None:
    """The `config.json` of the model's checkpoint at hand (a folder, or a whole cached hub
    snapshot), read, never downloaded; None where there is none or it is not a JSON object."""
    source = model.path or model.hub_id
    if not (KINDS[model.encoder].source and source):
        return None
    folder = local_checkpoint(source, model.revision)
    try:
        config = json.loads((folder / "config.json").read_bytes()) if folder else None
    except (OSError, ValueError):
        return None
    return config if isinstance(config, dict) else None


def space_needed(paths: StorePaths, work: list[PairWork], rows: Mapping[tuple[str, str], int],
                 hashes: Mapping[str, str], revisions: Mapping[str, str | None],
                 options: EncoderOptions) -> Space:
    """The embeddings a run of `work` would write (`rows`: (task, split) -> rows embedded) at
    the run's storage precision, and the free space where the store is."""
    out = []
    for model in {w.model.model_id: w.model for w in work}.values():
        mine = [w for w in work if w.model.model_id == model.model_id]
        todo = splits_to_embed(paths, model, mine, hashes, revisions.get(model.model_id),
                               options)
        if not todo:
            continue
        width, basis = model_width(paths, model)
        counts = [rows.get(s, 0) for s in todo]
        itemsize = STORED[told_storage(model, options) or "float32"].itemsize
        out.append(ModelSpace(model.model_id, len(todo), sum(counts), width, basis,
                              sum(split_bytes(n, width, itemsize) for n in counts)))
    return Space(tuple(out), free_space(paths.root))


def refuse_when_full(space: Space) -> None:
    """A run whose embeddings would not fit the free space stops before the store changes."""
    if not space.fits:
        raise GenebError(
            f"the embeddings of this run take about {format_bytes(space.bytes)} and the disk "
            f"where the store is has {format_bytes(space.free)} free; free space, fill fewer "
            f"models or tasks, or run with {OVERRIDE} (a disk filled mid-run stops the run "
            "with its last split unfinished and can starve other programs of that disk)")
