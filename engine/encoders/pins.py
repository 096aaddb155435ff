"""The commit a trusted model's hub code runs at, and the line that says it.

The store's pins (`store.pins`) applied by `fill` (`trusted_commits` before it plans, `record`
when the run starts) and, for what it downloads, by `fetch-models`. With the user's opt-in
(`--trust-remote-code`), a hub model whose checkpoint runs code (`runs_hub_code`) runs:

- at the commit its revision names, when it names one (its entry, `--models ID@<commit>`);
- else at the store's pin of its repository and branch;
- else at the commit its branch (main when none) names now, `engine.encoders.hub.resolve_commit`
  (from the hub when the run may ask it, else from the cached snapshot's ref), which the run
  pins for the store when it starts: later runs use that commit until the user changes the pin.

Each such model's run says in one line which code at which commit it runs (a `remote_code`
event). Without the opt-in nothing is resolved or pinned: the model is refused in one line by
`engine.encoders.check_remote_code`, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from engine.encoders import code_reference
from engine.encoders.hub import decide_hub, resolve_commit
from store.catalog import ModelMeta
from store.paths import StorePaths
from store.pins import Pin, branch_of, pinned, read_pins, record_pins
from store.vocab.encoder_kinds import KINDS
from store.vocab.revisions import is_pinned


@dataclass(frozen=True)
class Trusted:
    """A model whose hub code a run trusts: at the commit it runs (`model.revision`), where
    that commit comes from (`how`), and the pin to record when it was resolved now."""

    model: ModelMeta
    how: str
    pin: Pin | None = None

    def event(self) -> dict:
        m = self.model
        return {"event": "remote_code", "model": m.model_id, "hub_id": m.hub_id,
                "commit": m.revision, "pinned_now": self.pin is not None,
                "message": f"model {m.model_id}: runs the code of {m.hub_id} at commit "
                           f"{m.revision} ({self.how})"}


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def runs_hub_code(model: ModelMeta, folder: Path | None = None) -> bool:
    """Whether `model` runs Python code from its hub repository: a hub model (no `path`) of a
    kind that loads a checkpoint's own code, whose entry says remote_code = "required" or whose
    config names code (`code_reference`, read in `folder` when given, else in the cache or from
    the hub at its revision)."""
    kind = KINDS.get(model.encoder)
    if (kind is None or not kind.checkpoint_code or model.path or not model.hub_id
            or model.remote_code in ("custom", "package")):
        return False
    if model.remote_code == "required":
        return True
    if folder is not None:
        return bool(code_reference(str(folder)))
    decide_hub(model.hub_id, model.revision)
    return bool(code_reference(model.hub_id, model.revision, hub=True))


def trusted_commits(paths: StorePaths, models: list[ModelMeta], trust: bool
                    ) -> tuple[list[ModelMeta], list[Trusted]]:
    """`models` with each trusted hub-code model at the commit its code runs (see the module),
    and those models; as they are without `trust`. Writes nothing; a branch whose commit
    cannot be told is one GenebError."""
    if not trust:
        return models, []
    pins = read_pins(paths)
    out, trusted = [], []
    for m in models:
        if runs_hub_code(m):
            t = _trusted(paths, m, pins)
            trusted.append(t)
            m = t.model
        out.append(m)
    return out, trusted


def _trusted(paths: StorePaths, m: ModelMeta, pins: dict) -> Trusted:
    if is_pinned(m.revision):     # its own; the store's pin too where one names it (the dashboard)
        held = any(p.hub_id == m.hub_id and p.commit == m.revision for p in pins.values())
        return Trusted(m, f"pinned in {paths.pins}" if held else
                       "the commit its entry or --models names")
    branch = branch_of(m.revision)
    if (m.hub_id, branch) in pins:
        return Trusted(pinned(m, pins), f"pinned for {branch} in {paths.pins}")
    commit, where = resolve_commit(m.model_id, m.hub_id, branch)
    pin = Pin(m.hub_id, branch, commit, f"{now()} by fill --trust-remote-code, read from "
                                        f"{where}")
    return Trusted(replace(m, revision=commit),
                   f"what {branch} names now, read from {where}; pinned in {paths.pins}: "
                   "later runs use this commit until you change it there", pin)


def record(paths: StorePaths, trusted: list[Trusted], on_event: Callable[[dict], None]) -> None:
    """Pin the commits resolved now (`store.pins.record_pins`) and say each model's line."""
    record_pins(paths, [t.pin for t in trusted if t.pin is not None])
    for t in trusted:
        on_event(t.event())
