"""Encoders turn sequences into fixed-size embeddings, one row per sequence.

Every encoder has `settings` (JSON-able, recorded with the embeddings and part of their
identity), `revision` (the model revision, or None) and `encode_into(sequences, writer)`, which
writes the rows `writer.pending()` names and returns statistics (e.g. `n_truncated`).
`build_encoder` picks the encoder a catalog entry asks for; heavy imports happen only there.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from store.errors import GenebError

if TYPE_CHECKING:
    from store.catalog import ModelMeta
    from store.embeddings import SplitWriter

# Families the generic encoder cannot reproduce: what each one needs. Those in IMPLEMENTED have
# an adapter here; for the others `fill` reports the reason instead of failing obscurely.
ADAPTERS: dict[str, str] = {
    "evo": "the StripedHyena code of the `evo-model` package (pip install evo-model; CUDA and "
           "flash-attention only), batch size 1",
    "lucaone": "the LucaOne model code (`lucaone` package / LucaGroup repository): a mixed "
               "nucleotide/protein tokenizer the hub checkpoint does not ship",
    "biofm": "the `biofm_eval` package (BioToken tokenization of variants and annotations)",
    "enformer": "the `enformer-pytorch` package; the official recipe averages Enformer's "
                "predicted tracks over bins, not a hidden layer",
    "space": "the SPACE repository code (one-hot input, N-padded, mean of trunk embeddings)",
    "eccdnamamba": "the eccDNAMamba repository code (bidirectional Mamba-2 with CUDA kernels)",
}

# Adapter -> (the module it imports, the pip line that installs it).
IMPLEMENTED: dict[str, tuple[str, str]] = {
    "enformer": ("enformer_pytorch", "pip install enformer-pytorch (or pip install "
                 "'geneb[adapters]')"),
}
# Poolings only the Enformer adapter computes (mean over bins of the tracks / trunk).
ENFORMER_POOLINGS: tuple[str, ...] = ("tracks", "trunk")


class Encoder(Protocol):
    settings: dict
    revision: str | None

    def encode_into(self, sequences: Sequence[str], writer: SplitWriter) -> dict: ...


_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def is_pinned(revision: str | None) -> bool:
    """A full commit hash (a branch or tag name can move under you)."""
    return bool(revision) and bool(_COMMIT.match(revision))


# The files whose `auto_map` names Python code transformers would import from the checkpoint.
CODE_FILES: tuple[str, ...] = ("config.json", "tokenizer_config.json")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def code_reference(source: str, revision: str | None = None, *, hub: bool = False) -> str | None:
    """The first of CODE_FILES whose `auto_map` names code; "" when none does; None when that
    cannot be told (a file unreadable, or the hub unreachable and the file not in its cache).

    A local directory is read from disk. A hub id is read only with `hub=True`, through
    `hf_hub_download` of those two small files at `revision` (the local cache first; offline
    it fails cleanly); a file the hub says is absent names no code.
    """
    folder = Path(source).expanduser()
    unknown = False
    for name in CODE_FILES:
        if folder.is_dir():
            file = folder / name
            if not file.is_file():
                continue
        elif hub and _HUB_ID.match(source):
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
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError
    except ImportError:
        return None
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
    A model that needs none, or whose files cannot be checked, loads with False.
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
               f"with its revision pinned to a commit (--models {model_id}@<commit>, or "
               "'revision' in its registry entry)")
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


def preflight(model: ModelMeta, **options) -> None:
    """Every check that needs no weights, so that `fill` can refuse before writing anything."""
    if model.encoder == "kmer":
        if model.encoder_k is None:
            raise GenebError(f"model {model.model_id}: a k-mer baseline needs 'encoder_k'")
    elif model.encoder == "external":
        raise GenebError(
            f"model {model.model_id}: its weights are not published on the Hugging Face hub "
            f"({model.notes or 'see the GENEB README'}); add a registry entry with 'path' "
            "pointing at a local checkpoint to run it")
    elif model.encoder == "hf":
        source = model.path or model.hub_id
        if not source:
            raise GenebError(f"model {model.model_id}: give 'hub_id' or 'path' in its registry "
                             "entry")
        if model.pooling in ENFORMER_POOLINGS:
            raise GenebError(f"model {model.model_id}: pooling {model.pooling!r} needs "
                             "encoder = \"enformer\"")
        check_remote_code(model.model_id, source, options.get("revision") or model.revision,
                          model.remote_code, bool(options.get("trust_remote_code")))
    elif model.encoder == "enformer":
        if not (model.path or model.hub_id):
            raise GenebError(f"model {model.model_id}: give 'hub_id' or 'path' in its registry "
                             "entry")
        if model.pooling not in ("mean", *ENFORMER_POOLINGS):   # mean: the default, = tracks
            raise GenebError(f"model {model.model_id}: the Enformer adapter's pooling is one of "
                             f"{', '.join(ENFORMER_POOLINGS)}, not {model.pooling!r}")
        module, install = IMPLEMENTED["enformer"]
        if importlib.util.find_spec(module) is None:
            raise GenebError(f"model {model.model_id}: the Enformer adapter needs the "
                             f"enformer-pytorch package, which is not installed; {install}")
    elif model.encoder in ADAPTERS:
        need = f" (install: pip install {model.requires})" if model.requires else ""
        raise GenebError(
            f"model {model.model_id}: the generic Hugging Face encoder cannot reproduce its "
            f"official recipe; it needs {ADAPTERS[model.encoder]}{need}. That adapter is not "
            "part of this version of geneb-engine; skip the model with --models, or evaluate "
            "it with the official extractor and import its submission")
    else:
        raise GenebError(f"model {model.model_id}: unknown encoder {model.encoder!r} (known: "
                         f"hf, kmer, external, {', '.join(ADAPTERS)})")


def build_encoder(model: ModelMeta, **options) -> Encoder:
    """The encoder for a catalog entry, after `preflight`.

    Options for Hugging Face models: trust_remote_code (bool), device ('cuda', 'cpu', None =
    auto), batch_size (int), revision (overrides the entry's), dtype ('auto' | 'float32' | ...),
    progress (callable(done, total)). Unknown options are ignored by weight-free encoders.
    """
    preflight(model, **options)
    if model.encoder == "kmer":
        from engine.encoders.kmer import KmerEncoder

        return KmerEncoder(model.encoder_k)
    if model.encoder == "enformer":
        return _build_enformer(model, **options)
    return _build_hf(model, **options)


def _build_enformer(model: ModelMeta, **options) -> Encoder:
    from engine.encoders.enformer import EnformerEncoder

    return EnformerEncoder(
        model.path or model.hub_id,
        model_id=model.model_id,
        revision=options.get("revision") or model.revision,
        pooling="tracks" if model.pooling == "mean" else model.pooling,
        max_bp=model.max_tokens,
        batch_size=options.get("batch_size") or model.batch_size,
        device=options.get("device"),
        dtype=options.get("dtype") or "auto",
        progress=options.get("progress"),
    )


def _build_hf(model: ModelMeta, **options) -> Encoder:
    source = model.path or model.hub_id
    try:
        from engine.encoders.hf import HFEncoder
    except ImportError as exc:
        raise GenebError(f"model {model.model_id}: the model side is not installed ({exc}); "
                         "pip install 'geneb[models]'") from None
    batch_size = options.get("batch_size") or model.batch_size
    return HFEncoder(
        source,
        model_id=model.model_id,
        revision=options.get("revision") or model.revision,
        pooling=model.pooling,
        padding_side=model.padding_side,
        max_tokens=model.max_tokens,
        batch_size=batch_size,
        device=options.get("device"),
        dtype=options.get("dtype") or "auto",
        trust_remote_code=bool(options.get("trust_remote_code")),
        remote_code=model.remote_code,
        progress=options.get("progress"),
    )
