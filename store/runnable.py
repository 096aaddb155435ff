"""Which catalog models `geneb-engine fill` can run on this machine, and what each one needs: the
dashboard's missing-evaluations screen and `geneb-engine recommend --runnable-here` ask it.

Decided from catalog data only (the `store.catalog.ModelMeta` fields `encoder`, `remote_code`,
`revision`, `requires`, `transformers`, `hub_id`/`path`, `extractor`, `params`), the encoder
kinds' specs (what each kind needs, or why it cannot run: `store.vocab.encoder_kinds`, the data the
engine's `preflight` checks against), which packages are installed (`importlib.util.find_spec`,
which imports nothing) and the installed transformers' version against an entry's
`transformers` range (`store.catalog.transformers_problem`, from the package metadata): the
dashboard and this module never import the engine, torch or transformers.
tests/tui/test_missing.py checks that every model said runnable here passes the engine's
preflight (at the commit `fill` gives it).

- k-mer baselines (`encoder = "kmer"`) need nothing but `encoder_k`;
- models of imported embeddings (`encoder = "imported"`, `geneb-engine import-embeddings`)
  need nothing: `fill` probes their stored embeddings;
- official-harness extractors (`encoder = "official-extractor"`) need their `extractor` file
  (the user's own code, named in their own models.toml: run as is, no trust flag);
- Hugging Face models (`encoder = "hf"`) need torch and transformers; those with
  `remote_code = "required"` run only with `--trust-remote-code` (the trust toggle), at a
  commit: the entry's, passed as `--models id@<commit>` (the dashboard's catalog holds the
  store's pins as revisions, `store.pins`: "trusts code at <commit>"), else the one its branch
  names when the run starts, which `fill` then pins for the store ("resolves the commit at
  run"); a local checkpoint folder runs its own code;
  `remote_code = "custom"` / `"package"` need code the generic encoder does not have;
- adapters: `enformer`, `lucaone` and `evo` run when their package (`requires`, e.g.
  enformer-pytorch, lucaone, evo-model) is installed, a kind whose published checkpoints need
  CUDA (`hub_needs_cuda`: Evo-1's attention layers) only on CUDA; the other adapter families
  (biofm, space, eccdnamamba) are not part of this engine; `external` models have no
  published weights.

Weights from the hub (a `hub_id`, no `path`): a whole snapshot in the local Hugging Face cache
runs anywhere; without one the run downloads it, which it cannot while the hub is offline
(`store.hf_cache.hub_reach`: HF_HUB_OFFLINE, or the engine's last answer from the hub): then
the model does not run here ("no cached snapshot and the hub is offline"); where it cannot be
told whether the hub answers (no recent answer recorded), it is offered with the doubt
(`Runnability.unsure`; "runs here" says "?", never yes). Nothing here asks the network.

Memory: the weights of a model at a `fill --dtype` need `weight_bytes` (the bytes per
parameter of `store.vocab.encoder_kinds.WEIGHT_BYTES`: 4 for float32 and auto, whose autocast on
CUDA does not shrink the float32 weights; 2 for bfloat16 and float16, cast); a model whose
weights alone exceed the device's memory is offered with a warning. The catalog knows no
sequence lengths, so this answer counts the weights only; `fill --dry-run` adds the activations
of the run's largest batch (`store.memory`) and asks `memory_fit` the same question.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from store.catalog import transformers_problem
from store.hf_cache import hub_reach, is_cached
from store.vocab.encoder_kinds import (
    KINDS,
    UNPUBLISHED,
    WEIGHT_BYTES,
    EncoderKind,
    adapter_of,
    extractor_problem,
    what_to_do,
)
from store.vocab.revisions import is_pinned

DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")
COMMIT_SHOWN = 12                # hex digits of a commit shown in the models list
GIB = 1024 ** 3
# How a memory estimate names the weights' precision at each `fill --dtype`.
PRECISION_SHOWN = {"auto": "fp32", "float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def module_of(package: str) -> str:
    """The import name of a PyPI package name: an adapter kind's own (`EncoderKind.module`:
    evo-model -> evo), else by the usual rule (enformer-pytorch -> enformer_pytorch)."""
    name = package.strip()
    return next((k.module for k in KINDS.values() if k.module and k.packages
                 and k.packages[0] == name), name.replace("-", "_").lower())


def package_installed(package: str) -> bool:
    try:
        return importlib.util.find_spec(module_of(package)) is not None
    except (ImportError, ValueError):
        return False


def cuda_visible() -> bool:
    """An NVIDIA device node (what `auto` would pick, without importing torch)."""
    return Path("/dev/nvidia0").exists()


def device_memory(device: str) -> int | None:
    """Bytes of memory of the device a run would use; None when it cannot be told without
    torch (a CUDA device)."""
    if device == "cuda" or (device == "auto" and cuda_visible()):
        return None
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def resolved_device(device: str) -> str:
    """What `auto` means here: cuda when an NVIDIA device is visible, else cpu."""
    if device == "auto":
        return "cuda" if cuda_visible() else "cpu"
    return device


def weight_bytes(params: int | None, dtype: str = "auto") -> int | None:
    """The bytes a model's weights take at `dtype` (`fill --dtype`); None for a weight-free or
    unknown parameter count."""
    return params * WEIGHT_BYTES[dtype] if params is not None and params > 0 else None


def here_text(runs_here: bool | None) -> str:
    """How a "runs here" column shows `Runnability.runs_here`: yes, no, ? (cannot be told)."""
    return {True: "yes", False: "no", None: "?"}[runs_here]


def format_bytes(n: int) -> str:
    """Bytes as every reader shows them (weights, the store's sizes): GiB, MiB, KiB, B."""
    if n >= 1024 * GIB:
        return f"{n / (1024 * GIB):.2f} TiB"
    if n >= GIB:
        return f"{n / GIB:.1f} GiB" if n < 10 * GIB else f"{n / GIB:.0f} GiB"
    if n >= 1024 ** 2:
        return f"{n / 1024 ** 2:.0f} MiB"
    return f"{n / 1024:.0f} KiB" if n >= 1024 else f"{n} B"


@dataclass(frozen=True)
class Runnability:
    """What the dashboard knows about running one model: can it, what it needs, any warning."""

    model_id: str
    runnable: bool
    why: str = ""                   # not runnable: the reason and the fix
    needs: str = ""                 # runnable: what a run needs (shown beside the model)
    remote_code: bool = False       # the run needs --trust-remote-code
    revision: str | None = None     # the commit passed as id@<commit> (None: fill resolves it)
    memory: int | None = None       # bytes of the weights at the dtype (None: weight-free, unknown)
    warning: str = ""               # e.g. larger than the device's memory
    unsure: str = ""                # runnable, unless what this says (the hub) stands in the way

    @property
    def runs_here(self) -> bool | None:
        """Whether it runs here: None where that cannot be told (`unsure`)."""
        return None if self.runnable and self.unsure else self.runnable

    @property
    def spec(self) -> str:
        """How `--models` names it: `id@<commit>` for a pinned remote-code model."""
        if self.remote_code and self.revision:
            return f"{self.model_id}@{self.revision}"
        return self.model_id

    @property
    def reason(self) -> str:
        """Why it cannot run, without the fix: `why` up to its first "; " outside parentheses
        (a catalog note in them may hold one)."""
        depth = 0
        for i, c in enumerate(self.why):
            depth += {"(": 1, ")": -1}.get(c, 0)
            if c == ";" and depth == 0:
                return self.why[:i]
        return self.why

    @property
    def short(self) -> str:
        """One cell of the models list."""
        if not self.runnable:
            return "not runnable: " + self.reason
        parts = [p for p in (self.needs, self.warning, self.unsure and "? " + self.unsure)
                 if p]
        return " · ".join(parts) if parts else "ready"


def assess(meta: Mapping | None, model_id: str, *, device: str = "auto",
           memory: int | None = None, dtype: str = "auto",
           installed: Callable[[str], bool] = package_installed) -> Runnability:
    """The runnability of one catalog entry (`meta`: ModelMeta fields as a mapping; None when
    the model is not in the engine's catalog) on `device`, whose `memory` its weights at
    `dtype` should fit (a warning where they do not); a hub model's weights by `is_cached`
    and `hub_reach` (see the module)."""
    if meta is None:
        return Runnability(model_id, False, "not in the model catalog; add an entry to "
                                            "<store>/models.toml (see geneb-engine models)")
    entry = _Entry.of(meta)
    kind = KINDS.get(entry.encoder)
    if why := _entry_problem(meta, entry, kind):
        return Runnability(model_id, False, why)
    if (ready := _without_weights(meta, model_id, kind)) is not None:
        return ready
    if why := _source_problem(entry) or _code_problem(meta, entry, kind, device, installed):
        return Runnability(model_id, False, why)
    why, unsure = _weights_reach(entry, model_id)
    if why:
        return Runnability(model_id, False, why)
    trust, fit = _trust(entry, kind), _memory_fit(entry, device, memory, dtype)
    needs = [n for n in (_adapter_need(meta, entry, kind), trust.need, fit.need) if n]
    return Runnability(model_id, True, needs=" · ".join(needs), remote_code=trust.needed,
                       revision=trust.commit, memory=fit.weights, warning=fit.warning,
                       unsure=unsure)


@dataclass(frozen=True)
class _Entry:
    """The fields of a catalog entry that decide where it runs, with their defaults."""

    encoder: str
    remote: str                     # remote_code: no, required, custom, package
    revision: str | None
    path: str | None                # a local checkpoint folder
    source: str | None              # the folder, else the hub id
    params: int

    @classmethod
    def of(cls, meta: Mapping) -> _Entry:
        path = meta.get("path") or None
        return cls(encoder=meta.get("encoder") or "hf", remote=meta.get("remote_code") or "no",
                   revision=meta.get("revision") or None, path=path,
                   source=path or meta.get("hub_id"), params=int(meta.get("params") or 0))


def _entry_problem(meta: Mapping, entry: _Entry, kind: EncoderKind | None) -> str:
    """Why the entry's encoder kind cannot run it at all ("" when it can): an unknown kind,
    one this engine has no adapter or weights for, a field the kind needs, the installed
    transformers outside the entry's range."""
    if kind is None:
        return f"unknown encoder {entry.encoder!r}"
    if kind.unavailable == UNPUBLISHED:
        note = meta.get("notes") or "see the GENEB README"
        return f"weights not published on the Hugging Face hub ({note}); {what_to_do(kind)}"
    if kind.unavailable:
        return (f"needs the {entry.encoder} adapter, which this geneb-engine does not have; "
                f"{what_to_do(kind)}")
    for name in kind.fields:
        if not meta.get(name):
            return f"{kind.label} needs '{name}' in its entry"
    return transformers_problem(meta.get("transformers")) or ""


def _without_weights(meta: Mapping, model_id: str, kind: EncoderKind) -> Runnability | None:
    """The runnability of a kind that loads no weights (the user's extractor, imported
    embeddings, a weight-free baseline); None for a kind with weights."""
    if kind.user_code:              # the user's own class, run as is (no trust flag)
        if problem := extractor_problem(meta["extractor"]):
            return Runnability(model_id, False, problem)
        return Runnability(model_id, True, needs=f"your extractor {Path(meta['extractor']).name}")
    if kind.imported:               # nothing runs: fill probes the embeddings the store holds
        return Runnability(model_id, True, needs="imported embeddings")
    if kind.weight_free:
        return Runnability(model_id, True, needs="weight-free baseline")
    return None


def _source_problem(entry: _Entry) -> str:
    """Why the weights have nowhere to come from ("" when they do)."""
    if not entry.source:
        return "its entry gives neither 'hub_id' nor 'path'"
    if entry.path and not Path(str(entry.path)).expanduser().is_dir():
        return f"its checkpoint folder {entry.path} does not exist"
    return ""


def _adapter_package(meta: Mapping, kind: EncoderKind) -> str:
    """The package a family adapter imports: the entry's `requires`, else the kind's own."""
    return meta.get("requires") or kind.packages[0]


def _code_problem(meta: Mapping, entry: _Entry, kind: EncoderKind, device: str,
                  installed: Callable[[str], bool]) -> str:
    """Why the code that runs the model is missing here ("" when it is not): a family
    adapter's package or the CUDA its hub checkpoints need; for the generic encoder, a
    pooling or remote code it does not have, or torch and transformers."""
    if kind.recipe:                 # a family adapter: its own package
        package = _adapter_package(meta, kind)
        if not installed(package):
            return f"needs the package {package}, which is not installed: pip install {package}"
        if kind.hub_needs_cuda and not entry.path and resolved_device(device) != "cuda":
            return (f"{kind.hub_needs_cuda}, and this machine runs it on "
                    f"{resolved_device(device)}; a Hyena-only checkpoint folder ('path') "
                    "runs on the CPU")
        return ""
    if owner := adapter_of(meta.get("pooling")):
        return f"pooling {meta.get('pooling')!r} needs encoder = \"{owner}\""
    if entry.remote in ("custom", "package"):
        return (f"needs its own code (remote_code = {entry.remote}); the generic Hugging Face "
                "encoder cannot run it")
    missing = [p for p in kind.packages if not installed(p)]
    if missing:
        return f"needs {' and '.join(missing)}, not installed: {kind.install}"
    return ""


def _adapter_need(meta: Mapping, entry: _Entry, kind: EncoderKind) -> str:
    """What a run needs of a family adapter ("" for the generic encoder)."""
    return f"{entry.encoder} adapter ({_adapter_package(meta, kind)})" if kind.recipe else ""


def _weights_reach(entry: _Entry, model_id: str) -> tuple[str, str]:
    """(why the hub weights cannot be had here, the doubt that they can), "" each when
    neither: a local folder or a cached snapshot is here; without one, the hub offline
    refuses and a hub not known to answer is a doubt."""
    if entry.path or is_cached(str(entry.source), entry.revision):
        return "", ""
    hub = hub_reach()
    at = f" at {entry.revision}" if entry.revision else ""
    if hub.reachable is False:
        return (f"no cached snapshot of {entry.source}{at} and the hub is offline ({hub.why}); "
                f"`geneb-engine fetch-models {model_id}` on a machine that reaches the hub, "
                "then copy its Hugging Face cache here"), ""
    if hub.reachable is None:
        return "", (f"no snapshot of the weights is cached here, and whether the hub can be "
                    f"reached is not known ({hub.why})")      # every unfetched model's
    return "", ""


@dataclass(frozen=True)
class _Trust:
    """Whether a run needs --trust-remote-code, the commit it trusts (None: resolved at the
    run, or a local folder's own code) and what the models list says of it."""

    needed: bool = False
    commit: str | None = None
    need: str = ""


def _trust(entry: _Entry, kind: EncoderKind) -> _Trust:
    """A checkpoint's code runs trusted where the entry requires it: its folder's, the pinned
    commit's, else the commit its branch names when the run starts."""
    if not (entry.remote == "required" and kind.checkpoint_code):
        return _Trust()
    if entry.path:
        return _Trust(True, None, "trusts local code")
    if is_pinned(entry.revision):
        return _Trust(True, entry.revision, f"trusts code at {entry.revision[:COMMIT_SHOWN]}")
    return _Trust(True, None, "trusts code, resolves the commit at run")


@dataclass(frozen=True)
class Fit:
    """The bytes of a model's weights at a dtype (None: weight-free, unknown) and what is said
    of them: a need where they fit the device's memory, else a warning."""

    weights: int | None = None
    need: str = ""
    warning: str = ""


def _memory_fit(entry: _Entry, device: str, memory: int | None, dtype: str) -> Fit:
    """Whether the weights at `dtype` fit the device's `memory` (None: not known)."""
    return memory_fit(weight_bytes(entry.params, dtype), None, device, memory, dtype)


def memory_fit(weights: int | None, activations: int | None, device: str, memory: int | None,
               dtype: str) -> Fit:
    """Whether a model's weights at `dtype`, and the activations of its largest batch where
    they are estimated (`store.memory`: `fill --dry-run`, which knows the sequence lengths),
    fit the device's `memory` (None: not known): a need where they do, else a warning (an
    estimate never refuses a run)."""
    if weights is None and not activations:
        return Fit()
    precision = PRECISION_SHOWN[dtype]
    held = f"{precision} weights + activations" if activations else f"{precision} weights"
    need = (weights or 0) + (activations or 0)
    if memory is not None and need > memory:
        return Fit(weights, warning=f"⚠ needs ≈{format_bytes(need)} ({held}), the "
                                    f"{resolved_device(device)} has {format_bytes(memory)}")
    return Fit(weights, need=f"≈{format_bytes(need)} "
                             + (held if activations else precision))
