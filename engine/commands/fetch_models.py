"""`geneb-engine fetch-models ID [ID ...]`: models' hub checkpoints into the local Hugging Face
cache, on a connected machine, for nodes that cannot reach the hub.

Every name is resolved first, as `fill --models` resolves it (a catalog id, `ID@<commit>`, a hub
id; an unknown name is the did-you-mean line and nothing is fetched). Then the hub is asked once
whether it answers (`engine.encoders.hub.hub_problem`) and for each model's file list at its
revision (the commit the entry or `ID@<commit>` names, else the store's pin of its branch,
`store.pins`, else the branch: main when none): a repository, revision or access the hub
refuses is one line before anything is downloaded. Each snapshot is then downloaded with
`huggingface_hub.snapshot_download` into huggingface_hub's cache (HF_HUB_CACHE / HF_HOME; an
interrupted download resumes from the files it finished), without the weights of other
frameworks (`SKIPPED`; `pytorch_model*.bin` too where the repository has safetensors, which
transformers loads first), and the sha256 and size of every file go into the snapshot's fetch
manifest (`engine.encoders.hub.write_manifest`, beside the snapshot, so a copied cache carries
it). A model that runs code from its hub repository (`engine.encoders.pins.runs_hub_code`)
fetched at a branch gets the commit fetched pinned for the store, as `fill --trust-remote-code`
pins it: a later run, offline included, runs exactly the code fetched. One line per model; a
model without hub weights (a local `path`, no `hub_id`) says there is nothing to fetch.
"""

from __future__ import annotations

from pathlib import Path

from engine.commands.common import console, emit_json, models_of, store_of
from engine.encoders.hub import cache_folder, hub_problem, manifest_path, write_manifest
from engine.encoders.pins import now, runs_hub_code
from store.catalog import ModelMeta
from store.paths import StorePaths
from store.pins import Pin, branch_of, pinned, read_pins, record_pins
from store.vocab.errors import GenebError
from store.vocab.revisions import is_pinned

# Weights of other frameworks, never loaded here (TensorFlow, Flax, ONNX, Rust, TFLite, GGUF).
SKIPPED: tuple[str, ...] = ("*.h5", "*.msgpack", "*.onnx", "*.onnx_data", "*.ot", "*.tflite",
                            "*.gguf")


def register(sub, common) -> None:
    p = sub.add_parser("fetch-models", parents=[common],
                       help="download models' weights and tokenizers into the Hugging Face "
                            "cache (for nodes without the hub)")
    p.add_argument("models", nargs="+", metavar="ID",
                   help="catalog ids (ID@<commit> pins a revision) or hub ids (org/name)")
    p.set_defaults(handler=run)


def skipped(files: list[str]) -> list[str]:
    """The patterns a snapshot of a repository holding `files` leaves out."""
    if any(f.endswith(".safetensors") for f in files):
        return [*SKIPPED, "pytorch_model*.bin"]
    return list(SKIPPED)


def _label(m: ModelMeta) -> str:
    return f"{m.hub_id}@{m.revision}" if m.revision else m.hub_id


def _files(m: ModelMeta) -> list[str]:
    """The repository's files at the model's revision; the hub's refusal is one GenebError."""
    from huggingface_hub import list_repo_files  # lazy: huggingface_hub

    try:
        return list_repo_files(m.hub_id, revision=m.revision)
    except Exception as exc:    # not found, gated, a revision it lacks, the connection lost
        first = (str(exc).strip().splitlines() or [""])[0]
        raise GenebError(f"model {m.model_id}: the hub cannot list {_label(m)} "
                         f"({type(exc).__name__}: {first}); nothing was fetched") from None


def fetch(paths: StorePaths, m: ModelMeta, files: list[str]) -> dict:
    """Download (or resume) the model's snapshot and record its checksums, and pin the commit
    fetched for a model that runs hub code at a branch (`store.pins`): what one line says."""
    from huggingface_hub import snapshot_download  # lazy: huggingface_hub

    try:
        folder = Path(snapshot_download(m.hub_id, revision=m.revision,
                                        ignore_patterns=skipped(files)))
    except Exception as exc:    # the connection lost, the disk full...
        first = (str(exc).strip().splitlines() or [""])[0]
        raise GenebError(f"model {m.model_id}: the download of {_label(m)} stopped "
                         f"({type(exc).__name__}: {first}); run the same command again to "
                         "resume it") from None
    manifest = write_manifest(folder, {
        "model_id": m.model_id, "hub_id": m.hub_id, "revision": m.revision,
        "fetched_at": now()})
    pin = None
    if not is_pinned(m.revision) and runs_hub_code(m, folder):
        pin = Pin(m.hub_id, branch_of(m.revision), manifest["commit"],
                  f"{now()} by fetch-models, the commit it fetched")
        record_pins(paths, [pin])
    return {"model_id": m.model_id, "hub_id": m.hub_id, "revision": m.revision,
            "commit": manifest["commit"], "catalog_commit": m.commit,
            "catalog_match": None if m.commit is None else manifest["commit"] == m.commit,
            "pinned": str(paths.pins) if pin else None,
            "snapshot": str(folder),
            "n_files": len(manifest["files"]),
            "bytes": sum(f["bytes"] for f in manifest["files"].values()),
            "manifest": str(manifest_path(folder))}


def _catalog_line(m: ModelMeta, fetched: str) -> str:
    """How the commit fetched compares with the one the catalog records for the model (its
    `commit`, read from `commit_source`); '' when the catalog records none."""
    if m.commit is None:
        return ""
    if fetched == m.commit:
        return "; the commit the catalog records"
    return (f"; not the commit the catalog records ({m.commit}, read from {m.commit_source}): "
            f"{m.revision or 'main'} names another now, so its results may differ from the "
            f"catalog's; `--models {m.model_id}@{m.commit}` runs the catalog's")


def run(args) -> int:
    paths = store_of(args, write=True)
    pins = read_pins(paths)
    models = list({(m.model_id, m.revision): m
                   for m in (pinned(m, pins) for m in models_of(paths, args.models))}.values())
    hub = [m for m in models if m.hub_id and not m.path]
    if hub and (problem := hub_problem()):
        raise GenebError(f"cannot fetch {', '.join(m.model_id for m in hub)}: {problem}; run "
                         "fetch-models on a machine that reaches the hub, then copy its "
                         f"Hugging Face cache to {cache_folder()} here (or point HF_HUB_CACHE "
                         "at the copy)")
    plans = [(m, _files(m) if m in hub else None) for m in models]
    done = []
    for m, files in plans:
        if files is None:
            why = f"it loads from {m.path}" if m.path else "its entry names no hub_id"
            done.append({"model_id": m.model_id, "nothing_to_fetch": why})
            line = f"{m.model_id}: nothing to fetch ({why})"
        else:
            done.append(d := fetch(paths, m, files))
            line = (f"{m.model_id}: {m.hub_id}@{d['commit'][:12]}, {d['n_files']} files "
                    f"({d['bytes'] / 1e6:,.1f} MB) in {d['snapshot']}; sha256 in "
                    f"{d['manifest']}")
            line += _catalog_line(m, d["commit"])
            if d["pinned"]:
                line += (f"; its code's commit {d['commit']} pinned in {d['pinned']} (it runs "
                         "with fill --trust-remote-code)")
        if not args.json:
            console.print(line, markup=False, highlight=False)
    if args.json:
        emit_json(done)
    return 0
