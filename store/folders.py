"""The folders a user names by path (a checkpoint, a suite, a data folder): one rule, one wording
for each way such a path can be wrong (a file where the folder should be, no such folder), each
naming the option, the path as given (and where it points, when given relative) and what the
folder is. The store's own folder has its rule in `store.paths.check_store`."""

from __future__ import annotations

from pathlib import Path

from store.vocab.errors import GenebError


def folder_problem(given: str, is_for: str, *, may_be_missing: bool = False) -> str | None:
    """Why `given` cannot be used as a folder (`is_for`: what such a folder is, the fix the
    message ends with), or None when it is one (or, `may_be_missing`, when nothing is there
    yet and it can be created: a folder a command creates)."""
    try:
        path = Path(given).expanduser()
    except RuntimeError as exc:                 # `~user` of no known user
        return f"{exc}; {is_for}"
    try:
        if path.is_dir():
            return None
        if path.exists():
            return f"is a file, not a folder; {is_for}"
        absolute = path.resolve()
    except (OSError, ValueError) as exc:        # a name no file can have, a loop of links
        return f"cannot be read ({exc}); {is_for}"
    if may_be_missing:
        above = absolute.parent
        while not above.exists():
            above = above.parent
        return None if above.is_dir() else f"cannot be created, {above} is a file; {is_for}"
    at = f" ({absolute})" if str(absolute) != given else ""
    return f"no such folder{at}; {is_for}"


def named_folder(option: str, given: str, is_for: str, *, may_be_missing: bool = False) -> Path:
    """`given` as a path when it names a folder (see `folder_problem`), else one GenebError
    `<option> <given>: <what is wrong>; <is_for>`."""
    if (problem := folder_problem(given, is_for, may_be_missing=may_be_missing)) is not None:
        raise GenebError(f"{option} {given}: {problem}")
    return Path(given).expanduser()
