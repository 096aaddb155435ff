"""Runs a class written for the official GENEB harness: `encoder = "official-extractor"`.

The registry entry names it, `extractor = "path/to/file.py:ClassName"` (a relative file is in
the folder of the models.toml the entry is written in), and gives its other keyword arguments
as `extractor_args = {...}`. As harness/run_GENEB.py does:

- the file is loaded as a module of the package `extractors` (its own folder, so its siblings
  import too), whose `base` is ours (`engine.encoders.harness_base`): an unmodified file doing
  `from .base import BaseEmbeddingExtractor` or `from extractors.base import ...` loads;
- the class is built with `name_model` (the entry's `path`, else `hub_id`, else its model id),
  `device` (`fill --device`; left out: cuda when torch sees one, else cpu) and the
  extractor_args; a `hub_id` it loads itself goes through `engine.encoders.hub.checkpoint`
  first (at its main revision, as the class asks for none): neither cached nor reachable is
  one line at once, and an unreachable hub leaves the class's own loading to the cache;
- `extract_embeddings(sequences, batch_size)` gets the sequences as the harness reads them (the
  kind's `engine.data.as_read_by` rule is as-given: the extractor decides about case, IUPAC
  codes or U) and the batch size (`fill --batch-size`, else the entry's, else the harness's
  default 8).

Identity: `revision` is the sha256 of the file's bytes (the very bytes executed) and of the init
arguments but the device; the settings add the file's name and class, the device type and the
batch size (an extractor batches as it likes, so its batches are part of what it computes).
Editing the file gives another revision, so its stored embeddings no longer match.

Streaming: a split's rows are cut into calls of `batch_size * CALL_BATCHES` sequences from row
0, so an extractor that batches its input in order forms the batches of the harness's one call;
only the calls holding rows the writer still lacks are made, and each call's rows are written at
once, so a killed run resumes from its finished calls. Every return is checked (numbers, 2-D,
one row per sequence, the width of the first call, finite as float32: the dtype stored, which
the official extractors return); a bad return, or an exception the class raises, is one
GenebError naming the file and class. `build` makes one trial call on `TRIAL`, so a class that
cannot load, be built or answer is refused before anything is stored (fill has only taken the
pair's lock by then).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.data import as_read_by
from engine.encoders import harness_base
from engine.encoders.hub import checkpoint
from store.catalog import HARNESS_ARGS
from store.vocab.encoder_kinds import split_extractor
from store.vocab.errors import GenebError

if TYPE_CHECKING:
    from engine.encoders import EncoderOptions
    from store.catalog import ModelMeta
    from store.embeddings import SplitWriter

KIND = "official-extractor"
PACKAGE = "extractors"          # run_GENEB.py imports `extractors.<module>`
DEFAULT_BATCH_SIZE = 8          # run_GENEB.py's --batch_size
CALL_BATCHES = 32               # batches per call of extract_embeddings
TRIAL: tuple[str, ...] = ("ACGT" * 16, "GATTACA" * 10)   # the trial call's sequences


def build(model: ModelMeta, options: EncoderOptions) -> OfficialExtractor:
    """The extractor of a catalog entry that passed `preflight`: loaded, built, tried once."""
    file, class_name = split_extractor(model.extractor)
    if model.hub_id and not model.path and importlib.util.find_spec("huggingface_hub"):
        checkpoint(model.model_id, model.hub_id, None)
    return OfficialExtractor(Path(file), class_name, model_id=model.model_id,
                             init=init_args(model, run_device(options.device)),
                             batch_size=options.batch_size or model.batch_size
                             or DEFAULT_BATCH_SIZE)


def init_args(model: ModelMeta, device: str | None) -> dict:
    """The class's keyword arguments: `name_model` (the entry's path, else hub id, else model
    id), `device` and the entry's extractor_args."""
    name_model = model.path or model.hub_id or model.model_id
    init = dict(zip(HARNESS_ARGS, (name_model, device), strict=True))
    return {**init, **json.loads(model.extractor_args or "{}")}


def extractor_revision(model: ModelMeta) -> str:
    """The revision `build` gives the entry's extractor (`revision_of` its file as it is now),
    told without running it; OSError when the file cannot be read."""
    file, _ = split_extractor(model.extractor)
    return revision_of(Path(file).read_bytes(), init_args(model, None))


def run_device(device: str | None) -> str:
    """The device passed to the class: `pick_device`'s rule (cuda when available), cpu where
    torch is not installed."""
    if importlib.util.find_spec("torch") is None:
        return device if device not in (None, "", "auto") else "cpu"
    from engine.encoders.device import pick_device  # lazy: torch

    return str(pick_device(device))


def revision_of(source: bytes, init: dict) -> str:
    """sha256 of the file's bytes and of the init arguments but the device (canonical JSON)."""
    args = {k: v for k, v in init.items() if k != "device"}
    digest = hashlib.sha256(source)
    digest.update(b"\0" + json.dumps(args, sort_keys=True, separators=(",", ":")).encode())
    return digest.hexdigest()


def load_module(file: Path, source: bytes):
    """Execute `source` (the bytes of `file`) as `extractors.<stem>` of a fresh `extractors`
    package over the file's folder, whose `base` is `harness_base`; raises what the file does."""
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]       # another folder's package, or this file before an edit
    spec = importlib.machinery.ModuleSpec(PACKAGE, None, is_package=True)
    spec.submodule_search_locations = [str(file.parent)]
    package = importlib.util.module_from_spec(spec)
    package.base = harness_base
    sys.modules[PACKAGE] = package
    sys.modules[f"{PACKAGE}.base"] = harness_base
    spec = importlib.util.spec_from_file_location(f"{PACKAGE}.{file.stem}", file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    exec(compile(source, str(file), "exec"), module.__dict__)
    return module


class OfficialExtractor:
    """The user's class behind the Encoder interface (see the module)."""

    def __init__(self, file: Path, class_name: str, *, model_id: str, init: dict,
                 batch_size: int):
        self.file, self.class_name, self.init = file, class_name, init
        self.batch_size = int(batch_size)
        self.label = f"model {model_id}: extractor {file}:{class_name}"
        try:
            source = file.read_bytes()
        except OSError as exc:
            raise GenebError(f"{self.label}: cannot be read ({exc.strerror})") from None
        self.revision = revision_of(source, init)
        self.precision = None       # the extractor decides its own (`store.vocab.variant`)
        module = self._guarded(lambda: load_module(file, source), "loading it")
        cls = getattr(module, class_name, None)
        if not isinstance(cls, type):
            found = [k for k, v in vars(module).items()
                     if isinstance(v, type) and v.__module__ == module.__name__]
            raise GenebError(f"{self.label}: the file has no class {class_name} (classes "
                             f"defined in it: {', '.join(found) or 'none'})")
        if not callable(getattr(cls, "extract_embeddings", None)):
            raise GenebError(f"{self.label}: {class_name} has no extract_embeddings method")
        call = f"{class_name}({', '.join(f'{k}={v!r}' for k, v in init.items())})"
        self.instance = self._guarded(lambda: cls(**init), call)
        self.width: int | None = None
        self.width = self.embed(list(TRIAL)).shape[1]

    @property
    def settings(self) -> dict:
        return {"encoder": KIND, "extractor": f"{self.file.name}:"
                f"{self.class_name}", "args": {k: v for k, v in self.init.items()
                                                if k != "device"},
                "device": self.init["device"].partition(":")[0], "batch_size": self.batch_size}

    def encode_into(self, sequences: Sequence[str], writer: SplitWriter) -> dict:
        start = time.perf_counter()
        sequences = as_read_by(KIND, sequences)
        pending = np.asarray(writer.pending(), dtype=np.int64)
        step = self.batch_size * CALL_BATCHES
        stats = {"n_sequences": len(sequences), "n_encoded": int(pending.size), "n_calls": 0}
        for first in np.unique(pending // step) * step:
            rows = np.arange(first, min(first + step, len(sequences)))
            block = self.embed([sequences[r] for r in rows])
            todo = np.isin(rows, pending)
            writer.write(rows[todo], block[todo])
            stats["n_calls"] += 1
        stats["seconds"] = round(time.perf_counter() - start, 3)
        return stats

    def embed(self, sequences: list[str]) -> np.ndarray:
        """One checked call of `extract_embeddings`: (n, width) float32."""
        n = len(sequences)
        out = self._guarded(lambda: self.instance.extract_embeddings(sequences, self.batch_size),
                            f"extract_embeddings({n} sequences)")
        try:
            array = np.asarray(out)
        except Exception as exc:    # a CUDA tensor, ragged lists...
            raise self._bad(n, f"a {type(out).__name__} numpy cannot read ({_line(exc)})")\
                from None
        if array.dtype.kind not in "biuf":
            raise self._bad(n, f"values of dtype {array.dtype}")
        if array.ndim != 2 or array.shape[0] != n or array.shape[1] == 0:
            raise self._bad(n, f"shape {array.shape}")
        if self.width is not None and array.shape[1] != self.width:
            raise self._bad(n, f"rows of {array.shape[1]} values, after rows of {self.width}")
        array = array.astype(np.float32)
        if not (finite := np.isfinite(array).all(axis=1)).all():
            raise self._bad(n, f"NaN or infinite values (as float32) in {int((~finite).sum())} "
                               "row(s)")
        return array

    def _bad(self, n: int, what: str) -> GenebError:
        return GenebError(f"{self.label}: extract_embeddings({n} sequences) returned {what}; it "
                          f"must return one row of finite numbers per sequence, shape ({n}, "
                          "embedding_dim)")

    def _guarded(self, call: Callable[[], Any], what: str) -> Any:
        """`call()`; an exception it raises becomes one GenebError (its line in the file)."""
        try:
            return call()
        except Exception as exc:
            frames = [f for f in traceback.extract_tb(exc.__traceback__)
                      if Path(f.filename).parent == self.file.parent]
            where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
            raise GenebError(f"{self.label}: {what} raised {type(exc).__name__}: "
                             f"{_line(exc)}{where}") from None


def _line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"
