"""The user's TOML files of a store (`models.toml`, `pins.toml`): the array of tables each
holds, read with one line per problem naming the file."""

from __future__ import annotations

import tomllib
from pathlib import Path

from store.vocab.errors import GenebError


def tables_of(file: Path, key: str, one: str) -> list[dict]:
    """The tables of `file`'s array `key` ([] when it has none); one GenebError naming the file
    when it cannot be read, is not TOML, or `key` is not an array of tables (`one` says what
    each table is, e.g. "one [[model]] per model")."""
    try:
        with open(file, "rb") as f:
            entries = tomllib.load(f).get(key, [])
    except tomllib.TOMLDecodeError as exc:
        raise GenebError(f"{file}: not valid TOML ({exc})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GenebError(f"{file}: cannot be read ({exc})") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise GenebError(f"{file}: '{key}' must be a list of tables, {one}")
    return entries
