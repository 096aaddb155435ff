"""Where the store lives (`--store` beats `GENEB_HOME` beats `~/.geneb`), and every path in it:
modules ask `StorePaths` for a folder or file of the store, never build one themselves."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from store.did_you_mean import suggestions
from store.vocab.errors import GenebError
from store.vocab.ids import path_part
from store.vocab.suites import GENEB_V1_SUITE


@dataclass(frozen=True)
class StorePaths:
    root: Path

    @property
    def catalog(self) -> Path:
        return self.root / "catalog"

    def catalog_table(self, name: str) -> Path:
        """One catalog table (`tasks`, `models`, `audit`)."""
        return self.catalog / f"{name}.parquet"

    @property
    def embeddings(self) -> Path:
        return self.root / "embeddings.zarr"

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def predictions(self) -> Path:
        """The predictions table: each local row's test-set predictions
        (`store.tables.predictions`)."""
        return self.root / "predictions"

    @property
    def runs(self) -> Path:
        """The runs table: how fast each split was embedded, and on what
        (`store.tables.telemetry`)."""
        return self.root / "runs"

    @property
    def locks(self) -> Path:
        """Advisory lock files (`store.locks`)."""
        return self.root / "locks"

    @property
    def aside(self) -> Path:
        """What repairs and migrations keep instead of deleting (`aside/<stamp>-<what>/`)."""
        return self.root / "aside"

    @property
    def suites(self) -> Path:
        """Materialised built-in suites (e.g. geneb-mini as flat CSVs)."""
        return self.root / "suites"

    def suite_dir(self, name: str) -> Path:
        return self.suites / name

    def data_dir(self, revision: str) -> Path:
        """The geneb-v1 task data snapshot of a dataset revision (`geneb-engine data download`)."""
        return self.root / "data" / GENEB_V1_SUITE.name / revision

    @property
    def reference(self) -> Path:
        """Reference data beside the results: the official leaderboard and submissions."""
        return self.root / "reference"

    @property
    def leaderboard(self) -> Path:
        """The official leaderboard's aggregates (`store.official.reference`)."""
        return self.reference / "leaderboard.parquet"

    @property
    def submission_headers(self) -> Path:
        """The imported submissions' headers, harness_version and meta per (model, source)
        (`store.official.submission`)."""
        return self.reference / "submission-headers.parquet"

    def official_submissions(self, commit: str | None = None) -> Path:
        """The official submission files: the shipped ones (`commit` None), else those
        downloaded at `commit` (`store.official.fetch`)."""
        name = "official-submissions"
        return self.reference / (name if commit is None else f"{name}-{commit}")

    @property
    def imports(self) -> Path:
        """What `geneb-engine import-embeddings` recorded, one folder per model."""
        return self.root / "imports"

    def embedding_import(self, model: str) -> Path:
        """The record of a model's imported embeddings (`store.embedding_imports`): its
        `import.json` and the submission file they came with."""
        return self.imports / path_part(model)

    @property
    def pruned(self) -> Path:
        """The record of the embeddings `prune` removed (`store.prune`)."""
        return self.root / "pruned.json"

    @property
    def user_models(self) -> Path:
        """The user's own model entries, same fields as the built-in catalog."""
        return self.root / "models.toml"

    @property
    def pins(self) -> Path:
        """The commits the store runs hub code at (`store.pins`)."""
        return self.root / "pins.toml"


def user_cache_dir() -> Path:
    """This user's cache folder for geneb (what can be recomputed, never a store's data):
    `$XDG_CACHE_HOME/geneb`, default `~/.cache/geneb`."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "geneb"


def resolve_store(store: str | os.PathLike | None = None) -> StorePaths:
    if store is None:
        store = os.environ.get("GENEB_HOME") or Path.home() / ".geneb"
    return StorePaths(Path(store).expanduser().resolve())


def store_args(paths: StorePaths) -> list[str]:
    """`--store ROOT` for a command line the user is told to run, so that it runs on `paths`;
    none where that store is this shell's default already (`$GENEB_HOME`, else ~/.geneb)."""
    try:
        default = resolve_store(None).root
    except RuntimeError:                        # `~user` of no known user in $GENEB_HOME
        default = None
    return [] if paths.root == default else ["--store", str(paths.root)]


def store_named(store: str | None, *, write: bool, must_exist: bool = False) -> StorePaths:
    """The store a `--store` value names (None: `$GENEB_HOME`, else ~/.geneb), checked
    (`check_store`: `write`, `must_exist`); one GenebError naming the path and the fix when it
    cannot be used."""
    try:
        paths = resolve_store(store)
    except RuntimeError as exc:                 # `~user` of no known user
        given = store or os.environ.get("GENEB_HOME")
        raise GenebError(f"store {given}: {exc}; give --store (or GENEB_HOME) a folder "
                         "path") from None
    return check_store(paths, write=write, must_exist=must_exist)


def _store_entries() -> frozenset[str]:
    """The names a store's folder holds (its first-level entries, `StorePaths`)."""
    s = StorePaths(Path("/"))
    return frozenset(p.parts[1] for p in (
        s.catalog, s.embeddings, s.results, s.predictions, s.runs, s.locks, s.aside, s.suites,
        s.data_dir("-"), s.reference, s.imports, s.user_models, s.pins, s.pruned))


STORE_ENTRIES = _store_entries()


def holds_store(folder: Path) -> bool:
    """Whether `folder` is a store: it holds one of the entries a store has (`STORE_ENTRIES`;
    a store's own `models.toml` before its first run counts)."""
    try:
        return folder.is_dir() and any((folder / name).exists() for name in STORE_ENTRIES)
    except OSError:
        return False


def _foreign(folder: Path) -> bool:
    """A folder that holds files (hidden ones aside) but no store: not where a store goes."""
    try:
        return (folder.is_dir() and not holds_store(folder)
                and any(not e.name.startswith(".") for e in folder.iterdir()))
    except OSError:
        return False


def nearby_stores(root: Path) -> list[Path]:
    """Stores a mistyped `root` may have meant: where the path leaves what exists (its first
    missing folder, or `root` itself), the folders beside it with a close name (did you mean)
    and the same path under them; and the stores in `root` itself."""
    missing = root
    while not missing.parent.exists() and missing.parent != missing:
        missing = missing.parent
    rest = root.relative_to(missing)
    try:
        beside = [e.name for e in missing.parent.iterdir() if e.is_dir() and e != missing]
        inside = sorted(e for e in root.iterdir() if holds_store(e)) if root.is_dir() else []
    except OSError:
        return []
    close = [missing.parent / name / rest for name in suggestions(missing.name, beside)]
    return [p for p in close if holds_store(p)] + inside[:3]


def _did_you_mean(root: Path) -> str:
    near = nearby_stores(root)
    return f" (did you mean the store {' or '.join(map(str, near))}?)" if near else ""


def absent_store(paths: StorePaths, store: str | None) -> str | None:
    """What a read-only command says before it reads `paths` as an empty store because the
    folder does not exist, or holds files but no store, when the path was named (`store`, a
    `--store` value, else `$GENEB_HOME`): most likely a typo (the stores close to it named).
    None when it is a store (or an empty folder), or when it is the default ~/.geneb (a new
    user's, empty until a command writes it)."""
    origin = "--store" if store is not None else \
        "$GENEB_HOME" if os.environ.get("GENEB_HOME") else None
    if origin is None:
        return None
    if not paths.root.exists():
        what = "does not exist"
    elif _foreign(paths.root):
        what = "holds no store"
    else:
        return None
    return (f"store {paths.root} ({origin}) {what}{_did_you_mean(paths.root)}; it reads as an "
            "empty store (check the path)")


def new_store(paths: StorePaths) -> str | None:
    """The line a command that writes the store says first when the store's folder does not
    exist yet (its folder above does: `check_store`); None for an existing store."""
    return None if paths.root.exists() else f"new store at {paths.root} (no folder there yet)"


def check_store(paths: StorePaths, *, write: bool, must_exist: bool = False) -> StorePaths:
    """`paths` when the store can be used; else one GenebError naming the path and the fix.

    A file where the store folder should be is refused for every command; with `write`, so is
    a folder that holds files but no store (the store goes into a store, an empty folder or a
    new folder), a new store whose folder above does not exist either (a mistyped path is not
    made into a tree of folders), and a folder this process cannot write (or, for a store not
    created yet, the folder above it). A missing store folder reads as an empty store, unless
    `must_exist` (`geneb-tui --store`: a dashboard over a folder that is not there, or holds
    no store, shows nothing, and the path is most likely a typo). Each refusal names the
    stores close to the path (`nearby_stores`)."""
    root = paths.root
    fix = "give --store (or GENEB_HOME) a folder you can write"
    if root.exists() and not root.is_dir():
        raise GenebError(f"store {root}: is a file, not a folder; {fix}")
    if must_exist and not root.exists():
        raise GenebError(f"store {root} does not exist{_did_you_mean(root)}; check the path, "
                         f"or create the store with `geneb-engine fill --store {root} ...` or "
                         f"`geneb-engine import --official --store {root}`")
    if (must_exist or write) and _foreign(root):
        raise GenebError(f"store {root}: holds files but no store{_did_you_mean(root)}; give "
                         "--store (or GENEB_HOME) a store, an empty folder or a new folder "
                         "inside an existing one")
    if not write:
        return paths
    existing = root
    while not existing.exists():        # where the store folder would be created
        existing = existing.parent
    if not existing.is_dir():
        raise GenebError(f"store {root}: cannot be created, {existing} is a file; {fix}")
    if existing not in (root, root.parent):
        missing = root.parents[len(root.relative_to(existing).parts) - 2]
        raise GenebError(f"store {root}: no such folder {missing}{_did_you_mean(root)}; give "
                         "--store (or GENEB_HOME) a store, or a new folder inside an existing "
                         "one (create the folders above it first)")
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "is not writable" if existing == root else \
            f"cannot be created, {existing} is not writable"
        raise GenebError(f"store {root}: {what}; {fix} (or fix the folder's permissions)")
    return paths
