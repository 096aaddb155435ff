"""Typed catalogs of tasks and models: the project's own data, validated as a whole.

The geneb-v1 task list (100 ids, labels, categories in the official order) lives in
`catalogs/geneb_v1_tasks.csv`; the model catalog (40 official models and the k-mer baselines) in
`catalogs/models.toml`. Users add models with the same fields in `<store>/models.toml`.
"""

from __future__ import annotations

import csv
import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from store.domains import KINGDOMS, UNKNOWN
from store.toml_in import tables_of
from store.vocab.encoder_kinds import ENCODERS, POOLINGS, split_extractor
from store.vocab.errors import GenebError
from store.vocab.ids import check_id
from store.vocab.kinds import CLASSIFICATION, DRAWN_FROM_ALL, TaskKind
from store.vocab.revisions import is_pinned
from store.vocab.sources import LOCAL, SUBMISSION_PROVENANCES
from store.vocab.suites import GENEB_V1_SUITE

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

CATALOG_DIR = Path(__file__).parent / "catalogs"

CATEGORY_ORDER: tuple[str, ...] = (
    "Histone Mod.", "Promoters", "Enhancers", "DNA Methyl.", "Splice Sites", "lncRNA",
    "Mouse Enh.", "TF Binding", "Species Clf.", "Regulatory", "Virus/Phage", "Coding/NC",
    "Chromatin Acc.",
)

# Longest prefix first: NT-rev ids also start with the NT prefix.
_SOURCE_PREFIXES: tuple[tuple[str, str], ...] = (
    ("InstaDeepAI_nucleotide_transformer_downstream_tasks_revised_", "NT-rev"),
    ("InstaDeepAI_nucleotide_transformer_downstream_tasks_", "NT"),
    ("InstaDeepAI_plant-genomic-benchmark_", "PGB"),
    ("leannmlindsey_GUE_", "GUE"),
    ("katarinagresova_Genomic_Benchmarks_", "GB"),
    ("iPro-WAEL_", "iPro-WAEL"),
    ("deep4mc_", "Deep4mC"),
    ("iDNA_ABF_", "iDNA-ABF"),
    ("iDHS-EL_", "iDHS-EL"),
)

ARCHITECTURE_FAMILIES: tuple[str, ...] = (
    "Transformer encoder", "Transformer decoder", "CNN-Transformer", "Mamba", "Hybrid-Mamba-MoE",
    "Hyena", "StripedHyena", "Baseline", "Other",
)
TOKENIZATION_FAMILIES: tuple[str, ...] = ("single-nucleotide", "k-mer", "BPE", "mixed/other")
PROVENANCES: tuple[str, ...] = (
    *SUBMISSION_PROVENANCES, "baseline", LOCAL,
)
# How a model runs (closed vocabularies, checked for every entry); ENCODERS and POOLINGS are
# the encoder kinds' (`store.vocab.encoder_kinds`).
PADDING_SIDES: tuple[str, ...] = ("left", "right", "none")   # none: batch by exact length
REMOTE_CODE: tuple[str, ...] = ("no", "required", "custom", "package")


def source_benchmark(task_id: str) -> str:
    """The benchmark a geneb-v1 task comes from, read off its id ("other" when unknown)."""
    for prefix, name in _SOURCE_PREFIXES:
        if task_id.startswith(prefix):
            return name
    return "other"


@dataclass(frozen=True)
class TaskMeta:
    task_id: str
    label: str
    category: str
    suite: str
    source_benchmark: str
    organism: str = UNKNOWN     # a species, "multiple" or "unknown" (`store.domains`)
    kingdom: str = UNKNOWN      # one of `store.domains.TASK_KINGDOMS`


TASK_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(TaskMeta))


@dataclass(frozen=True)
class TaskProfile:
    """A task's class balance and sequence lengths, computed from its data
    (`engine.data.TaskData.profile`, recorded by `fill` and `data verify`): the rows of each
    split, the classes, the smallest class's share of the training rows, and the sequence
    lengths in letters over both splits. Task catalog columns of the same names."""

    n_train: int
    n_test: int
    n_classes: int
    min_class_share: float
    length_min: int
    length_median: float
    length_max: int

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_row(cls, row: Mapping) -> TaskProfile | None:
        """The profile of a task catalog row; None where it was never recorded."""
        values = [row.get(c) for c in cls.columns()]
        return None if None in values else cls(*values)


# A task profile as `geneb-engine tasks` and the dashboard's task views show it
PROFILE_HEADERS: tuple[str, ...] = ("train/test", "classes", "min class", "length")


def profile_cells(profile: TaskProfile | None, kind: TaskKind = CLASSIFICATION) -> list[str]:
    """The PROFILE_HEADERS cells of a profile: train/test rows, classes, the smallest class's
    share, the lengths "min-median-max"; "?" where not recorded (None). A task of a kind with no
    classes (`store.vocab.kinds.DRAWN_FROM_ALL`: regression, tracks, multilabel) has "n/a" for
    the classes and the smallest share (its profile records 0 classes and a share of 1)."""
    if profile is None:
        return ["?"] * len(PROFILE_HEADERS)
    classed = kind not in DRAWN_FROM_ALL
    return [f"{profile.n_train}/{profile.n_test}",
            str(profile.n_classes) if classed else "n/a",
            f"{profile.min_class_share:.0%}" if classed else "n/a",
            f"{profile.length_min}-{profile.length_median:g}-{profile.length_max}"]


@dataclass(frozen=True)
class LetterCounts:
    """How many of a task's sequences hold letters other than upper-case A, C, G, T, N (one
    sequence may count in several): IUPAC codes (R Y S W K M B D H V), U, lower case, other
    letters (`engine.data.letter_counts`). Catalog columns `letters_<field>`."""

    iupac: int = 0
    u: int = 0
    lower: int = 0
    other: int = 0

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        return tuple(f"letters_{f.name}" for f in fields(cls))

    @classmethod
    def from_row(cls, row: Mapping) -> LetterCounts | None:
        """The counts of a task catalog row; None where they were never recorded."""
        values = [row.get(c) for c in cls.columns()]
        return None if None in values else cls(*values)

    def summary(self) -> str:
        """'3 with IUPAC codes, 1 with U' (the counts above 0); '' when there are none."""
        names = {"iupac": "IUPAC codes", "u": "U", "lower": "lower case",
                 "other": "other letters"}
        return ", ".join(f"{n} with {names[k]}" for k, n in asdict(self).items() if n)


# ModelMeta's closed vocabularies (padding_side may also be None: by architecture); the docs'
# registry reference lists them from here.
VOCABULARIES: dict[str, tuple[str, ...]] = {
    "architecture_family": ARCHITECTURE_FAMILIES, "tokenization_family": TOKENIZATION_FAMILIES,
    "provenance": PROVENANCES, "pooling": POOLINGS, "padding_side": PADDING_SIDES,
    "remote_code": REMOTE_CODE, "encoder": ENCODERS,
}


class VocabularyError(GenebError):
    """A ModelMeta field outside its vocabulary (or a `transformers` that is no version range);
    `problem` names the field, the value and what is allowed (the message adds the model)."""

    def __init__(self, model_id: str, problem: str):
        super().__init__(f"model {model_id}: {problem}")
        self.problem = problem


@dataclass(frozen=True)
class ModelMeta:
    """One model: what results refer to (display, params, families) and how to run it."""

    model_id: str
    display: str
    params: int
    architecture: str
    architecture_family: str
    tokenization: str
    tokenization_family: str
    pretraining_data: str
    provenance: str = LOCAL
    hub_id: str | None = None
    path: str | None = None             # a local checkpoint directory instead of a hub id
    revision: str | None = None         # pinned hub revision (required with remote code)
    remote_code: str = "no"             # no | required | custom | package
    requires: str | None = None         # PyPI package an adapter needs
    transformers: str | None = None     # the transformers its code needs (PEP 440, e.g. "<5")
    encoder: str = "hf"                 # hf | kmer | official-extractor | an adapter name
    encoder_k: int | None = None        # k for the k-mer baseline
    pooling: str = "mean"               # mean | mean-with-padding | cls | tracks | trunk
    padding_side: str | None = None     # left for decoders (default: by architecture)
    max_tokens: int | None = None       # context cap in tokens
    batch_size: int | None = None
    special_tokens: bool = True         # hf: the tokenizer adds its special tokens
    bos_text: bool = False              # hf: the tokenizer's BOS token written before the text
    cut_to_multiple: int | None = None  # hf: the text's end cut to a multiple of this many letters
    one_hot: bool = False               # hf: the model gets one-hot rows of the token ids
    notes: str | None = None
    extractor: str | None = None        # official-extractor: /abs/path/file.py:ClassName
    extractor_args: str | None = None   # its init arguments beside name_model, device (JSON)
    random_init: int | None = None      # `fill --random-init SEED`: weights drawn from SEED
    pretraining_kingdoms: tuple[str, ...] = ()    # `store.domains.KINGDOMS`; () unknown
    pretraining_organisms: tuple[str, ...] = ()   # a closed species list; () not one
    domain_source: str | None = None    # where the two above come from
    zero_shot: bool | None = None       # trained on benchmark data (model_meta.json); None unknown
    overlap: str | None = None          # known overlap of its pretraining with benchmark data
    context: int | None = None          # the documented maximum input, in tokens
    # The hub commit the catalog records for `revision` (main when None), the public record it
    # was read from, or why none is recorded (`store.catalog.commit_problem`). A record only:
    # a run loads `revision` and records it as before (docs/models.md says why).
    commit: str | None = None
    commit_source: str | None = None
    commit_reason: str | None = None
    # The licences of its weights and code (`store.licences`) and where they were read.
    weights_licence: str | None = None
    code_licence: str | None = None
    licence_source: str | None = None

    def __post_init__(self) -> None:
        for key, allowed in VOCABULARIES.items():
            value = getattr(self, key)
            if value not in allowed and not (key == "padding_side" and value is None):
                raise VocabularyError(self.model_id, f"{key} = {value!r} is not one of "
                                                     f"{', '.join(allowed)}")
        # TOML and the catalog's list columns give lists: kept as tuples
        object.__setattr__(self, "pretraining_kingdoms", tuple(self.pretraining_kingdoms or ()))
        object.__setattr__(self, "pretraining_organisms",
                           tuple(self.pretraining_organisms or ()))
        if wrong := [k for k in self.pretraining_kingdoms if k not in KINGDOMS]:
            raise VocabularyError(self.model_id, f"pretraining_kingdoms holds {wrong[0]!r}, not "
                                                 f"one of {', '.join(KINGDOMS)}")
        if self.commit is not None and not is_pinned(self.commit):
            raise VocabularyError(self.model_id, f"commit = {self.commit!r} is not a commit (40 "
                                                 "hex characters)")
        if self.transformers is not None and _version_range(self.transformers) is None:
            raise VocabularyError(self.model_id, f"transformers = {self.transformers!r} is not "
                                                 "a PEP 440 version range (e.g. \"<5\" or "
                                                 "\">=4.40,<5\")")

    @classmethod
    def one_off(cls, model_id: str, **known) -> ModelMeta:
        """A model described in part (a hub id or checkpoint run once, a submission, a user
        entry): the fields not `known` are unknown (the vocabularies' Other, mixed/other)."""
        return cls(**{"display": model_id, "params": 0, "architecture": "unknown",
                      "architecture_family": "Other", "tokenization": "unknown",
                      "tokenization_family": "mixed/other", "pretraining_data": "unknown",
                      **known, "model_id": model_id})

    def randomised(self, seed: int) -> ModelMeta:
        """The random-initialisation control of this model: the same architecture, tokenizer
        and recipe with weights drawn from `seed`, under its own id
        (`<model_id>-random-init-<seed>`)."""
        return replace(self, model_id=f"{self.model_id}-random-init-{seed}",
                       display=f"{self.display} (random init {seed})", random_init=seed)

    @property
    def scale_band(self) -> str:
        return scale_band(self.params)

    @property
    def token_limit(self) -> int | None:
        """The most tokens a run gives the model, as the catalog tells it: its `max_tokens` cap,
        else its documented `context` (an encoder that reads a smaller limit of its own, a
        tokenizer's, keeps the larger: docs/guide/long-range.md); None where it gives neither."""
        return self.max_tokens or self.context


def _version_range(spec: object) -> SpecifierSet | None:
    """`spec` as a `packaging` SpecifierSet; None when it is not a non-empty PEP 440 range."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # lazy: packaging

    if not isinstance(spec, str) or not spec.strip():
        return None
    try:
        return SpecifierSet(spec)
    except InvalidSpecifier:
        return None


def transformers_problem(spec: str | None) -> str | None:
    """Why the installed transformers cannot run an entry whose `transformers` field is `spec`
    (one line: what the entry needs, what is installed, what to install); None when it fits,
    when the field is unset, or when transformers is not installed (the encoder kind's package
    check says that). Read from the package metadata: transformers is never imported."""
    if spec is None:
        return None
    try:
        installed = metadata.version("transformers")
    except metadata.PackageNotFoundError:
        return None
    needed = _version_range(spec)
    if needed.contains(installed, prereleases=True):
        return None
    return (f"its entry needs transformers{needed} and transformers {installed} is "
            f"installed; run it from a separate environment with pip install "
            f"'transformers{needed}'")


def commit_problem(m: ModelMeta) -> str | None:
    """What a hub entry lacks for the rule "a 40-hex commit with the record it was read from,
    or a stated reason" (None: it holds; a model without a hub id has nothing to pin)."""
    if not m.hub_id or m.path:
        return None
    if m.commit and m.commit_source:
        return None
    if m.commit:
        return "its commit names no record it was read from (commit_source)"
    if m.commit_reason:
        return None
    return "no commit and no reason (commit_reason)"


def param_count(params: int | None) -> int | None:
    """The one rule for a model without a parameter count (the weight-free k-mer baselines, a
    model known in part): the catalogs' files and the official ones write it 0; everything a
    model's count is shown or exported from gets None ("n/a" on screen and as its scale band,
    an empty CSV cell, null in JSON)."""
    return params if params is not None and params > 0 else None


# The units a parameter count is written with, largest first (`params_text`; `parse_params`
# also reads G for B)
PARAM_UNITS: dict[str, int] = {"B": 10 ** 9, "M": 10 ** 6, "K": 10 ** 3}


def params_text(params: float | None) -> str:
    """A parameter count as every surface shows it (the command line, the dashboard, the
    figures' and the scale plot's axes; the site's script writes the same): three significant
    digits in the largest unit it reaches, trailing zeros dropped ('999', '1K', '19.7M', '117M',
    '2.5B'); "n/a" without one (`param_count`)."""
    n = param_count(params)
    if n is None:
        return "n/a"
    unit, div = next(((u, d) for u, d in PARAM_UNITS.items() if n >= d), ("", 1))
    return f"{float(f'{n / div:.3g}'):g}{unit}"     # .3g alone writes 1000 as 1e+03


def parse_params(text: str) -> int | None:
    """A parameter count as a user writes one (`--max-params`, the dashboard's scale range and
    Recommend form): what `params_text` shows ('19.7M', '1.5B'), any case, or a plain number
    ('2e8', '500000000', '1,000,000', '250_000'); rounded to a whole count; None when `text`
    is blank. ValueError when it is not a finite count of at least 0 (each caller says which
    field, and whether 0 is a count it takes)."""
    t = text.strip().upper().replace("_", "").replace(",", "")
    if not t:
        return None
    unit = {**PARAM_UNITS, "G": PARAM_UNITS["B"]}.get(t[-1:], 1)
    value = float(t[:-1] if unit > 1 else t) * unit    # ValueError for junk
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{text!r} is not a finite count of at least 0")
    return round(value)


def scale_band(params: int | None) -> str:
    """The official leaderboard's size bins."""
    params = param_count(params)
    if params is None:
        return "n/a"
    if params < 100_000_000:
        return "<100M"
    if params <= 1_000_000_000:
        return "100M-1B"
    return ">1B"


@cache
def geneb_v1_domains() -> dict[str, dict[str, str]]:
    """geneb-v1's task domains by task id (`catalogs/task_domains.csv`): organism, kingdom,
    the source of both, and a note (why a fact is unknown)."""
    with open(CATALOG_DIR / "task_domains.csv", newline="") as f:
        return {r["task_id"]: r for r in csv.DictReader(f)}


@cache
def geneb_v1_tasks() -> tuple[TaskMeta, ...]:
    domains = geneb_v1_domains()
    with open(CATALOG_DIR / "geneb_v1_tasks.csv", newline="") as f:
        return tuple(
            TaskMeta(r["task_id"], r["label"], r["category"], GENEB_V1_SUITE.name,
                     source_benchmark(r["task_id"]), domains[r["task_id"]]["organism"],
                     domains[r["task_id"]]["kingdom"])
            for r in csv.DictReader(f)
        )


_MODEL_FIELDS = {f.name for f in fields(ModelMeta)}
# The fields that say how a model embeds a sequence (what the recipe table,
# `store/catalogs/recipes.toml`, holds beside each official extractor's recipe).
RECIPE_FIELDS: tuple[str, ...] = (
    "encoder", "pooling", "padding_side", "max_tokens", "batch_size", "special_tokens",
    "bos_text", "cut_to_multiple", "one_hot")
# What an entry that leaves a recipe field out gets.
RECIPE_DEFAULTS: dict[str, object] = {f.name: f.default for f in fields(ModelMeta)
                                      if f.name in RECIPE_FIELDS}
# The entry fields that are true or false, and those that are positive integers.
BOOL_FIELDS: tuple[str, ...] = ("special_tokens", "bos_text", "one_hot", "zero_shot")
COUNT_FIELDS: tuple[str, ...] = ("max_tokens", "batch_size", "encoder_k", "cut_to_multiple",
                                  "context")
# The entry fields that are lists of strings.
LIST_FIELDS: tuple[str, ...] = ("pretraining_kingdoms", "pretraining_organisms")


def parse_model_entries(entries: list[dict], origin: str) -> list[ModelMeta]:
    """Validate `[[model]]` entries; every problem names the file, the entry and the field."""
    int64_max = (1 << 63) - 1       # the catalog's integer columns are Int64
    out = []
    for i, e in enumerate(entries, 1):
        if e.get("model_id"):       # checked first: the messages below show it
            check_id("model", e["model_id"], f"{origin}: model entry {i}: model_id")
        where = f"{origin}: model entry {i} ({e.get('model_id', '?')})"
        unknown = set(e) - _MODEL_FIELDS
        if "random_init" in e:
            raise GenebError(f"{where}: 'random_init' is not an entry's field; `fill "
                             "--random-init SEED` runs any entry with random weights")
        if e.get("encoder") == "imported":
            raise GenebError(f"{where}: encoder = \"imported\" is not an entry's: `geneb-engine "
                             "import-embeddings MODEL DIR` records such a model in the store")
        if unknown:
            raise GenebError(f"{where}: unknown field(s) {sorted(unknown)}; "
                             f"allowed: {sorted(_MODEL_FIELDS - {'random_init'})}")
        if not e.get("model_id"):
            raise GenebError(f"{where}: missing required field 'model_id'")
        if not (e.get("hub_id") or e.get("path") or e.get("encoder", "hf") != "hf"):
            raise GenebError(f"{where}: give 'hub_id' (a Hugging Face id) or 'path' "
                             "(a local checkpoint directory)")
        params = e.get("params", 0)
        if (isinstance(params, bool) or not isinstance(params, int)
                or not 0 <= params <= int64_max):
            raise GenebError(f"{where}: 'params' must be an integer from 0 to 2^63 - 1, got "
                             f"{params!r}")
        for key in COUNT_FIELDS:
            value = e.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not 1 <= value <= int64_max):
                raise GenebError(f"{where}: '{key}' must be a positive integer (below 2^63)")
        for key in LIST_FIELDS:
            if key in e and not (isinstance(e[key], list)
                                 and all(isinstance(v, str) for v in e[key])):
                raise GenebError(f"{where}: '{key}' must be a list of strings, e.g. "
                                 "[\"animals\"]")
        for key in BOOL_FIELDS:
            if key in e and not isinstance(e[key], bool):
                raise GenebError(f"{where}: '{key}' must be true or false, not {e[key]!r}")
        e = _extractor_fields(e, where, origin)
        try:
            out.append(ModelMeta.one_off(**e))
        except VocabularyError as exc:
            raise GenebError(f"{where}: {exc.problem}") from None
    return out


# The harness's own arguments of an extractor class (`engine.encoders.official_extractor`).
HARNESS_ARGS: tuple[str, ...] = ("name_model", "device")


def _extractor_fields(e: dict, where: str, origin: str) -> dict:
    """The entry with its `extractor` made absolute (a relative file is in the folder of the
    file the entry is written in, `origin`) and its `extractor_args` as canonical JSON; both
    belong to official-extractor entries only, whose revision is their file's hash."""
    given = [k for k in ("extractor", "extractor_args") if k in e]
    if e.get("encoder") != "official-extractor":
        if given:
            raise GenebError(f"{where}: '{given[0]}' belongs to encoder = "
                             "\"official-extractor\" entries")
        return e
    if "revision" in e:
        raise GenebError(f"{where}: an official extractor's revision is the hash of its file "
                         "and arguments, taken at each run; remove 'revision'")
    e = dict(e)
    if "extractor" in e:
        try:
            file, name = split_extractor(e["extractor"])
        except ValueError as exc:
            raise GenebError(f"{where}: {exc}") from None
        path = Path(file).expanduser()
        if not path.is_absolute():
            path = Path(origin).expanduser().parent / path
        e["extractor"] = f"{path.resolve()}:{name}"
    if "extractor_args" in e:
        args = e["extractor_args"]
        if not isinstance(args, dict):
            raise GenebError(f"{where}: 'extractor_args' must be a table of the class's "
                             "keyword arguments, e.g. extractor_args = { max_len = 1024 }")
        if clash := [k for k in HARNESS_ARGS if k in args]:
            raise GenebError(f"{where}: extractor_args.{clash[0]} is the harness's own "
                             "argument: name_model is the entry's 'path' or 'hub_id' (else its "
                             "model_id), device is `fill --device`")
        try:
            e["extractor_args"] = json.dumps(args, sort_keys=True, separators=(",", ":"),
                                             allow_nan=False)
        except (TypeError, ValueError):
            raise GenebError(f"{where}: 'extractor_args' may hold strings, numbers, booleans, "
                             "arrays and tables only (no dates, nan or inf)") from None
    return e


@cache
def _builtin_models() -> tuple[ModelMeta, ...]:
    path = CATALOG_DIR / "models.toml"
    with open(path, "rb") as f:
        models = tuple(parse_model_entries(tomllib.load(f)["model"], str(path)))
    # the built-in catalog holds every hub entry to its commit or reason (a user's may omit it)
    if wrong := [f"{m.model_id}: {p}" for m in models if (p := commit_problem(m))]:
        raise GenebError(f"{path}: {'; '.join(wrong)}")
    return models


def load_models(user_file: Path | None = None) -> dict[str, ModelMeta]:
    """Built-in models, then the user's entries (a user entry with the same id wins)."""
    models = {m.model_id: m for m in _builtin_models()}
    if user_file is not None and user_file.exists():
        entries = tables_of(user_file, "model", "one [[model]] per model")
        models.update({m.model_id: m for m in parse_model_entries(entries, str(user_file))})
    return models


def official_model_ids() -> frozenset[str]:
    """The benchmark authors' curated models (the only ones that may claim 'official')."""
    return frozenset(m.model_id for m in load_models().values() if m.provenance == "official")
