"""The commits a store runs hub code at: `<store>/pins.toml` (`StorePaths.pins`).

A checkpoint that runs Python code from its hub repository runs it only at a commit
(`engine.encoders.check_remote_code`). When a model's revision names none (a branch, a tag, or
nothing: main), `fill --trust-remote-code` and `fetch-models` resolve it to the commit it names
at that moment (`engine.encoders.pins`) and record it here, one `[[pin]]` per hub repository
and branch; from then on every run of a model of that repository and branch runs that commit
(`pinned`), until the user edits the pin or removes it (the next trusted run then resolves the
branch again). A commit the model names itself (its entry's `revision`, `--models ID@<commit>`)
wins over a pin.

The file is the user's to edit: geneb only appends to it (new pins at the end, the text before
left as it is, comments included), and of two pins of one repository and branch the last
counts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from store.atomic import write_text_atomic
from store.locks import named_lock
from store.toml_in import tables_of
from store.vocab.errors import GenebError
from store.vocab.revisions import commit_of, is_pinned

if TYPE_CHECKING:
    from store.catalog import ModelMeta
    from store.paths import StorePaths

DEFAULT_BRANCH = "main"     # what a hub model without a revision runs (huggingface_hub's)
HEADER = """\
# The commits this store runs hub code at: one [[pin]] per repository (hub_id) and branch.
# `geneb-engine fill --trust-remote-code` and `fetch-models` add one when they resolve a branch;
# every later run of a model of that repository and branch runs `commit`. Edit `commit` to run
# other code, or remove the pin to resolve the branch again at the next trusted run.
"""
_FIELDS = ("hub_id", "branch", "commit", "pinned")


@dataclass(frozen=True)
class Pin:
    """The commit a hub repository's branch (or tag) runs at in this store; `pinned` says when
    and how it was resolved."""

    hub_id: str
    branch: str
    commit: str
    pinned: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return self.hub_id, self.branch


def branch_of(revision: str | None) -> str:
    """The branch or tag a revision that names no commit stands for (main when None)."""
    return revision or DEFAULT_BRANCH


def read_pins(paths: StorePaths) -> dict[tuple[str, str], Pin]:
    """The store's pins by (hub id, branch), the last of a key winning; none without the file.
    A file that cannot be used is one GenebError naming it and the entry."""
    file = paths.pins
    if not file.exists():
        return {}
    entries = tables_of(file, "pin", "one [[pin]] per repository and branch")
    pins: dict[tuple[str, str], Pin] = {}
    for i, e in enumerate(entries, 1):
        where = f"{file}: pin {i}"
        if unknown := sorted(set(e) - set(_FIELDS)):
            raise GenebError(f"{where}: unknown field(s) {unknown}; allowed: {list(_FIELDS)}")
        for name in ("hub_id", "branch", "commit", "pinned"):
            if not isinstance(e.get(name, ""), str) or (name != "pinned" and not e.get(name)):
                raise GenebError(f"{where}: '{name}' must be a non-empty string")
        if not is_pinned(e["commit"]):
            raise GenebError(f"{where}: commit {e['commit']!r} is not a commit (40 hex "
                             "characters)")
        pin = Pin(e["hub_id"], e["branch"], commit_of(e["commit"]), e.get("pinned", ""))
        pins[pin.key] = pin
    return pins


def pinned(model: ModelMeta, pins: dict[tuple[str, str], Pin]) -> ModelMeta:
    """`model` at the commit the store pins for its repository and branch; as it is when it
    names a commit itself, loads from a folder, or has no pin."""
    if model.path or not model.hub_id or is_pinned(model.revision):
        return model
    pin = pins.get((model.hub_id, branch_of(model.revision)))
    return model if pin is None else replace(model, revision=pin.commit)


def _toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's; DEL is escaped too)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def record_pins(paths: StorePaths, pins: list[Pin]) -> None:
    """Append `pins` to the store's pins file (created with its header), skipping those it
    holds already; read, appended and written atomically under the `pins` lock."""
    if not pins:
        return
    with named_lock(paths, "pins"):
        file = paths.pins
        held = read_pins(paths)
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = HEADER
        new = [p for p in pins if p.key not in held or held[p.key].commit != p.commit]
        if not new:
            return
        if not text.endswith("\n"):
            text += "\n"
        for p in new:
            text += "\n[[pin]]\n" + "".join(
                f"{name} = {_toml_string(getattr(p, name))}\n" for name in _FIELDS)
        write_text_atomic(file, text)
