"""The revision of a checkpoint folder given by path: the sha256 of the files that define the
model, read again only when a file changed (the stat-keyed `FileDigests`), so that every reader
can tell cheaply whether a folder changed since its results were computed (`store.current`).

**The rule** (`MODEL_FILES`, an allow-list of file-name patterns, matched case-insensitively
on the name of every file under the folder, at any depth, hidden files and folders left out):

- weights: `*.safetensors`, `*.bin`, `*.pt`, `*.pth`, `*.ckpt`, `*.gguf`, `*.h5`,
  `*.msgpack`, `*.onnx`;
- configuration: `config.json`, `*_config.json` (generation, tokenizer, preprocessor,
  adapter...), `*.index.json` (sharded weights), `*.yaml`, `*.yml` (Evo-1's StripedHyena config);
- tokenizer: `tokenizer*.json`, `special_tokens_map.json`, `added_tokens.json`, `vocab*`,
  `merges.txt`, `*.model` (SentencePiece), `*.tiktoken`;
- code: `*.py` (a checkpoint's own code, run with `--trust-remote-code`).

Everything else is left out: READMEs and other docs, logs (`logs/train.log`), images, licences,
training records (`trainer_state.json`, `eval_results.json`), `.git` and hidden files. An
allow-list, so that a new kind of document never makes every result stale; the price is that a
file no pattern names does not count even if some code reads it (a remote-code model's own data
file): re-save the weights or the config with it, or give the folder a new name.

The revision is `checkpoint-sha256-<hex>`: the sha256 of one line per counted file, in path
order, `<relative path>\\0<sha256 of its bytes>\\n`. Before this rule a folder's revision was
the same over every non-hidden file, `folder-sha256-<hex>` (`LEGACY_PREFIX`, `folder_sha256`):
results recorded with it stay current while that older hash of the folder still matches
(`store.current`), so a store does not turn stale on the upgrade.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import threading
from pathlib import Path

from store.atomic import write_text_atomic
from store.paths import user_cache_dir
from store.vocab.errors import GenebError

PREFIX = "checkpoint-sha256-"
LEGACY_PREFIX = "folder-sha256-"     # every non-hidden file (the rule before `MODEL_FILES`)
WEIGHTS = ("*.safetensors", "*.bin", "*.pt", "*.pth", "*.ckpt", "*.gguf", "*.h5", "*.msgpack",
           "*.onnx")
CONFIG = ("config.json", "*_config.json", "*.index.json", "*.yaml", "*.yml")
TOKENIZER = ("tokenizer*.json", "special_tokens_map.json", "added_tokens.json", "vocab*",
             "merges.txt", "*.model", "*.tiktoken")
CODE = ("*.py",)
MODEL_FILES: tuple[str, ...] = (*WEIGHTS, *CONFIG, *TOKENIZER, *CODE)


def defines_model(name: str) -> bool:
    """Whether a file of this name counts in a checkpoint folder's revision (`MODEL_FILES`)."""
    lower = name.lower()
    return any(fnmatch.fnmatchcase(lower, pattern) for pattern in MODEL_FILES)


def checkpoint_fingerprint(folder: Path) -> str:
    """`checkpoint-sha256-<hex>` of the folder's files that define the model (see the module);
    a `GenebError` naming the file when one cannot be read."""
    return _digest(folder, PREFIX, defines_model)


def folder_sha256(folder: Path) -> str:
    """`folder-sha256-<hex>` of every non-hidden file: the revision the rule before
    `MODEL_FILES` gave, to recognise the results it recorded."""
    return _digest(folder, LEGACY_PREFIX, lambda name: True)


def _digest(folder: Path, prefix: str, counts) -> str:
    try:
        digests = FileDigests.load()
        digest = hashlib.sha256()
        for name in sorted(_files(folder, counts)):
            digest.update(f"{name}\0{digests.of(folder / name)}\n".encode())
        digests.save()
        return f"{prefix}{digest.hexdigest()}"
    except OSError as exc:
        raise GenebError(f"{folder}: cannot read {exc.filename or 'the folder'} to tell the "
                         f"checkpoint's revision ({exc.strerror})") from None


class FileDigests:
    """Files' sha256 by absolute path, each with the (size, mtime_ns, inode) it was read at,
    kept in `<user cache>/file-sha256.json` (`store.paths.user_cache_dir`) so that a file is
    hashed once until it changes, by any process (a plan, `status`, a report and the load that
    follows do not read the weights each time). The file is only a cache: one that cannot be
    read or written is ignored (every digest is then computed)."""

    FILE = "file-sha256.json"
    _lock = threading.Lock()

    def __init__(self, path: Path, known: dict[str, list]):
        self.path, self.known, self.changed = path, known, False

    @classmethod
    def load(cls) -> FileDigests:
        path = user_cache_dir() / cls.FILE
        try:
            known = json.loads(path.read_text())
            known = known if isinstance(known, dict) else {}
        except (OSError, ValueError):
            known = {}
        return cls(path, known)

    def of(self, file: Path) -> str:
        key = os.path.realpath(file)
        st = os.stat(key)
        stamp = [st.st_size, st.st_mtime_ns, st.st_ino]
        entry = self.known.get(key)
        if isinstance(entry, list) and len(entry) == 4 and entry[:3] == stamp:
            return entry[3]
        with open(key, "rb") as f:
            value = hashlib.file_digest(f, "sha256").hexdigest()
        self.known[key] = [*stamp, value]
        self.changed = True
        return value

    def save(self) -> None:
        if not self.changed:
            return
        with self._lock:
            try:
                write_text_atomic(self.path, json.dumps(self.known))
            except OSError:
                pass                  # a cache: the next process hashes again


def _files(folder: Path, counts) -> list[str]:
    """The relative paths of the files under `folder` whose name `counts`, hidden files and
    folders left out."""
    found = []
    for root, dirs, names in os.walk(folder, onerror=_raise):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        base = Path(root).relative_to(folder)
        found += [(base / n).as_posix() for n in names if not n.startswith(".") and counts(n)]
    return found


def _raise(exc: OSError) -> None:
    raise exc
