"""Where a model's checkpoint is, and whether this run may ask the Hugging Face hub for it.

The one rule of offline and cluster-friendly loading, used by every loader (the generic encoder,
its remote-code check, the Enformer adapter, the official-extractor runner):

- a local directory loads from itself;
- a hub id pinned to a commit whose snapshot is in the local Hugging Face cache (huggingface_hub's
  layout, `HF_HUB_CACHE` / `HF_HOME`: `models--org--name/snapshots/<commit>/`) loads from that
  snapshot without asking the hub;
- any other hub id asks the hub when this run may (`hub_problem`), else loads the snapshot its
  revision names in the cache (`refs/<branch or tag>`, `main` when none is given);
- neither cached nor askable: one line naming the model, the cache folder and the command that
  fetches it on a connected machine (`geneb-engine fetch-models ID`), at once.

Which commit a branch names (`resolve_commit`, for remote code run at a commit:
`engine.encoders.pins`) follows the same rule: the hub when the run may ask it, else the cached
snapshot's ref.

A snapshot counts as cached when every file its fetch manifest lists is there (written by
`geneb-engine fetch-models` beside the snapshot, `<repo folder>/geneb-fetched/<commit>.json`, so
it travels with a copied cache), or, without a manifest, when it holds a config.json and weights
(every shard an index names): the rules of `store.hf_cache`, which the dashboard reads too.
Whether the hub may be asked is decided once per process: not with HF_HUB_OFFLINE, else one
HEAD request to huggingface_hub's endpoint (HF_ENDPOINT) that must answer within
REACH_TIMEOUT_S, its answer recorded for the dashboard's "runs here" (`store.hf_cache.
record_reach`); a hub that may not be asked switches huggingface_hub's offline mode on for the
rest of the process and its children, so that later hub calls (transformers', an extractor's
own) read the cache at once instead of retrying for tens of seconds.
"""

from __future__ import annotations

import json
import os
import re
import threading
from functools import cache
from pathlib import Path

from store import hf_cache
from store.atomic import write_text_atomic
from store.fingerprint import checkpoint_fingerprint
from store.hf_cache import manifest_path
from store.vocab.errors import GenebError
from store.vocab.revisions import commit_of, is_pinned

REACH_TIMEOUT_S = 2.0              # the one reachability request of a run
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def is_hub_id(source: str) -> bool:
    """`org/name`, as the hub spells repository ids (what is not a folder may be one)."""
    return bool(_HUB_ID.match(source))


def cache_folder() -> Path:
    """huggingface_hub's model cache (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/...)."""
    try:
        from huggingface_hub import constants  # lazy: huggingface_hub
    except ImportError:
        raise GenebError("the Hugging Face cache is read through huggingface_hub, which is not "
                         "installed; pip install 'geneb[models]'") from None
    return Path(constants.HF_HUB_CACHE)


def snapshot_folder(repo_id: str, revision: str | None) -> Path | None:
    """The cache's snapshot folder of `repo_id` at `revision` (`store.hf_cache.
    snapshot_folder` in huggingface_hub's cache folder), whatever it holds; None when absent."""
    return hf_cache.snapshot_folder(cache_folder(), repo_id, revision)


def write_manifest(snapshot: Path, about: dict) -> dict:
    """Record `about` and every file of the snapshot (sha256 and size) in its fetch manifest;
    returns what was written."""
    from engine.hub_data import sha256_file  # lazy: numpy

    files = {p.relative_to(snapshot).as_posix(): {"sha256": sha256_file(p),
                                                 "bytes": p.stat().st_size}
             for p in sorted(snapshot.rglob("*")) if p.is_file()}
    manifest = {**about, "commit": snapshot.name, "files": files}
    write_text_atomic(manifest_path(snapshot), json.dumps(manifest, indent=1))
    return manifest


def cached_snapshot(repo_id: str, revision: str | None) -> Path | None:
    """The snapshot of `repo_id` at `revision` when the cache holds it whole, else None."""
    return hf_cache.whole_snapshot(cache_folder(), repo_id, revision)


def local_checkpoint(source: str, revision: str | None) -> Path | None:
    """The folder `source` at `revision` loads from without the hub: a local directory, else
    the whole cached snapshot of the hub id; None when neither."""
    return _directory(source) or cached_snapshot(source, revision)


def checkpoint_revision(source: str, revision: str | None) -> str | None:
    """The revision results record for the checkpoint `source` at `revision`: a local folder's
    is the sha256 of its files that define the model (`store.fingerprint`: re-saved weights, an
    edited config, tokenizer or code are another revision; a README or a log is not), a hub
    id's the revision it names (None: none)."""
    folder = _directory(source)
    return revision if folder is None else checkpoint_fingerprint(folder)


def _directory(source: str) -> Path | None:
    try:
        folder = Path(source).expanduser()
        return folder if folder.is_dir() else None
    except (OSError, RuntimeError, ValueError):    # `~user` of no known user, a NUL byte
        return None


def pinned_snapshot(repo_id: str, revision: str | None) -> Path | None:
    """The cached snapshot read without asking the hub whatever the run decides: that of a
    revision pinned to a commit (a branch may have moved on the hub), else None."""
    return cached_snapshot(repo_id, revision) if is_pinned(revision) else None


def read_without_hub(source: str, revision: str | None) -> Path | None:
    """The folder `source` at `revision` is read from whatever the run decides (a local
    directory, the cached snapshot of a pinned revision); None: the decision says where."""
    return _directory(source) or pinned_snapshot(source, revision)


def decide_hub(source: str, revision: str | None) -> None:
    """Make the run's decision (`hub_problem`) before anything reads the files of hub id
    `source` at `revision`, unless they are read without the hub (`read_without_hub`): a hub
    that may not be asked then puts the process offline, so that a first read through
    huggingface_hub (the remote-code check's) takes the cache at once."""
    if is_hub_id(source) and read_without_hub(source, revision) is None:
        hub_problem()


@cache
def hub_problem() -> str | None:
    """Why this run may not ask the Hugging Face hub (HF_HUB_OFFLINE, or no answer from its
    endpoint), or None when it may; decided once per process (see the module)."""
    from huggingface_hub import constants  # lazy: huggingface_hub

    if constants.HF_HUB_OFFLINE:
        return "HF_HUB_OFFLINE is set"
    problem = _ask(constants.ENDPOINT)
    hf_cache.record_reach(constants.ENDPOINT, problem)
    if problem is not None:        # every later hub call of this process reads the cache
        os.environ["HF_HUB_OFFLINE"] = "1"
        constants.HF_HUB_OFFLINE = True
    return problem


def _ask(endpoint: str) -> str | None:
    """None when `endpoint` answers a HEAD request (status below 500) within REACH_TIMEOUT_S,
    DNS included (the request runs in a thread given that long), else what went wrong."""
    answer: list = []

    def request() -> None:
        from huggingface_hub.utils import get_session  # lazy: huggingface_hub

        try:
            answer.append(get_session().head(endpoint, timeout=REACH_TIMEOUT_S).status_code)
        except Exception as exc:     # httpx / requests: refused, no route, DNS, TLS...
            answer.append(exc)

    thread = threading.Thread(target=request, name="geneb-hub-reachable", daemon=True)
    thread.start()
    thread.join(REACH_TIMEOUT_S)
    where = f"the hub at {endpoint}"
    if not answer:
        return f"{where} did not answer within {REACH_TIMEOUT_S:g} s"
    if isinstance(answer[0], Exception):
        return f"{where} cannot be reached ({type(answer[0]).__name__})"
    if answer[0] >= 500:
        return f"{where} answered HTTP {answer[0]}"
    return None


def resolve_commit(model_id: str, repo_id: str, branch: str) -> tuple[str, str]:
    """The commit the branch (or tag) `branch` of hub id `repo_id` names now, and where that
    was read: from the hub when this run may ask it (`hub_problem`), else from the ref of its
    cached snapshot (`refs/<branch>`); one line when neither tells."""
    problem = hub_problem()
    if problem is None:
        from huggingface_hub import HfApi  # lazy: huggingface_hub

        try:
            sha = HfApi().model_info(repo_id, revision=branch).sha
        except Exception as exc:    # not found, gated, no such branch, the connection lost
            first = (str(exc).strip().splitlines() or [""])[0]
            raise GenebError(f"model {model_id}: the hub cannot tell which commit {branch} of "
                             f"{repo_id} is ({type(exc).__name__}: {first}); name the commit "
                             f"with --models {model_id}@<commit>") from None
        if (commit := commit_of(sha)) is None:
            raise GenebError(f"model {model_id}: the hub names no commit for {branch} of "
                             f"{repo_id} (it answered {sha!r}); name the commit with --models "
                             f"{model_id}@<commit>")
        return commit, "the hub"
    if (folder := snapshot_folder(repo_id, branch)) is not None:
        return folder.name, f"the Hugging Face cache {cache_folder()}"
    raise GenebError(
        f"model {model_id}: its code runs only at a commit, and which commit {branch} of "
        f"{repo_id} is cannot be told here: {problem} and the Hugging Face cache "
        f"{cache_folder()} holds no snapshot of it; run `geneb-engine fetch-models {model_id}` "
        "on a machine that reaches the hub (it pins the commit it fetches) and copy its cache "
        f"here, or name the commit with --models {model_id}@<commit>")


def checkpoint(model_id: str, source: str, revision: str | None, *,
               what: str = "") -> Path | None:
    """The folder `source` at `revision` loads from, or None: from the hub (it may be asked);
    raises the one line of a model neither cached nor askable (see the module), or of a
    source that is neither a folder nor a hub id. `what` names it in them (e.g. "the
    enformer-pytorch checkpoint ")."""
    if (folder := read_without_hub(source, revision)) is not None:
        return folder
    if not is_hub_id(source):
        raise GenebError(f"model {model_id}: cannot load {what}{source}: it is neither a folder "
                         "nor a Hugging Face hub id (org/name)")
    problem = hub_problem()
    if problem is None:
        return None
    if (folder := cached_snapshot(source, revision)) is not None:
        return folder
    spec = f"{model_id}@{revision}" if revision else model_id
    at = f" at revision {revision}" if revision else ""
    raise GenebError(
        f"model {model_id}: {what}{source}{at} is not in the Hugging Face cache "
        f"{cache_folder()} and {problem}; on a machine that reaches the hub run "
        f"`geneb-engine fetch-models {spec}`, "
        "then copy its Hugging Face cache here (or point HF_HUB_CACHE at the copy)")
