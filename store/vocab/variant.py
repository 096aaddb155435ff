"""A result's variant: how its embeddings were made, beyond the model, its revision, the task's
data and the protocol. DESIGN.md's "presets and policies are identity": rows of different
variants never pool. The variant is part of a result row's key (`store.tables.schema.KEY`), of
its predictions' key, of its cell (`store.cells`: a run at another variant computes its own
cells), of its embeddings' path (`store.embeddings`) and of the entry readers show (a model's
rows at another variant than its current one are the entry `<model> [<variant>]`).

Its members, each a column of the results and predictions tables (`VARIANT_COLUMNS`) and an
attribute of the embeddings:

- `compute_precision`: how the forward pass that made the embeddings computed, as
  `engine.encoders.device.precision_name` names it (`fill --dtype` on its device): float32,
  bfloat16 or float16 (the weights cast), bfloat16-autocast or float16-autocast (float32 weights
  under autocast: `--dtype auto` on CUDA); a kind that sets its own (`EncoderKind.precision`:
  the k-mer baseline float32, Evo-1 its official extractor's); NULL where no forward pass of
  this engine made them (an official extractor decides its own, imported embeddings, imported
  results). A row written before the column reads as the precision its run recorded in the runs
  table (`store.tables.migrate.LEGACY_PRECISION_SQL`).

- `recipe_preset`: how the encoder batched the records (`fill --preset`, `PRESETS`): NULL for
  `normalized`, the default (each record embedded as if alone: length-sorted batches that never
  let a record's neighbours change its value; every row written before the column reads so),
  or `reference@<batch size>` (the official extractors' loop: file order, fixed batches of that
  size, a flush at the train/test boundary, padding to the batch's longest input on the
  official side with the pad id, the mask passed or not as the official extractor did; the
  batch size is part of the value, so two batch sizes never pool). The kinds without a forward
  pass of this engine (the k-mer baseline, official extractors, imported embeddings) and
  imported results record none: imported official rows were made by the official extractors at
  a batch size no record states (docs: Recipes).

- `context_policy`: what of each sequence the model saw (`fill --context`, `--context-length`,
  `store.vocab.context`): NULL for the default (each sequence cut to the model's own limit on
  its own side: every row written before the column reads so), else `crop-<side>-<N>` or
  `windows-<W>-<S>`.
- `storage_precision`: how the embeddings were stored (`fill --storage-precision`,
  `STORAGES`): NULL for float32, the default (every row written before the column reads so),
  `float16` or `bfloat16` (half the bytes; the probes read them back as float32, so a row's
  scores are those of the rounded embeddings). Zarr 3.1 has no bfloat16 type: bfloat16 rows
  are stored as the upper 16 bits of each float32 (rounded to nearest, ties to even) in a
  uint16 array whose split records `dtype: bfloat16` (`store.embeddings`). Imported embeddings
  are stored as float32 and record none.

Later members are added here and to `VARIANT_COLUMNS`.
"""

from __future__ import annotations

from store.vocab.encoder_kinds import EncoderKind

CONTEXT_COLUMN = "context_policy"    # NULL (the default) in every data file written before it
VARIANT_COLUMNS: tuple[str, ...] = ("compute_precision", "recipe_preset", CONTEXT_COLUMN,
                                    "storage_precision")
# The precision geneb-v1's numbers were computed in; the embeddings at it (or at none) keep the
# plain path `<model>/<task>/<split>`.
REFERENCE_PRECISION = "float32"
AUTOCAST = "-autocast"          # a precision's suffix when float32 weights run under autocast
NOT_RECORDED = "precision not recorded"

# The recipe presets `fill --preset` takes, the first the default.
NORMALIZED = "normalized"
REFERENCE = "reference"
PRESETS: dict[str, str] = {
    NORMALIZED: "each record embedded as if alone (length-sorted batches, never padded where "
                "padding would change a value); the default",
    REFERENCE: "the official extractors' loop: file order, fixed batches of --batch-size, "
               "padded to the batch's longest input as the official extractor did",
}


# The storage precisions `fill --storage-precision` takes, the first the default.
STORED_FLOAT32 = "float32"
STORAGES: dict[str, str] = {
    STORED_FLOAT32: "4 bytes a value, as computed; the default",
    "float16": "2 bytes a value: 11 significant bits, values up to 65,504 (a larger one is "
               "refused as not finite)",
    "bfloat16": "2 bytes a value: 8 significant bits, float32's range",
}
STORED = "stored-"          # an entry's and a split folder's prefix of a storage precision


def storage_value(storage: str) -> str | None:
    """A result's `storage_precision` for `fill --storage-precision`: None for float32."""
    return None if storage == STORED_FLOAT32 else storage


def storage_label(value: str | None) -> str:
    """How readers name a row's storage precision value (None: float32): `stored-float16`."""
    return STORED + (value or STORED_FLOAT32)


def precision_label(precision: str | None) -> str:
    """How an entry names the precision of its rows."""
    return NOT_RECORDED if precision is None else precision


def split_suffix(precision: str | None, preset: str | None = None,
                 *, context: str | None = None, storage: str | None = None) -> str:
    """What a split's folder name adds for embeddings at `precision`, recipe preset value
    `preset`, context policy value `context` and storage precision value `storage`: nothing at
    the reference precision (or none), else `@<precision>`; nothing for the normalized preset,
    else `@<preset>` (`reference@4`); nothing for the default context, else `@<context>`
    (`windows-1000-500`); nothing for float32 storage, else `@stored-<storage>`; so that two
    variants never share a folder."""
    return (("" if precision in (None, REFERENCE_PRECISION) else f"@{precision}")
            + ("" if preset is None else f"@{preset}")
            + ("" if context is None else f"@{context}")
            + ("" if storage in (None, STORED_FLOAT32) else f"@{STORED}{storage}"))


def preset_value(preset: str, batch_size: int | None) -> str | None:
    """A result's `recipe_preset` for `fill --preset`: None for normalized, else
    `reference@<batch size>`."""
    return None if preset == NORMALIZED else f"{preset}@{int(batch_size or 0)}"


def preset_batch(value: str | None) -> int | None:
    """The batch size of a recipe preset value (`reference@4`: 4; None: none)."""
    return None if value is None else int(value.rpartition("@")[2])


def preset_label(value: str | None) -> str:
    """How readers name a row's recipe preset value (None: normalized)."""
    return NORMALIZED if value is None else value


def dtype_precision(dtype: str, device_type: str, bf16: bool = True) -> str:
    """What `fill --dtype` (`store.vocab.encoder_kinds.DTYPES`) computes in on a device type
    (`cpu`, `cuda`, ...), named as the results record it: the weights cast to `bfloat16` or
    `float16`; `float32`; `auto` is float32 weights under autocast on CUDA
    (`bfloat16-autocast`, `float16-autocast` on a card without bfloat16: `bf16`) and float32
    elsewhere. `engine.encoders.device.precision_of` applies it with torch."""
    if dtype != "auto":
        return dtype
    if device_type != "cuda":
        return REFERENCE_PRECISION
    return f"{'bfloat16' if bf16 else 'float16'}{AUTOCAST}"


def kind_precision(kind: EncoderKind, dtype: str, device_type: str,
                   bf16: bool = True) -> str | None:
    """The compute precision of a model of encoder kind `kind` run with `--dtype` on a device
    type: the kind's own where it sets one (`EncoderKind.precision`: the k-mer baseline, on the
    CPU; Evo-1 by its device), `dtype_precision` for the other kinds with weights, None for a
    kind without a forward pass of this engine (an official extractor, imported embeddings)."""
    if not kind.source:
        return kind.precision[0] if kind.precision else None
    if kind.precision:
        return kind.precision[device_type == "cuda"]
    return dtype_precision(dtype, device_type, bf16)
