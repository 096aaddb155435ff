"""The encoder kinds a model entry may name (`ModelMeta.encoder`): one plain-data spec each.

A spec says which poolings the kind computes (its default first), what a run needs (entry
fields, a hub_id or path, packages and how to install them, a user's own extractor file), what
its official extractor did to a sequence before encoding it (`sequences`) and, for a kind this
engine cannot run, why.
Torch-free: `store.catalog` takes its ENCODERS and POOLINGS vocabularies from here, the dashboard
(`store/runnable.py`) its runnability rules; the engine adds the builders and the
checks that need its code (`engine/encoders/__init__.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Why this engine cannot run a kind (`EncoderKind.unavailable`).
UNPUBLISHED = "unpublished"     # no published weights (an hf entry with 'path' runs a local copy)
NO_ADAPTER = "no-adapter"       # a family adapter this engine does not have
DEFAULT_POOLING = "mean"        # ModelMeta's default: a kind that does not compute it uses its own

# What a kind's official extractor did to a sequence before encoding it (`EncoderKind.sequences`,
# applied by `engine.data.as_read_by`): nothing (the text as the task file holds it; the
# tokenizer decides: every official extractor of the generic encoder's families), upper case
# (the official k-mer example), upper case with U read as T (the official Enformer extractor).
# Not part of the embeddings' settings: the data hash is of the sequences as given, and every
# hash recorded before these rules is of upper-case ACGTN text, where each rule is the identity.
AS_GIVEN = "as-given"
UPPER = "upper"
UPPER_U_AS_T = "upper-u-as-t"
SEQUENCE_RULES: tuple[str, ...] = (AS_GIVEN, UPPER, UPPER_U_AS_T)


# `fill --dtype`: the precision of the kinds with weights (what each means on a device:
# `engine.encoders.device.precision_of`; the runs table's `dtype` column records the result).
DTYPES: tuple[str, ...] = ("auto", "bfloat16", "float16", "float32")
# Bytes per parameter of the weights at each `fill --dtype`: auto keeps float32 weights (its
# autocast on CUDA does not shrink them); bfloat16 and float16 cast them
# (`engine.encoders.device.precision_of`). `store.runnable.weight_bytes` reads it.
WEIGHT_BYTES: dict[str, int] = {"auto": 4, "bfloat16": 2, "float16": 2, "float32": 4}


@dataclass(frozen=True)
class EncoderKind:
    name: str
    label: str = ""                     # how messages name it
    poolings: tuple[str, ...] = ()      # what it computes, its default first; none: unused
    fields: tuple[str, ...] = ()        # entry fields a run needs
    options: tuple[str, ...] = ()       # optional recipe fields only this kind reads
    source: bool = False                # loads weights from the entry's hub_id or path
    checkpoint_code: bool = False       # loads through transformers: a checkpoint may name code
    checkpoint_files: bool = False      # reads the checkpoint's tokenizer files and weights
    #                                     through transformers (checked before a run)
    packages: tuple[str, ...] = ()      # PyPI packages a run needs
    module: str | None = None           # the adapter's own package, checked before any loading
    install: str = ""                   # how to install those packages
    recipe: str = ""                    # a family adapter: what its official recipe needs
    unavailable: str = ""               # UNPUBLISHED | NO_ADAPTER: why it cannot run here
    sequences: str = AS_GIVEN           # a SEQUENCE_RULES value: what the encoder gets
    user_code: bool = False             # runs the user's own class, the entry's 'extractor'
    gpu: bool = False                   # embeds on a GPU when there is one (else CPU only)
    hub_needs_cuda: str = ""            # why its published checkpoints run on CUDA only
    imported: bool = False              # nothing runs: its embeddings were imported into the
    #                                     store (`geneb-engine import-embeddings`)
    precision: tuple[str, str] = ()     # (on the CPU, on CUDA): the compute precision of a kind
    #                                     that sets its own whatever `--dtype` says
    #                                     (`store.vocab.variant`)

    @property
    def weight_free(self) -> bool:
        """A baseline with no weights (the k-mer spectra): no parameters, no memory, no source."""
        return not (self.source or self.user_code or self.imported or self.unavailable)


def _no_adapter(name: str, recipe: str) -> EncoderKind:
    return EncoderKind(name, recipe=recipe, unavailable=NO_ADAPTER)


# In the order messages list them.
KINDS: dict[str, EncoderKind] = {k.name: k for k in (
    EncoderKind("hf", "the generic Hugging Face encoder",
                poolings=("mean", "mean-with-padding", "cls"), source=True,
                options=("special_tokens", "bos_text", "cut_to_multiple", "one_hot"),
                checkpoint_code=True, checkpoint_files=True, packages=("torch", "transformers"),
                install="pip install 'geneb[models]'", gpu=True),
    EncoderKind("kmer", "a k-mer baseline", fields=("encoder_k",), sequences=UPPER,
                precision=("float32", "float32")),
    # A class written for the official harness (harness/extractors/<module>.py), run as is: it
    # gets the text as the harness gives it and decides itself.
    EncoderKind("official-extractor", "an official-harness extractor", fields=("extractor",),
                user_code=True, gpu=True),
    EncoderKind("external", unavailable=UNPUBLISHED),
    # Embeddings made elsewhere, imported per task and split; `fill` probes them, embeds nothing.
    # The store writes such entries itself (`store.tables.catalogs.imported_models`).
    EncoderKind("imported", "imported embeddings (geneb-engine import-embeddings)",
                imported=True),
    # mean: the mean over every byte token of the final-norm hidden states (the official
    # recipe). Attention layers need CUDA and flash-attn; Hyena-only configs run on the CPU.
    # Its official extractor's precision: bfloat16 weights on CUDA, float32 on the CPU.
    EncoderKind("evo", "the Evo-1 adapter", poolings=("mean",), source=True,
                precision=("float32", "bfloat16"),
                packages=("evo-model", "stripedhyena"), module="evo",
                install="pip install --no-deps evo-model==0.5 stripedhyena==0.2.2 (without "
                        "their declared flash-attn and triton, which build on CUDA machines "
                        "only; `make` installs them so)",
                recipe="the `evo-model` package's StripedHyena config and byte tokenizer with "
                       "the `stripedhyena` model code instead of the hub checkpoint's remote "
                       "code; attention layers need CUDA and flash-attn",
                sequences=AS_GIVEN, gpu=True,
                hub_needs_cuda="its attention layers need CUDA and flash-attn"),
    # mean: the masked mean of the last layer, [CLS] and [SEP] included (the official recipe).
    EncoderKind("lucaone", "the LucaOne adapter", poolings=("mean",), source=True,
                packages=("lucaone",), module="lucaone",
                install="pip install lucaone (or pip install 'geneb[adapters]')",
                recipe="the `lucaone` package: its model code and its tokenizer (a built-in "
                       "nucleotide/protein vocabulary, nucleotide mode) instead of the hub "
                       "checkpoint's remote code",
                sequences=AS_GIVEN, gpu=True),
    _no_adapter("biofm", "the `biofm_eval` package (BioToken tokenization of variants and "
                         "annotations)"),
    # tracks / trunk: the means over bins of the predicted tracks / of the trunk embeddings.
    EncoderKind("enformer", "the Enformer adapter", poolings=("tracks", "trunk"), source=True,
                packages=("enformer-pytorch",), module="enformer_pytorch",
                install="pip install enformer-pytorch (or pip install 'geneb[adapters]')",
                recipe="the `enformer-pytorch` package; the official recipe averages Enformer's "
                       "predicted tracks over bins, not a hidden layer",
                sequences=UPPER_U_AS_T, gpu=True),
    # mean: over 1,024-nt windows (stride 512, the last one at the end), the masked mean of
    # the last layer with [CLS] and [SEP] per window, the windows averaged equally.
    EncoderKind("splicebert", "the SpliceBERT adapter", poolings=("mean",), source=True,
                packages=("transformers",), module="transformers",
                install="pip install 'geneb[models]'", checkpoint_files=True,
                recipe="single-nucleotide ids without the checkpoint's tokenizer (it needs "
                       "spaces between letters) and the mean over overlapping 1,024-nt windows",
                sequences=UPPER_U_AS_T, gpu=True),
    _no_adapter("space", "the SPACE repository code (one-hot input, N-padded, mean of trunk "
                         "embeddings)"),
    _no_adapter("eccdnamamba", "the eccDNAMamba repository code (bidirectional Mamba-2 with CUDA "
                               "kernels)"),
)}
ENCODERS: tuple[str, ...] = tuple(KINDS)
POOLINGS: tuple[str, ...] = tuple(dict.fromkeys(p for k in KINDS.values() for p in k.poolings))
# Families the generic encoder cannot reproduce (those without `unavailable` have an adapter).
ADAPTERS: tuple[str, ...] = tuple(k.name for k in KINDS.values() if k.recipe)


def what_to_do(kind: EncoderKind) -> str:
    """What a user can do with a model of a kind this engine cannot run (`unavailable`): the
    one wording of `fill`, `models` and the dashboard."""
    if kind.unavailable == UNPUBLISHED:
        return ("add a registry entry with 'path' pointing at a local checkpoint in Hugging Face "
                "format, or one with encoder = \"official-extractor\" and the extractor that "
                "loads it, to run it")
    return ("run its official extractor through this engine (a registry entry with encoder = "
            "\"official-extractor\" and extractor = \"<file>.py:<Class>\"; docs: Evaluate a "
            "model, Run an extractor written for the official harness), or import its official "
            "submission (`geneb-engine import --official`)")


def adapter_of(pooling: str | None) -> str | None:
    """The family adapter that alone computes `pooling` (tracks, trunk: enformer), else None
    (a pooling other kinds compute too, such as mean, names no adapter)."""
    owners = [k for k in KINDS.values() if pooling in k.poolings]
    return owners[0].name if len(owners) == 1 and owners[0].recipe else None


def split_extractor(spec: str) -> tuple[str, str]:
    """(file, class name) of an entry's `extractor`, `path/to/file.py:ClassName`; ValueError
    saying what is wrong."""
    file, colon, name = str(spec).rpartition(":")
    if not colon or not file.endswith(".py") or not name.isidentifier():
        raise ValueError("'extractor' must name a Python file and a class in it, "
                         f"'path/to/file.py:ClassName', not {spec!r}")
    return file, name


def extractor_problem(spec: str) -> str:
    """Why the entry's extractor cannot run as named, told without running it ("" when its
    file exists): the one rule of the engine's `preflight` and the dashboard."""
    try:
        file, _ = split_extractor(spec)
    except ValueError as exc:
        return str(exc)
    path = Path(file).expanduser()
    if path.is_file():
        return ""
    return (f"its extractor {file} is not a file" if path.exists() else
            f"its extractor file {file} does not exist")
