"""Encoders turn sequences into fixed-size embeddings, one row per sequence.

Every encoder has `settings` (JSON-able, recorded with the embeddings and part of their
identity), `revision` (the model revision, or None) and `encode_into(sequences, writer)`, which
writes the rows `writer.pending()` names and returns statistics (e.g. `n_truncated`); an
imported model's has none: it embeds nothing (`engine.pairs.embed_pair`).

The kinds a catalog entry may name are plain data (`store.vocab.encoder_kinds.KINDS`); here they get
the engine's side: `preflight`, every check that needs no weights (run once per model before
`fill` changes the store), the one pooling rule (`pooling_of`), the one remote-code rule
(`check_remote_code`), and `build_encoder`, which imports the kind's module (`BUILDERS`) only
then and calls its `build(model, options)`.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from engine.encoders.checkpoint_checks import tokenizer_files_problem, weights_problem
from engine.encoders.hub import is_hub_id, pinned_snapshot, read_without_hub
from store.catalog import RECIPE_DEFAULTS, transformers_problem
from store.official.recipes import reference_of
from store.vocab.context import ContextPolicy, check_side, own_side
from store.vocab.encoder_kinds import (
    DEFAULT_POOLING,
    ENCODERS,
    KINDS,
    UNPUBLISHED,
    EncoderKind,
    adapter_of,
    extractor_problem,
    what_to_do,
)
from store.vocab.errors import GenebError
from store.vocab.revisions import is_pinned
from store.vocab.variant import (
    NORMALIZED,
    REFERENCE,
    STORED_FLOAT32,
    kind_precision,
    preset_value,
    storage_value,
)

if TYPE_CHECKING:
    from engine.data import Sample
    from store.catalog import ModelMeta
    from store.embeddings import SplitWriter

# The optional recipe fields some kinds read (`EncoderKind.options`).
OPTIONS: tuple[str, ...] = tuple(dict.fromkeys(o for k in KINDS.values() for o in k.options))

# The module that builds each kind this engine runs (its `build(model, options)`); the kinds
# without one are `unavailable` in their spec.
BUILDERS: dict[str, str] = {
    "hf": "engine.encoders.hf", "kmer": "engine.encoders.kmer",
    "enformer": "engine.encoders.enformer", "lucaone": "engine.encoders.lucaone",
    "evo": "engine.encoders.evo", "official-extractor": "engine.encoders.official_extractor",
    "imported": "engine.encoders.imported",
    "splicebert": "engine.encoders.splicebert",
}


class Encoder(Protocol):
    settings: dict
    revision: str | None
    precision: str | None       # the compute precision (`told_precision`, `store.vocab.variant`)

    def encode_into(self, sequences: Sequence[str], writer: SplitWriter) -> dict: ...


@dataclass(frozen=True)
class EncoderOptions:
    """What a run asks of every encoder it builds (the catalog entry says the rest)."""

    device: str | None = None           # cuda, cuda:1, cpu; None: cuda when available
    batch_size: int | None = None       # the start batch size (None: the entry's, else default)
    max_batch_tokens: int | None = None  # padded tokens per batch (None: the device's default,
    #                                      engine.encoders.batching.BATCH_TOKENS)
    compile: bool = False               # run the model through torch.compile (Hugging Face encoder)
    trust_remote_code: bool = False     # the user's opt-in to a checkpoint's own code
    spread: bool = False                # spread the model over every visible GPU (the Hugging
    #                                     Face encoder: device_map="auto"); one GPU otherwise
    dtype: str = "auto"                 # the precision of the kinds with weights (`DTYPES`); the
    #                                     k-mer, imported and extractor kinds compute as always
    preset: str = NORMALIZED            # the recipe preset (`store.vocab.variant.PRESETS`); the
    #                                     kinds without weights batch as always
    context: ContextPolicy = ContextPolicy()   # what of a sequence a model sees
    #                                     (`store.vocab.context`); the default: crop at its limit
    storage: str = STORED_FLOAT32       # how the embeddings are stored (`STORAGES`); imported
    #                                     embeddings stay as imported (float32)


LOAD_ERROR_CHARS = 400     # of a library's message, in the one line of a failed load


def told_precision(model: ModelMeta, options: EncoderOptions) -> str | None:
    """The compute precision (`store.vocab.variant`) a run of `model` computes in with the
    run's `--device` and `--dtype`, as its encoder records it once built (`precision`):
    `store.vocab.variant.kind_precision` on the device `--device` picks here (a `--dtype` the
    device cannot run is refused, `engine.encoders.device.dtype_problem`). The planner checks
    a model's done cells at it; torch is imported only for a kind with weights."""
    kind = KINDS[model.encoder]
    if not kind.source:
        return kind_precision(kind, options.dtype, "cpu")
    from engine.encoders.device import pick_device, precision_of  # lazy: torch

    device = pick_device(options.device)
    _, autocast = precision_of(device, options.dtype, model.model_id)   # refused, or how
    return kind_precision(kind, options.dtype, device.type, bf16=str(autocast) != "torch.float16")


def told_preset(model: ModelMeta, options: EncoderOptions) -> str | None:
    """The recipe preset value (`store.vocab.variant`) a run of `model` records with the run's
    `--preset` and `--batch-size`: None for normalized and for a kind without weights of its
    own (it batches as it always does); `reference@<batch size>` otherwise, the batch size
    given or the official run's default (`store.official.recipes.reference_of`). A batch size
    the official extractor cannot have run (Evo-1's: it embeds the first sequence of each
    batch only) is refused."""
    if options.preset == NORMALIZED or not KINDS[model.encoder].source:
        return None
    reference = reference_of(model.model_id)
    batch = options.batch_size or reference.batch_size
    if reference.fixed and batch != reference.batch_size:
        raise GenebError(f"model {model.model_id}: --preset reference runs it at batch size "
                         f"{reference.batch_size} only ({reference.quirk}); leave out "
                         f"--batch-size {batch}")
    return preset_value(REFERENCE, batch)


def told_context(model: ModelMeta, options: EncoderOptions) -> str | None:
    """The context policy value (`store.vocab.context`) a run of `model` records with the
    run's `--context` and `--context-length`: None for the default (crop at the model's own
    limit on its own side); a crop on another side without a length is refused, and so is
    any other policy for imported embeddings (nothing is embedded)."""
    check_side(options.context, model.model_id, model.encoder)
    value = options.context.value(own_side(model.encoder))
    if value is not None and KINDS[model.encoder].imported:
        raise GenebError(f"model {model.model_id}: its embeddings were imported, made at the "
                         f"context they were made at; leave out --context {value}")
    return value


def told_storage(model: ModelMeta, options: EncoderOptions) -> str | None:
    """The storage precision value (`store.vocab.variant.storage_value`) a run of `model`
    records with the run's `--storage-precision`: None for float32 and for imported embeddings
    (stored as imported)."""
    return None if KINDS[model.encoder].imported else storage_value(options.storage)


# The files whose `auto_map` names Python code transformers would import from the checkpoint.
CODE_FILES: tuple[str, ...] = ("config.json", "tokenizer_config.json")


def code_reference(source: str, revision: str | None = None, *, hub: bool = False) -> str | None:
    """The first of CODE_FILES whose `auto_map` names code; "" when none does; None when that
    cannot be told (a file unreadable, or the hub unreachable and the file not in its cache).

    A local directory is read from disk. A hub id is read only with `hub=True`: from the
    cached snapshot of a pinned `revision` (`engine.encoders.hub.pinned_snapshot`: no hub
    call), else through `hf_hub_download` of those two small files at `revision` (the local
    cache first; offline, or once the run found the hub unreachable, it fails cleanly); a file
    the hub or the whole cached snapshot lacks names no code.
    """
    folder = Path(source).expanduser()
    unknown = False
    for name in CODE_FILES:
        if folder.is_dir():
            file = folder / name
            if not file.is_file():
                continue
        elif hub and is_hub_id(source):
            file = _hub_file(source, name, revision)
            if file is None:
                unknown = True
                continue
            if not file:                     # the hub says it has no such file
                continue
        else:
            return None
        try:
            data = json.loads(Path(file).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            unknown = True
            continue
        if isinstance(data, dict) and data.get("auto_map"):
            return name
    return None if unknown else ""


def _hub_file(repo_id: str, name: str, revision: str | None) -> str | None:
    """The cached hub file's path, "" when the hub says it does not exist, None when unknown."""
    try:
        from huggingface_hub import hf_hub_download  # lazy: huggingface_hub

        # lazy: huggingface_hub
        from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError
    except ImportError:
        return None
    if (snapshot := pinned_snapshot(repo_id, revision)) is not None:
        return str(snapshot / name) if (snapshot / name).is_file() else ""
    try:
        return str(hf_hub_download(repo_id, name, revision=revision))
    except LocalEntryNotFoundError:          # offline (or unreachable) and not cached
        return None
    except EntryNotFoundError:               # the repository has no such file
        return ""
    except Exception:                        # unreachable, unknown repo or revision, gated...
        return None


def check_remote_code(model_id: str, source: str, revision: str | None, remote_code: str,
                      trust: bool, *, hub: bool = False) -> bool:
    """The one rule for remote code; returns the `trust_remote_code` every load must pass.

    A model needs remote code when its entry says remote_code = "required" or when its
    config.json or tokenizer_config.json has `auto_map` (whatever the entry says; see
    `code_reference`; hub ids are read only with `hub=True`). Such code runs only with the
    user's opt-in (`trust`) and a pinned revision (or a local folder); otherwise this raises.
    `fill` gives a trusted hub model its commit before it checks (`engine.encoders.pins`: the
    store's pin, else the commit its branch names, then pinned). A model that needs none, or
    whose files cannot be checked, loads with False. `preflight` checks without the hub; the hf
    builder checks with it, once, before anything is loaded.
    """
    if remote_code in ("custom", "package"):
        raise GenebError(f"model {model_id}: needs its own code ({remote_code}); the "
                         "generic Hugging Face encoder cannot run it")
    found = code_reference(source, revision, hub=hub)
    if remote_code != "required" and not found:
        return False
    local = Path(source).expanduser().is_dir()
    if not trust:
        why = f"auto_map in its {found}; " if found else ""
        pin = (f"after reviewing the code in {source}" if local else
               "at the commit --models ID@<commit> or its entry names, else the one "
               "<store>/pins.toml pins, else the one its branch names when the run starts "
               "(then pinned there)")
        raise GenebError(
            f"model {model_id}: its checkpoint runs Python code from its repository "
            f"({why}trust_remote_code); rerun with --trust-remote-code to allow that, {pin}")
    if not is_pinned(revision) and not local:
        raise GenebError(
            f"model {model_id}: --trust-remote-code needs a pinned revision (a 40-hex "
            f"commit of {source}): name it as --models {model_id}@<commit>, or set "
            "revision = \"<commit>\" in its entry in <store>/models.toml, so the code that "
            "runs is the code you reviewed")
    return True


def kind_of(model: ModelMeta) -> EncoderKind:
    """The spec of the entry's encoder kind; raises why when this engine cannot run it."""
    kind = KINDS.get(model.encoder)
    if kind is None:
        raise GenebError(f"model {model.model_id}: unknown encoder {model.encoder!r} (known: "
                         f"{', '.join(ENCODERS)})")
    if kind.unavailable == UNPUBLISHED:
        raise GenebError(
            f"model {model.model_id}: its weights are not published on the Hugging Face hub "
            f"({model.notes or 'see the GENEB README'}); {what_to_do(kind)}")
    if kind.unavailable:
        raise GenebError(
            f"model {model.model_id}: the generic Hugging Face encoder cannot reproduce its "
            f"official recipe; it needs {kind.recipe}, an adapter this version of "
            f"geneb-engine does not have. Leave it out of --models, or {what_to_do(kind)}")
    return kind


def pooling_of(model: ModelMeta) -> str:
    """The pooling the entry's encoder computes: the entry's own, or for the catalog's default
    (mean) the kind's default; a kind without poolings ignores the field. A pooling only a
    family adapter computes needs that adapter."""
    kind = KINDS[model.encoder]
    if not kind.poolings or model.pooling in kind.poolings:
        return model.pooling
    if model.pooling == DEFAULT_POOLING:
        return kind.poolings[0]
    if owner := adapter_of(model.pooling):
        raise GenebError(f"model {model.model_id}: pooling {model.pooling!r} needs "
                         f"encoder = \"{owner}\"")
    raise GenebError(f"model {model.model_id}: {kind.label}'s pooling is one of "
                     f"{', '.join(kind.poolings)}, not {model.pooling!r}")


def preflight(model: ModelMeta, options: EncoderOptions = EncoderOptions(), *,
              device: bool = True, sample: Sample | None = None) -> None:
    """Every check that loads no model, so that `fill` can refuse before writing anything
    (the hub is not asked: the builder checks it for remote code, once, before loading).
    `device`: with the checks of the device this process would embed on (a family adapter's,
    e.g. Evo-1's attention layers need CUDA); the Ray driver leaves them out, and each
    embedding actor runs them all where the model runs (`engine.cluster.workers`). A checkpoint
    on disk is checked by `check_checkpoint` (its tokenizer on `sample`, where given)."""
    kind = kind_of(model)
    for name in kind.fields:
        if getattr(model, name) is None:
            raise GenebError(f"model {model.model_id}: {kind.label} needs '{name}'")
    for name in OPTIONS:
        if name not in kind.options and getattr(model, name) != RECIPE_DEFAULTS[name]:
            owners = " and ".join(k.label for k in KINDS.values() if name in k.options)
            raise GenebError(f"model {model.model_id}: '{name}' is read by {owners} only, not "
                             f"by {kind.label or kind.name} (encoder = \"{kind.name}\")")
    if kind.source and not (model.path or model.hub_id):
        raise GenebError(f"model {model.model_id}: give 'hub_id' or 'path' in its registry "
                         "entry")
    pooling_of(model)
    told_preset(model, options)           # a batch size its official extractor cannot have run
    told_context(model, options)          # a side without a length
    if kind.user_code and (problem := extractor_problem(model.extractor)):
        raise GenebError(f"model {model.model_id}: {problem} (the 'extractor' of its registry "
                         "entry)")
    if kind.module and importlib.util.find_spec(kind.module) is None:
        raise GenebError(f"model {model.model_id}: {kind.label} needs the "
                         f"{' and '.join(kind.packages)} package, which is not installed; "
                         f"{kind.install}")
    if kind.recipe and hasattr(adapter := importlib.import_module(BUILDERS[kind.name]),
                               "preflight"):
        adapter.preflight(model, options, device=device)    # a family's own (evo's config)

    if device and kind.source and options.dtype not in ("auto", "float32"):
        from engine.encoders.device import dtype_problem, pick_device  # lazy: torch

        if problem := dtype_problem(pick_device(options.device), options.dtype):
            raise GenebError(f"model {model.model_id}: {problem}")
    if problem := transformers_problem(model.transformers):
        raise GenebError(f"model {model.model_id}: {problem}")
    if kind.checkpoint_code:
        check_remote_code(model.model_id, model.path or model.hub_id, model.revision,
                          model.remote_code, options.trust_remote_code)
    if kind.checkpoint_files:
        check_checkpoint(model, kind, options, sample)


def check_checkpoint(model: ModelMeta, kind: EncoderKind, options: EncoderOptions,
                     sample: Sample | None) -> None:
    """The files of a checkpoint transformers loads, where they are on disk (a local folder, the
    cached snapshot of a pinned commit; a download is the hub's to check): its own tokenizer
    files and loadable weights (none are loaded for a random-initialisation control), then, for
    the generic encoder, which tokenizes the text with that tokenizer, that it knows most of
    the nucleotides of `sample` (`engine.encoders.checkpoint_checks`)."""
    folder = read_without_hub(model.path or model.hub_id, model.revision)
    if folder is None:
        return
    problem = tokenizer_files_problem(folder) or (
        weights_problem(folder) if model.random_init is None else None)
    if problem:
        raise GenebError(f"model {model.model_id}: {problem}")
    if sample is None or not sample.sequences or kind.recipe:   # an adapter maps letters itself
        return
    trust = check_remote_code(model.model_id, str(folder), model.revision, model.remote_code,
                              options.trust_remote_code)
    importlib.import_module(BUILDERS[kind.name]).check_tokenizer(model, folder, trust, sample)


def build_encoder(model: ModelMeta, options: EncoderOptions = EncoderOptions()) -> Encoder:
    """The encoder for a catalog entry that passed `preflight` (which `fill` runs once per model
    first); a kind this engine cannot run raises why, and so does a checkpoint that cannot be
    loaded, whatever the library raised (its files are the user's: one line naming the model,
    where it was loaded from and what was wrong, never a traceback)."""
    kind = kind_of(model)
    try:
        module = importlib.import_module(BUILDERS[kind.name])
    except ImportError as exc:
        if not kind.install:
            raise
        raise GenebError(f"model {model.model_id}: the model side is not installed ({exc}); "
                         f"{kind.install}") from None
    try:
        encoder = module.build(model, options)
    except GenebError:
        raise
    except Exception as exc:  # noqa: BLE001 - OSError, ValueError, UnpicklingError, SafetensorError...
        raise load_error(model.model_id, model.path or model.hub_id or model.extractor or "it",
                         exc) from None
    if (value := told_context(model, options)) is None:
        return encoder
    from engine.encoders.context import ContextEncoder  # lazy: numpy

    return ContextEncoder(encoder, options.context, value, own_side(model.encoder))


def load_error(model_id: str, source: str, exc: Exception) -> GenebError:
    """The one line of a checkpoint that could not be loaded (whatever the library raised):
    the model, where it was loaded from, the error's type and message (its lines joined, cut
    at LOAD_ERROR_CHARS)."""
    said = " ".join(str(exc).split())
    if len(said) > LOAD_ERROR_CHARS:
        said = said[:LOAD_ERROR_CHARS - 1] + "…"
    return GenebError(f"model {model_id}: cannot load {source}: {type(exc).__name__}"
                      f"{': ' + said if said else ''}")
