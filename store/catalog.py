"""Typed catalogs of tasks and models: the project's own data, validated as a whole.

The geneb-v1 task list (100 ids, labels, categories in the official order) lives in
`catalogs/geneb_v1_tasks.csv`; the model catalog (40 official models and the k-mer baselines) in
`catalogs/models.toml`. Users add models with the same fields in `<store>/models.toml`.
"""

from __future__ import annotations

import csv
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from store.errors import GenebError

if TYPE_CHECKING:
    import polars as pl

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
    "official", "verified", "reproduced", "self-reported", "baseline", "local",
)
# How a model runs (closed vocabularies, checked for every entry).
# tracks / trunk: the Enformer adapter's means over bins (predicted tracks / trunk embeddings).
POOLINGS: tuple[str, ...] = ("mean", "mean-with-padding", "cls", "tracks", "trunk")
PADDING_SIDES: tuple[str, ...] = ("left", "right", "none")   # none: batch by exact length
REMOTE_CODE: tuple[str, ...] = ("no", "required", "custom", "package")
ENCODERS: tuple[str, ...] = (
    "hf", "kmer", "external", "evo", "lucaone", "biofm", "enformer", "space", "eccdnamamba",
)


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
    provenance: str = "local"
    hub_id: str | None = None
    path: str | None = None             # a local checkpoint directory instead of a hub id
    revision: str | None = None         # pinned hub revision (required with remote code)
    remote_code: str = "no"             # no | required | custom | package
    requires: str | None = None         # PyPI package an adapter needs
    encoder: str = "hf"                 # hf | kmer | an adapter name
    encoder_k: int | None = None        # k for the k-mer baseline
    pooling: str = "mean"               # mean | mean-with-padding | cls | tracks | trunk
    padding_side: str | None = None     # left for decoders (default: by architecture)
    max_tokens: int | None = None       # context cap in tokens
    batch_size: int | None = None
    notes: str | None = None

    @property
    def scale_band(self) -> str:
        return scale_band(self.params)


def scale_band(params: int | None) -> str:
    """The official leaderboard's size bins."""
    if params is None or params <= 0:
        return "n/a"
    if params < 100_000_000:
        return "<100M"
    if params <= 1_000_000_000:
        return "100M-1B"
    return ">1B"


@cache
def geneb_v1_tasks() -> tuple[TaskMeta, ...]:
    with open(CATALOG_DIR / "geneb_v1_tasks.csv", newline="") as f:
        return tuple(
            TaskMeta(r["task_id"], r["label"], r["category"], "geneb-v1",
                     source_benchmark(r["task_id"]))
            for r in csv.DictReader(f)
        )


_MODEL_FIELDS = {f.name for f in fields(ModelMeta)}


def parse_model_entries(entries: list[dict], origin: str) -> list[ModelMeta]:
    """Validate `[[model]]` entries; every problem names the file, the entry and the field."""
    from store.ids import check_id

    int64_max = (1 << 63) - 1       # the catalog's integer columns are Int64
    out = []
    for i, e in enumerate(entries, 1):
        if e.get("model_id"):       # checked first: the messages below show it
            check_id("model", e["model_id"], f"{origin}: model entry {i}: model_id")
        where = f"{origin}: model entry {i} ({e.get('model_id', '?')})"
        unknown = set(e) - _MODEL_FIELDS
        if unknown:
            raise GenebError(f"{where}: unknown field(s) {sorted(unknown)}; "
                             f"allowed: {sorted(_MODEL_FIELDS)}")
        if not e.get("model_id"):
            raise GenebError(f"{where}: missing required field 'model_id'")
        e = dict(e)
        if not (e.get("hub_id") or e.get("path") or e.get("encoder", "hf") != "hf"):
            raise GenebError(f"{where}: give 'hub_id' (a Hugging Face id) or 'path' "
                             "(a local checkpoint directory)")
        e.setdefault("display", e["model_id"])
        e.setdefault("params", 0)
        for k in ("architecture", "architecture_family", "tokenization", "tokenization_family",
                  "pretraining_data"):
            e.setdefault(k, "unknown" if k != "architecture_family" else "Other")
        if (isinstance(e["params"], bool) or not isinstance(e["params"], int)
                or not 0 <= e["params"] <= int64_max):
            raise GenebError(f"{where}: 'params' must be an integer from 0 to 2^63 - 1, got "
                             f"{e['params']!r}")
        for key, allowed in (("pooling", POOLINGS), ("padding_side", PADDING_SIDES),
                             ("remote_code", REMOTE_CODE), ("encoder", ENCODERS)):
            if key in e and e[key] is not None and e[key] not in allowed:
                raise GenebError(f"{where}: {key} = {e[key]!r} is not one of "
                                 f"{', '.join(allowed)}")
        for key in ("max_tokens", "batch_size", "encoder_k"):
            value = e.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not 1 <= value <= int64_max):
                raise GenebError(f"{where}: '{key}' must be a positive integer (below 2^63)")
        out.append(ModelMeta(**e))
    return out


@cache
def _builtin_models() -> tuple[ModelMeta, ...]:
    path = CATALOG_DIR / "models.toml"
    with open(path, "rb") as f:
        return tuple(parse_model_entries(tomllib.load(f)["model"], str(path)))


def load_models(user_file: Path | None = None) -> dict[str, ModelMeta]:
    """Built-in models, then the user's entries (a user entry with the same id wins)."""
    models = {m.model_id: m for m in _builtin_models()}
    if user_file is not None and user_file.exists():
        try:
            with open(user_file, "rb") as f:
                entries = tomllib.load(f).get("model", [])
        except tomllib.TOMLDecodeError as exc:
            raise GenebError(f"{user_file}: not valid TOML ({exc})") from None
        models.update({m.model_id: m for m in parse_model_entries(entries, str(user_file))})
    return models


def materialised_suite_tasks(paths) -> list[TaskMeta]:
    """Tasks of the suites materialised under `<store>/suites/<name>/manifest.csv` (known
    before any of their results exist); a manifest that cannot be read is skipped."""
    out: list[TaskMeta] = []
    if not paths.suites.is_dir():
        return out
    for manifest in sorted(paths.suites.glob("*/manifest.csv")):
        name = manifest.parent.name
        try:
            with open(manifest, newline="", encoding="utf-8-sig") as f:
                for r in csv.DictReader(f):
                    if r.get("task_id"):
                        out.append(TaskMeta(r["task_id"], r.get("label") or r["task_id"],
                                            r.get("category") or r["task_id"], name, name))
        except (OSError, UnicodeDecodeError, csv.Error):
            continue
    return out


def official_model_ids() -> frozenset[str]:
    """The benchmark authors' curated models (the only ones that may claim 'official')."""
    return frozenset(m.model_id for m in load_models().values() if m.provenance == "official")


def tasks_frame(tasks: list[TaskMeta] | tuple[TaskMeta, ...],
                data_hashes: Mapping[str, str] | None = None) -> pl.DataFrame:
    """The task catalog's rows; `data_hash` is the task's current data (`store.cells`), NULL
    where not known."""
    import polars as pl

    hashes = data_hashes or {}
    return pl.DataFrame([{**asdict(t), "data_hash": hashes.get(t.task_id)} for t in tasks],
                        schema={"task_id": pl.String, "label": pl.String, "category": pl.String,
                                "suite": pl.String, "source_benchmark": pl.String,
                                "data_hash": pl.String})


def models_frame(models: list[ModelMeta] | tuple[ModelMeta, ...]) -> pl.DataFrame:
    import polars as pl

    rows = [{**asdict(m), "scale_band": m.scale_band} for m in models]
    schema = {f.name: (pl.Int64 if f.name in ("params", "encoder_k", "max_tokens", "batch_size")
                       else pl.String) for f in fields(ModelMeta)}
    schema["scale_band"] = pl.String
    return pl.DataFrame(rows, schema=schema)


def _upsert(paths, name: str, new: pl.DataFrame, key: str, keep: tuple[str, ...] = ()) -> None:
    """Replace the rows of catalog `name` with the same key and keep the rest (columns in
    `keep` keep their stored value where the new one is NULL); read-modify-write under the
    catalog lock, written atomically."""
    import polars as pl
    import pyarrow.parquet as pq

    from store.atomic import write_atomic
    from store.failpoints import reach
    from store.locks import named_lock

    path = paths.catalog / f"{name}.parquet"
    with named_lock(paths, "catalog"):
        if path.exists():
            try:
                old = pl.from_arrow(pq.read_table(path))
            except Exception:   # a damaged catalog is rebuilt from what is registered now
                old = new.clear()
            if keep and set(keep) <= set(old.columns):
                stored = old.select(key, *keep)
                new = (new.join(stored, on=key, how="left", suffix="_stored")
                       .with_columns(pl.coalesce(c, f"{c}_stored").alias(c) for c in keep)
                       .drop(f"{c}_stored" for c in keep))
            new = pl.concat([old.filter(~pl.col(key).is_in(new[key].implode())), new],
                            how="diagonal_relaxed")
        write_atomic(path, lambda tmp: new.write_parquet(tmp))
        reach("catalog-written")


def register_tasks(paths, tasks, data_hashes: Mapping[str, str] | None = None) -> None:
    """Record tasks in `<store>/catalog/tasks.parquet` (what results refer to), with the hash of
    their current data where given (a task keeps its recorded hash otherwise)."""
    if tasks:
        _upsert(paths, "tasks", tasks_frame(list(tasks), data_hashes), "task_id",
                keep=("data_hash",))


def register_models(paths, models) -> None:
    """Record models in `<store>/catalog/models.parquet`."""
    if models:
        _upsert(paths, "models", models_frame(list(models)), "model_id")
