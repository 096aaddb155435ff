"""Encoders turn sequences into fixed-size embeddings, one row per sequence.

Every encoder has `settings` (JSON-able, recorded with the embeddings and part of their
identity), `revision` (the model revision, or None) and `encode_into(sequences, writer)`, which
writes the rows `writer.pending()` names and returns statistics (e.g. `n_truncated`).
`build_encoder` picks the encoder a catalog entry asks for; heavy imports happen only there.
"""

from __future__ import annotations

import importlib.util
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


def check_remote_code(model_id: str, source: str, revision: str | None, remote_code: str,
                      trust: bool) -> None:
    """Remote code runs only with the user's opt-in and a pinned revision (or a local folder)."""
    if remote_code == "no":
        return
    if remote_code in ("custom", "package"):
        raise GenebError(f"model {model_id}: needs its own code ({remote_code}); the "
                         "generic Hugging Face encoder cannot run it")
    if not trust:
        raise GenebError(
            f"model {model_id}: its checkpoint runs Python code from its repository "
            "(trust_remote_code); rerun with --trust-remote-code to allow that, with its "
            f"revision pinned to a commit (--models {model_id}@<commit>, or 'revision' "
            "in its registry entry)")
    if not is_pinned(revision) and not Path(source).is_dir():
        raise GenebError(
            f"model {model_id}: --trust-remote-code needs a pinned revision (a 40-hex "
            f"commit of {source}): name it as --models {model_id}@<commit>, or set "
            "revision = \"<commit>\" in its entry in <store>/models.toml, so the code that "
            "runs is the code you reviewed")


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
