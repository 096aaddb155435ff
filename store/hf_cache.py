"""The local Hugging Face cache and the hub's reachability, as far as they can be told without
huggingface_hub and without a network call: what the dashboard and `geneb-engine recommend`
say of a hub model ("runs here"), and the rules the engine's loaders read the cache by
(`engine.encoders.hub`, which passes huggingface_hub's own cache folder).

- The cache folder: huggingface_hub's rule, read from the environment (`HF_HUB_CACHE`, else
  `HUGGINGFACE_HUB_CACHE`, else `HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else
  `~/.cache/huggingface/hub`); a model's snapshots in `models--org--name/snapshots/<commit>/`,
  a branch or tag naming its commit in `refs/<name>`.
- A snapshot is whole when every file its fetch manifest lists is there at its size (the
  manifest `geneb-engine fetch-models` writes beside it, `<repo folder>/geneb-fetched/
  <commit>.json`), or, without one, when it holds a config.json and weights (every shard an
  index names).
- The hub: offline when `HF_HUB_OFFLINE` (or `TRANSFORMERS_OFFLINE`) is true, as
  huggingface_hub reads them. Otherwise what the engine last found when it asked the endpoint
  (`HF_ENDPOINT`, default https://huggingface.co) — every engine run that needs the hub asks
  it once and records the answer here (`record_reach`, in the user cache folder) — while that
  answer is younger than REACH_FRESH_S; else not known.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from store.atomic import write_text_atomic
from store.paths import user_cache_dir
from store.vocab.revisions import commit_of

MANIFEST_DIR = "geneb-fetched"     # <repo folder>/geneb-fetched/<commit>.json
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt")
DEFAULT_ENDPOINT = "https://huggingface.co"
TRUE_VALUES = ("1", "ON", "YES", "TRUE")   # huggingface_hub's true environment values
REACH_FILE = "hub-reach.json"              # in `store.paths.user_cache_dir`
REACH_FRESH_S = 3600.0                     # how long an answer of the hub stands


def cache_folder() -> Path:
    """huggingface_hub's model cache as its environment variables name it (see the module)."""
    env = os.environ
    home = env.get("HF_HOME") or os.path.join(
        env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "huggingface")
    folder = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE") or \
        os.path.join(home, "hub")
    return Path(os.path.expandvars(os.path.expanduser(folder)))


def repo_folder(cache: Path, repo_id: str) -> Path:
    """A model's folder in the cache (huggingface_hub's `models--org--name`)."""
    return cache / ("models--" + "--".join(repo_id.split("/")))


def snapshot_folder(cache: Path, repo_id: str, revision: str | None) -> Path | None:
    """The snapshot folder of `repo_id` at `revision` in `cache` (a branch or tag through its
    refs/ file, `main` when None; a commit as is), whatever it holds; None when absent."""
    try:
        repo = repo_folder(cache, repo_id)
        ref = repo / "refs" / (revision or "main")
        commit = commit_of(ref.read_text().strip() if ref.is_file() else revision)
        folder = repo / "snapshots" / commit if commit else None
    except (OSError, ValueError):        # an unreadable ref, a name no folder can have
        return None
    return folder if folder is not None and folder.is_dir() else None


def manifest_path(snapshot: Path) -> Path:
    """The fetch manifest of a snapshot folder (see the module)."""
    return snapshot.parent.parent / MANIFEST_DIR / f"{snapshot.name}.json"


def _listed(snapshot: Path) -> dict[str, int] | None:
    """File -> bytes of the snapshot's fetch manifest; None without a readable one."""
    try:
        files = json.loads(manifest_path(snapshot).read_text(encoding="utf-8"))["files"]
        return {str(name): int(info["bytes"]) for name, info in files.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def missing_files(snapshot: Path) -> list[str]:
    """What the snapshot lacks to be a whole checkpoint (empty: cached; see the module)."""
    listed = _listed(snapshot)
    if listed is not None:
        return [name for name, size in listed.items()
                if not (file := snapshot / name).is_file() or file.stat().st_size != size]
    missing = [] if (snapshot / "config.json").is_file() else ["config.json"]
    weights = [p for p in snapshot.iterdir() if p.suffix in WEIGHT_SUFFIXES and p.is_file()]
    for index in snapshot.glob("*.index.json"):
        try:
            shards = set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values())
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return [*missing, index.name]
        missing += sorted(s for s in shards if not (snapshot / s).is_file())
    if not weights:
        missing.append(f"weights (*{', *'.join(WEIGHT_SUFFIXES)})")
    return missing


def whole_snapshot(cache: Path, repo_id: str, revision: str | None) -> Path | None:
    """The snapshot of `repo_id` at `revision` when `cache` holds it whole, else None."""
    folder = snapshot_folder(cache, repo_id, revision)
    return folder if folder is not None and not missing_files(folder) else None


def is_cached(repo_id: str, revision: str | None) -> bool:
    """Whether this user's cache (`cache_folder`) holds `repo_id` at `revision` whole."""
    return whole_snapshot(cache_folder(), repo_id, revision) is not None


@dataclass(frozen=True)
class HubReach:
    """Whether the hub can be asked, as far as this process can tell without asking it."""

    reachable: bool | None      # None: not known here
    why: str                    # what it rests on, in words


def endpoint() -> str:
    """The hub's endpoint huggingface_hub asks (`HF_ENDPOINT`)."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def offline_by_environment() -> bool:
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")
    return bool(value) and value.upper() in TRUE_VALUES


def _reach_path() -> Path:
    return user_cache_dir() / REACH_FILE


def _recorded() -> dict:
    try:
        known = json.loads(_reach_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) else {}


def record_reach(url: str, problem: str | None, now: float | None = None) -> None:
    """Record what asking the hub at `url` found (None: it answered), for `hub_reach`. A cache:
    a file that cannot be written is left as it is."""
    known = _recorded()
    known[url.rstrip("/")] = {"checked_at": time.time() if now is None else now,
                              "problem": problem}
    try:
        write_text_atomic(_reach_path(), json.dumps(known))
    except OSError:
        pass


def hub_reach(now: float | None = None) -> HubReach:
    """Whether the hub can be asked (see the module): no network call."""
    if offline_by_environment():
        return HubReach(False, "HF_HUB_OFFLINE is set")
    url = endpoint()
    entry = _recorded().get(url)
    now = time.time() if now is None else now
    try:
        age = now - float(entry["checked_at"])
        problem = entry["problem"]
    except (TypeError, KeyError, ValueError):
        age, problem = None, None
    if age is None or not 0 <= age <= REACH_FRESH_S or not (problem is None
                                                            or isinstance(problem, str)):
        return HubReach(None, f"no geneb-engine run has asked the hub at {url} in the last "
                              f"{REACH_FRESH_S / 60:g} minutes")
    when = time.strftime("%H:%M", time.localtime(now - age))
    if problem is None:
        return HubReach(True, f"the hub at {url} answered at {when}")
    return HubReach(False, f"{problem} (at {when})")
