"""MkDocs hook: reference tables rendered from the code they describe.

A page asks for a table with a marker line, `<!-- geneb:NAME -->`, replaced at build time:

- `model-fields`: the fields of a registry entry (`store.catalog.ModelMeta`), with their type,
  the value an entry that leaves them out gets (`ModelMeta.one_off`) and the allowed values
  (`store.catalog.VOCABULARIES`);
- `encoder-kinds`: the encoder kinds an entry may name (`store.vocab.encoder_kinds.KINDS`);
- `protocols`: every name `fill --protocol` takes and what it stands for
  (`store.vocab.protocol.NAMED`), with each protocol's fields and hash;
- `result-columns`: the columns of a result row, its key and partitions (`store.tables.schema`);
- `recipes`: the recipe table, each official extractor's recipe beside our catalog entry's
  (`store.official.recipes`, from `store/catalogs/recipes.toml`);
- `devices`: the device table of `fill --dry-run --device-profile` and the MFU's peaks, each
  row's figure with its basis (`store.devices`, from `store/catalogs/devices.toml`).

What a field or column means is prose, kept here beside the code it explains; the build fails
when a field or column has no meaning or a meaning names none (so neither can drift), and when
a marker is unknown or never used.
"""

from __future__ import annotations

import json
import re
from dataclasses import fields

MARKER = re.compile(r"^<!-- geneb:([a-z-]+) -->$", re.MULTILINE)

MODEL_FIELDS = {
    "model_id": "the id in results and submission files (required)",
    "display": "display name",
    "params": "parameter count (official values for the 40)",
    "architecture": "the architecture as published, e.g. `T-enc`",
    "architecture_family": "its family, e.g. `Transformer encoder`",
    "tokenization": "the tokenization as published, e.g. `k-mer (6)`",
    "tokenization_family": "its family, e.g. `single-nucleotide`",
    "pretraining_data": "free text",
    "provenance": "where the entry's numbers come from",
    "hub_id": "where the weights are: a Hugging Face id (an `hf` entry needs `hub_id` or "
              "`path`)",
    "path": "where the weights are: a local directory, instead of a hub id",
    "revision": "the hub commit (remote code runs only at one: without it, `fill "
                "--trust-remote-code` pins the commit its branch names for the store); on the "
                "command line `--models <id>@<commit>` pins it too",
    "remote_code": "`no`; `required` (needs `--trust-remote-code`; it runs at a commit); "
                   "`custom` / `package` (code outside transformers)",
    "requires": "the PyPI package an adapter needs",
    "transformers": "the transformers versions the entry's code needs, a PEP 440 range, e.g. "
                    "`\"<5\"` for remote code written for transformers 4 (see *transformers 4 "
                    "and 5* in [Evaluate a model](../guide/evaluate.md#transformers-4-and-5)); "
                    "outside it `fill` refuses the model in one line (what is installed, what "
                    "the entry needs, what to install in a separate environment: `pip install "
                    "'transformers<5'`) and the dashboard says the same. Unset: any",
    "encoder": "`hf` (the generic encoder), `kmer`, `official-extractor` (a class written for "
               "the official harness, see [Run an extractor written for the official harness]"
               "(../guide/evaluate.md#run-an-extractor-written-for-the-official-harness)), "
               "`external` (weights not on the hub), or an adapter name (`evo`, `lucaone`, "
               "`splicebert`, `biofm`, `enformer`, `space`, `eccdnamamba`); see the encoder "
               "kinds below",
    "encoder_k": "k of a k-mer baseline",
    "pooling": "`mean` (masked mean over every non-pad token of the last hidden layer, special "
               "tokens included: the official recipe), `mean-with-padding` (an official mean "
               "that also averaged its batch's padding, taken at batch 1: the mean over every "
               "token of the unpadded sequence, see [Recipes](recipes.md)), `cls` (the first "
               "token); `tracks`, `trunk` for `encoder = \"enformer\"` only (see [The 40 "
               "official models](../guide/evaluate.md#the-40-official-models))",
    "padding_side": "`right` (encoders), `left` (decoders; position ids start at the first "
                    "real token), `none` (never pad: batch by exact token length, for models "
                    "without an attention mask). Default: by architecture",
    "max_tokens": "context cap in tokens (truncated sequences are counted and recorded); "
                  "default: the tokenizer's/model's limit",
    "batch_size": "starting batch size (halved automatically on out-of-memory); for an "
                  "official extractor, the `batch_size` it is called with",
    "special_tokens": "`hf` only: whether the tokenizer adds its special tokens ([CLS], "
                      "[SEP], BOS...); `false` where the official extractor passed "
                      "`add_special_tokens=False` (HyenaDNA, Caduceus, gpt2_gene)",
    "bos_text": "`hf` only: write the tokenizer's BOS token before the text, as the official "
                "GENERator extractor did (besides the tokenizer's own special tokens)",
    "cut_to_multiple": "`hf` only: cut the text's end to a multiple of this many letters "
                       "(GENERator's 6-mer tokenizer: 6); not counted as a truncation",
    "one_hot": "`hf` only: the model gets one-hot rows of the token ids over the tokenizer's "
               "vocabulary, zero at padding, instead of the ids (MutBERT's probabilistic "
               "input)",
    "notes": "what a user should know",
    "extractor": "`path/to/file.py:ClassName` of an official-harness extractor (relative to "
                 "the folder of the models.toml)",
    "extractor_args": "a table of its other keyword arguments (`name_model` and `device` are "
                      "the harness's own); kept as JSON",
    "pretraining_kingdoms": "the kingdoms its pretraining data span (`animals`, `plants`, "
                            "`fungi`, `protists`, `bacteria`, `archaea`, `viruses`); empty: "
                            "not established, and every task's domain is `unknown` "
                            "([Task and model domains](domains.md))",
    "pretraining_organisms": "the species of its pretraining data where they are a closed list "
                             "(human-only: `[\"Homo sapiens\"]`); empty: not a closed list",
    "domain_source": "where the two fields above come from (a paper or model card)",
    "zero_shot": "whether it was trained on benchmark data (the official `model_meta.json`'s "
                 "`zero_shot`); unset: unknown",
    "overlap": "known overlap of its pretraining data with the benchmark's tasks, in words",
    "context": "its documented maximum input, in tokens (`geneb-engine models` shows "
               "`max_tokens` where unset)",
    "commit": "the 40-hex hub commit the catalog records for the entry's `revision` (main "
              "when unset), read from `commit_source`; a record, not what a run loads: see "
              "[Hub commits and licences](#hub-commits-and-licences)",
    "commit_source": "the public record the `commit` was read from (a URL)",
    "commit_reason": "why a hub entry records no `commit` (what was checked)",
    "weights_licence": "the licence of its weights: an SPDX id where one applies, else the "
                       "licence's name, else `unknown`; `none` without weights",
    "code_licence": "the licence of the code that runs it (the hub repository's own code, a "
                    "package's, or transformers' Apache-2.0 where transformers implements it)",
    "licence_source": "where both licences were read (URLs), or what was checked when unknown",
    "random_init": "not an entry's field (an entry that sets it is refused): `fill "
                   "--random-init SEED` runs any entry with weights drawn from SEED",
}

RESULT_COLUMNS = {
    "model": "the model id",
    "task": "the task id",
    "regime": "`full`, `10shot` or `1shot`; `zeroshot` for a score that fits nothing (a "
              "variant task's cosine distance)",
    "seed": "the probe seed; NULL for imported seed means (the official formats carry no "
            "seeds)",
    "probe": "`logreg` or `mlp`; `ridge` or `cosine` for the other task kinds",
    "protocol": "the protocol's name",
    "protocol_hash": "what identifies the protocol (see [Probe protocols](protocols.md))",
    "mcc": "Matthews correlation coefficient on the test split (NULL on rows of the other task "
           "kinds)",
    "acc": "accuracy on the test split",
    "f1_macro": "macro-F1 on the test split",
    "n_train": "training rows the probe saw",
    "n_test": "test rows",
    "degenerate": "fewer than two predicted classes on the test split (NULL on rows of the other "
                  "task kinds)",
    "converged": "false when the solver hit max_iter (a ConvergenceWarning)",
    "n_iter": "solver iterations",
    "shared_fit": "true: one fit recorded for every seed (full regime, lbfgs)",
    "fit_seconds": "of the fit that produced it; shared-fit rows repeat the one fit's time",
    "source": "`local`, or the provenance of an imported reference",
    "data_revision": "the data revision (`<revision>+subsample<N>` for a subsampled run, "
                     "`geneb-mini-1` for geneb-mini)",
    "data_hash": "content hash of the task data; NULL for imported rows",
    "model_revision": "the model's revision (hub commit, file hash of an official extractor, "
                      "`checkpoint-sha256-<hex>` for a checkpoint folder (`folder-sha256-<hex>` "
                      "in rows written before the fingerprint), "
                      "`random-init-<SEED>-sha256-<hex>` for the random-init control); a "
                      "local row of another revision than the model's current one is stale "
                      "([Model revisions](../guide/store.md#model-revisions))",
    "compute_precision": "the row's variant: the precision the forward pass that made its "
                         "embeddings computed in (`float32`, `bfloat16`, `float16`, "
                         "`bfloat16-autocast`, `float16-autocast`; the k-mer baseline "
                         "`float32`); NULL where no forward pass of this engine made them (an "
                         "official extractor, imported embeddings, imported rows). Part of the "
                         "key: a run at another precision is its own cell, shown apart "
                         "([Precision](../guide/store.md#precision-is-identity))",
    "recipe_preset": "the row's variant, second member: how the records were batched "
                     "(`fill --preset`): NULL for `normalized` (the default; every row "
                     "written before the column), `reference@<batch size>` for the official "
                     "extractors' loop at that batch size; NULL for the kinds without a "
                     "forward pass of this engine and for imported rows. Part of the key: "
                     "rows of two presets (or two batch sizes) are their own cells, shown "
                     "apart ([Recipes](recipes.md#two-presets))",
    "context_policy": "the row's variant, third member: what of each sequence the model saw "
                      "(`fill --context`, `--context-length`): NULL for the default (cut to the "
                      "model's own limit on its own side; every row written before the "
                      "column), `crop-<side>-<N>` or `windows-<W>-<S>` otherwise; a data file "
                      "of default rows only is written without it. Part of the key: rows of two "
                      "policies are their own cells, shown apart "
                      "([Long range](../guide/long-range.md))",
    "storage_precision": "the row's variant, fourth member: how its embeddings were stored "
                         "(`fill --storage-precision`): NULL for float32 (the default; every "
                         "row written before the column), `float16` or `bfloat16`. Part of the "
                         "key: rows of two storage precisions are their own cells, shown apart "
                         "([Sizes, half precision, pruning]"
                         "(../guide/store.md#sizes-half-precision-pruning))",
    "engine_version": "the engine's version; an imported file's `harness_version`",
    "created_at": "when the row was written (UTC); the latest wins among rows of one key",
    "kind": "the task kind ([Regression and variant-effect tasks](../guide/task-kinds.md)): "
            "`regression` or `variant`; NULL for classification, whose rows' data files are "
            "written without this column and the five below",
    "pearson": "Pearson r of a regression task's test predictions and targets (its primary "
               "metric)",
    "spearman": "Spearman rho of a regression task's test predictions and targets",
    "r2": "R² (coefficient of determination) of a regression task's test predictions",
    "auroc": "area under the ROC curve of a variant task's test scores (its primary metric)",
    "auprc": "average precision of a variant task's test scores",
}


def _check(meanings: dict[str, str], names: list[str], what: str) -> None:
    from mkdocs.exceptions import PluginError

    if missing := [n for n in names if n not in meanings]:
        raise PluginError(f"docs/hooks/code_reference.py: no meaning for {what} {missing}")
    if extra := [n for n in meanings if n not in names]:
        raise PluginError(f"docs/hooks/code_reference.py: {what} {extra} no longer exist")


def _code(value) -> str:
    return "" if value is None else f"`{value}`"


def model_fields() -> str:
    from store.catalog import VOCABULARIES, ModelMeta

    names = [f.name for f in fields(ModelMeta)]
    _check(MODEL_FIELDS, names, "ModelMeta fields")
    unset = ModelMeta.one_off("<model_id>")
    rows = ["| field | type | left out | allowed values | meaning |", "|---|---|---|---|---|"]
    for f in fields(ModelMeta):
        default = getattr(unset, f.name)
        shown = ("required" if f.name == "model_id" else "the model_id"
                 if default == "<model_id>" else _code(default) or "unset")
        allowed = ", ".join(f"`{v}`" for v in VOCABULARIES.get(f.name, ()))
        rows.append(f"| `{f.name}` | `{f.type}` | {shown} | {allowed} | "
                    f"{MODEL_FIELDS[f.name]} |")
    return "\n".join(rows)


def encoder_kinds() -> str:
    from store.vocab.encoder_kinds import KINDS

    rows = ["| `encoder` | what | poolings (default first) | needs | what it gets | "
            "runs here |", "|---|---|---|---|---|---|"]
    for kind in KINDS.values():
        needs = ", ".join([*(f"`{f}`" for f in kind.fields),
                           *(["`hub_id` or `path`"] if kind.source else []),
                           *(f"`{p}`" for p in kind.packages)])
        runs = {"": "yes", "unpublished": "no: no published weights (an `hf` entry with "
                "`path` runs a local copy)", "no-adapter": f"no adapter: {kind.recipe}"}
        rows.append(f"| `{kind.name}` | {kind.label or ''} | "
                    f"{', '.join(f'`{p}`' for p in kind.poolings)} | {needs} | "
                    f"`{kind.sequences}` | {runs[kind.unavailable]} |")
    return "\n".join(rows)


def protocols() -> str:
    from store.vocab.protocol import NAMED, Protocol

    columns = [f.name for f in fields(Protocol) if f.name not in ("name", "seeds")]
    groups: dict[str, list[str]] = {}     # protocol -> the group names that include it
    for name, members in NAMED.items():
        for p in members:
            groups.setdefault(p.name, [])
            if name != p.name:
                groups[p.name].append(name)
    by_name = {p.name: p for members in NAMED.values() for p in members}
    rows = ["| `--protocol` | in the group | " + " | ".join(columns) + " | seeds | hash |",
            "|---" * (len(columns) + 4) + "|"]
    for name, in_groups in groups.items():
        p = by_name[name]
        values = " | ".join(_code(getattr(p, c)) for c in columns)
        rows.append(f"| `{name}` | {', '.join(f'`{g}`' for g in in_groups)} | {values} | "
                    f"{', '.join(map(str, p.seeds))} | `{p.hash}` |")
    return "\n".join(rows)


def kind_protocols() -> str:
    from store.vocab.protocol import KIND_PROTOCOLS, OPT_IN, Protocol

    columns = [f.name for f in fields(Protocol) if f.name not in ("name", "seeds")]
    rows = ["| protocol | " + " | ".join(columns) + " | seeds | hash |",
            "|---" * (len(columns) + 3) + "|"]
    for group in (*KIND_PROTOCOLS.values(), OPT_IN):
        for p in group:
            values = " | ".join(_code(getattr(p, c)) for c in columns)
            rows.append(f"| `{p.name}` | {values} | {', '.join(map(str, p.seeds))} | "
                        f"`{p.hash}` |")
    return "\n".join(rows)


def result_columns() -> str:
    from store.tables.schema import KEY, PARTITIONS, RESULT_SCHEMA

    _check(RESULT_COLUMNS, list(RESULT_SCHEMA.names), "result columns")
    rows = ["| column | type | meaning |", "|---|---|---|"]
    rows += [f"| `{f.name}` | `{f.type}` | {RESULT_COLUMNS[f.name]} |" for f in RESULT_SCHEMA]
    return "\n".join([
        *rows, "",
        "Key (a row is identified by these; the latest `created_at` wins): "
        + ", ".join(f"`{k}`" for k in KEY) + ".",
        "",
        "Partitions (one folder per value): " + ", ".join(f"`{p}`" for p in PARTITIONS) + ".",
    ])


def recipes() -> str:
    from store.official.recipes import PRESET_DIFFERENCES, RESOLUTIONS, Reference, recipe_table

    table = recipe_table()
    rows = ["| model | official extractor | loads | tokenizer | batch | pooling | dtype | ours | "
            "resolution |", "|---" * 9 + "|"]
    presets = ["| model | `--preset normalized` | `--preset reference` (the official loop) | "
               "can they differ? |", "|---" * 4 + "|"]
    notes = []
    for r in table.recipes:
        link = (f"[`{r.extractor.rsplit('/', 1)[-1]}` @ `{r.commit[:7]}`](https://github.com/"
                f"{table.repository}/blob/{r.commit}/{r.extractor})")
        ours = ", ".join(f"`{k} = {json.dumps(v)}`" for k, v in r.ours.items())
        rows.append(f"| `{r.model_id}` | {link} | {r.loading} | {r.tokenizer} | {r.batch} | "
                    f"{r.pooling} | {r.dtype} | {ours or 'the defaults'} | {r.resolution} |")
        reference = _reference(Reference(**r.reference))
        presets.append(f"| `{r.model_id}` | {_normalized(r)} | {reference} | "
                       f"**{PRESET_DIFFERENCES[r.presets]}**: {r.presets_why} |")
        if r.difference:
            notes.append(f"- **`{r.model_id}`** ({RESOLUTIONS[r.resolution]}): "
                         f"{r.difference}. {r.note}")
    return "\n".join([*rows, "", "### The differences found", "", *notes, "",
                      "### Both presets, model by model", "", *presets])


def _normalized(recipe) -> str:
    """How `--preset normalized` batches a model of the recipe table."""
    ours = recipe.our_recipe()
    if recipe.presets == "not-run":
        return "not run"
    if ours["pooling"] == "mean-with-padding" or ours["padding_side"] == "none":
        return "batches of one length, never padded (the batch-1 value)"
    return "length-sorted batches, the padding masked out"


def _reference(ref) -> str:
    """How `--preset reference` batches a model: its `store.official.recipes.Reference`."""
    side = ("the tokenizer's side" if ref.padding_side == "tokenizer"
            else f"the {ref.padding_side}")
    mask = "the mask passed" if ref.mask else "no mask (the ids only)"
    size = f"batch {ref.batch_size}" + (" only" if ref.fixed else " by default")
    return f"file order, {size}, padded on {side}, {mask}"


def devices() -> str:
    from store.devices import BASES, device_profiles

    rows = ["| `--device-profile` | device | CUDA name contains | 16-bit peak, TFLOP/s | "
            "utilisation | basis | what it rests on |", "|---" * 7 + "|"]
    for p in device_profiles().values():
        rows.append(f"| `{p.name}` | {p.label} | `{p.match}` | {p.peak_tflops:g} | "
                    f"{p.utilisation * 100:.1f} % | {p.basis}: {BASES[p.basis]} | peak: "
                    f"{p.peak_source}; utilisation: {p.utilisation_source} |")
    return "\n".join(rows)


TABLES = {"model-fields": model_fields, "encoder-kinds": encoder_kinds,
          "protocols": protocols, "kind-protocols": kind_protocols,
          "result-columns": result_columns, "recipes": recipes,
          "devices": devices}
_used: set[str] = set()


def on_pre_build(config):
    _used.clear()


def on_page_markdown(markdown, page, config, files):
    from mkdocs.exceptions import PluginError

    def table(match: re.Match) -> str:
        name = match[1]
        if name not in TABLES:
            raise PluginError(f"{page.file.src_uri}: unknown table marker '{name}' (known: "
                              f"{', '.join(TABLES)})")
        _used.add(name)
        return TABLES[name]()

    return MARKER.sub(table, markdown)


def on_env(env, config, files):
    from mkdocs.exceptions import PluginError

    if unused := set(TABLES) - _used:
        raise PluginError(f"no page shows the generated table(s) {sorted(unused)}")
    return env
