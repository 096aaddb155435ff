"""The one rule for task and model ids: what may name a task or a model in the store.

Ids become path components (through `safe_name`), so `.` and `..` would escape the store,
and they appear in one-line messages and CSV cells. An id is refused when it is empty (or only
spaces), is `.` or `..`, or holds `/`, `\\`, NUL or another control or non-printing character
(line and paragraph separators, unpaired surrogates from undecodable file names). A model id may
be a Hugging Face hub id `org/name`: one `/` between two parts that each follow the rule.
"""

from __future__ import annotations

import hashlib
import re

from store.vocab.errors import GenebError

ID_RULE = "ids are non-empty, not '.' or '..', and hold no '/', '\\' or control characters"


def _unprintable(value: str) -> str | None:
    """The first control or non-printing character of `value` (a space is fine)."""
    return next((c for c in value if not (c == " " or c.isprintable())), None)


def _part_problem(value: str) -> str | None:
    if not value.strip():
        return "it is empty"
    if value in (".", ".."):
        return f"{value!r} is reserved: in a path it names a folder"
    bad = _unprintable(value) or next((c for c in value if c in "/\\"), None)
    if bad is not None:
        return f"it holds the character {bad!r}"
    return None


def id_problem(kind: str, value) -> str | None:
    """Why `value` cannot be a `kind` id (task or model), or None when it can."""
    if value is None:
        return "it is missing"
    if not isinstance(value, str):
        return f"it is not a string ({type(value).__name__})"
    if kind == "model" and value.count("/") == 1:          # a hub id: org/name
        for part in value.split("/"):
            if (problem := _part_problem(part)) is not None:
                return f"{problem} (in the hub id form org/name)"
        return None
    return _part_problem(value)


def check_id(kind: str, value, where: str, *, fix: str | None = None) -> str:
    """`value` when it can be a `kind` id; else one GenebError `<where>: <kind> id ... ; <fix>`."""
    problem = id_problem(kind, value)
    if problem is not None:
        rule = ID_RULE + ("; a model id may also be a hub id org/name" if kind == "model" else "")
        raise GenebError(f"{where}: {kind} id {value!r} cannot be used ({problem}); "
                         f"{fix or rule}")
    return value


def shown(text: str) -> str:
    """`text` for a one-line message: as it is when printable, else its repr."""
    return text if _unprintable(text) is None else repr(text)


def check_name(kind: str, value: str, where: str, *, fix: str) -> str:
    """A name that may also be a path (`--models DIR`): only empty names and control or
    non-printing characters are refused (NUL would crash the file-system calls)."""
    bad = _unprintable(value)
    if value.strip() and bad is None:
        return value
    problem = "it is empty" if bad is None else f"it holds the character {bad!r}"
    raise GenebError(f"{where}: {kind} {value!r} cannot be used ({problem}); {fix}")


_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def safe_name(name: str) -> str:
    """A file-system-safe form of a model or task id (as the official validator does)."""
    return _SAFE.sub("_", name)


def path_part(name: str) -> str:
    """A path component for an id: `safe_name`, plus a short hash of the id when that changed
    it (so `a/b` and `a_b` never share a folder)."""
    safe = safe_name(name)
    if safe == name:
        return safe
    return f"{safe}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"
