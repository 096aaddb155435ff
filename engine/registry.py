"""What `--models` names: a catalog id, a Hugging Face hub id or a local checkpoint directory.

- a catalog id (built-in or the user's `<store>/models.toml`) → that entry; `<id>@<commit>`
  pins its revision (what `--trust-remote-code` needs; refused for an official extractor, whose
  revision is its file's hash);
- a hub id `org/name` (optionally `org/name@<commit>`) → the catalog entry with that hub id, else
  a one-off entry with the generic encoder;
- an existing directory with a `config.json` → a one-off entry for that local checkpoint
  (architecture family and parameter count read from its files when they say), under the id
  `PATH_MODEL_ID` says (`path_model_id`); `fill` records it in the store's model catalog, and
  from then on the id names it (`store.tables.catalogs.path_models`, part of the `catalog` given);
- anything else → one error listing the closest ids.

No network and no torch here: resolution only reads local files.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import replace
from pathlib import Path

from engine.encoders import code_reference
from engine.encoders.checkpoint_checks import safetensors_header
from store.catalog import ModelMeta
from store.folders import named_folder
from store.vocab.errors import GenebError
from store.vocab.ids import check_id, check_name

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(@[\w./-]+)?$")

# model_type (config.json) → architecture family, for one-off models.
_FAMILIES: dict[str, str] = {
    **dict.fromkeys(("bert", "roberta", "esm", "distilbert", "electra", "deberta", "deberta-v2",
                     "modernbert", "nomic_bert", "albert", "xlm-roberta"),
                    "Transformer encoder"),
    **dict.fromkeys(("gpt2", "gpt_neox", "llama", "mistral", "mixtral", "qwen2", "qwen3", "olmo",
                     "olmo2", "gemma", "gemma2", "phi", "phi3", "gptj", "opt", "bloom", "falcon"),
                    "Transformer decoder"),
    **dict.fromkeys(("mamba", "mamba2", "falcon_mamba", "caduceus"), "Mamba"),
    "hyenadna": "Hyena",
    "stripedhyena": "StripedHyena",
}
PATH_MODEL_ID = ("a checkpoint folder's model id is the folder's name, or <parent folder>-<folder> "
                 "when another model has that id; the store remembers the folder, so `--models "
                 "ID` names it afterwards")
CHECKPOINT_FOLDER = ("a checkpoint is the folder save_pretrained writes (config.json, the weights, "
                     "the tokenizer); --models also takes catalog ids and hub ids (org/name)")
_ARCH_ABBREV = {"Transformer encoder": "T-enc", "Transformer decoder": "T-dec"}
_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
                "U8": 1, "BOOL": 1}


def resolve_model(spec: str, catalog: dict[str, ModelMeta]) -> ModelMeta:
    """The catalog entry or one-off entry `spec` names (see the module docstring)."""
    spec = check_name("model", spec.strip(), "--models",
                      fix="give a catalog id, a hub id (org/name) or a checkpoint directory")
    if spec in catalog:
        return catalog[spec]
    base, at, rev = spec.rpartition("@")
    if at and base in catalog and rev:          # `<catalog id>@<commit>` pins a revision
        if catalog[base].encoder == "official-extractor":
            raise GenebError(f"--models {spec}: the revision of {base} is the hash of its "
                             "extractor file, taken at each run; name it without @")
        return _replace(catalog[base], revision=rev)
    folded = {k.casefold(): m for k, m in catalog.items()}
    if spec.casefold() in folded:
        return folded[spec.casefold()]
    try:
        path = Path(spec).expanduser()
    except RuntimeError:                        # `~user` of no known user
        path = Path(spec)
    if path.is_dir():
        return local_model(path, catalog)
    if _HUB_ID.match(spec) and not path.exists():
        hub_id, _, revision = spec.partition("@")
        for m in catalog.values():
            if m.hub_id and m.hub_id.casefold() == hub_id.casefold():
                return m if not revision else _replace(m, revision=revision)
        return ModelMeta.one_off(
            check_id("model", hub_id, "--models"), display=hub_id.split("/", 1)[1],
            hub_id=hub_id, revision=revision or None, notes="one-off run from a hub id")
    if path.exists() or "/" in spec or spec.startswith((".", "~")):    # a path, not a name
        named_folder("--models", spec, CHECKPOINT_FOLDER)
    names = list(catalog) + [m.display for m in catalog.values()]
    close = difflib.get_close_matches(spec, names, n=5, cutoff=0.5)
    close_ids = list(dict.fromkeys(
        next((k for k, m in catalog.items() if n in (k, m.display)), n) for n in close))
    hint = f" (did you mean {', '.join(close_ids)}?)" if close_ids else ""
    raise GenebError(f"unknown model {spec!r}{hint}; `geneb-engine models` lists the catalog; "
                     "a hub id (org/name) or a local checkpoint folder also works")


def local_model(path: Path, catalog: dict[str, ModelMeta] | None = None) -> ModelMeta:
    """A one-off entry for a local Hugging Face checkpoint directory."""
    path = path.expanduser().resolve()
    config_file = path / "config.json"
    if not config_file.is_file():
        raise GenebError(f"{path}: not a Hugging Face checkpoint (no config.json); give a "
                         "directory written by save_pretrained, a hub id or a catalog id")
    try:
        config = json.loads(config_file.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise GenebError(f"{config_file}: not valid JSON ({exc})") from None
    model_type = str(config.get("model_type") or "unknown")
    family = _FAMILIES.get(model_type, "Other")
    model_id = path_model_id(path, catalog or {})
    return ModelMeta.one_off(
        model_id, display=path.name, params=count_params(path),
        architecture=_ARCH_ABBREV.get(family, model_type), architecture_family=family,
        path=str(path), remote_code="required" if code_reference(str(path)) else "no",
        notes="one-off run from a local checkpoint")


def path_model_id(path: Path, catalog: dict[str, ModelMeta]) -> str:
    """The model id of the checkpoint folder `path` (absolute), by `PATH_MODEL_ID`: its name,
    else `<parent>-<name>` when `catalog` (the store's models, `store.tables.catalogs.store_models`)
    gives that name to another model; the store records it at the first run, so that
    `--models ID` names the folder afterwards."""
    def taken(model_id: str) -> bool:
        return model_id in catalog and catalog[model_id].path != str(path)

    fix = ("give the checkpoint an entry of its own in <store>/models.toml (model_id, path), "
           f"or move it into a folder with another name ({PATH_MODEL_ID})")
    model_id = path.name
    if taken(model_id):
        model_id = f"{path.parent.name}-{path.name}"
        if taken(model_id):
            raise GenebError(f"{path}: its model id would be {path.name} or {model_id}, and "
                             f"other models have both; {fix}")
    return check_id("model", model_id, str(path), fix=fix)


def count_params(path: Path) -> int:
    """Parameters in the checkpoint's safetensors files (0 when it has none)."""
    total = 0
    for file in sorted(path.glob("*.safetensors")):
        try:
            _, header = safetensors_header(file)
        except (OSError, ValueError):
            return 0
        for name, info in header.items():
            if name != "__metadata__" and isinstance(info, dict):
                n = 1
                for d in info.get("shape", []):
                    n *= int(d)
                total += n
    return total


def _replace(m: ModelMeta, **changes) -> ModelMeta:
    return replace(m, **changes)
