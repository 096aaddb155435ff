"""What names a commit: the one rule for model revisions (remote code runs only at a commit)
and for the official repository's commits (`import --official --commit`)."""

from __future__ import annotations

import re

_COMMIT = re.compile(r"^[0-9a-fA-F]{40}$")


def commit_of(revision: str | None) -> str | None:
    """The full commit hash `revision` names, in lower case (as git and the Hugging Face hub
    write it, e.g. in a cache's `snapshots/<commit>`); None for a branch, a tag, an abbreviated
    hash or nothing (a branch or tag can move under you)."""
    text = "" if revision is None else str(revision)
    return text.lower() if _COMMIT.match(text) else None


def is_pinned(revision: str | None) -> bool:
    """A full commit hash: what remote code needs."""
    return commit_of(revision) is not None
