"""The official submissions for `geneb-engine import --official`: shipped, or downloaded.

At the pinned commit (`OFFICIAL_COMMIT` of github.com/darlednik/GENEB) the data ships inside the
package (`store.official.data`): the 41 submission files (40 official, 1 self-reported) and
`leaderboard.json` are written into `<store>/reference/official-submissions/`, offline.

Another commit (`--commit SHA`) is downloaded: the 40 official submissions land in
`<store>/reference/official-submissions-<SHA>/` and stay there, so a later run works offline;
files already there are not downloaded again. Any network error ends in one message naming what
to download, where to put it and the command that imports the local copies.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

from store.atomic import write_bytes_atomic
from store.catalog import official_model_ids
from store.official.data import (
    OFFICIAL_COMMIT,
    OFFICIAL_REPO,
    leaderboard_bytes,
    write_official_files,
)
from store.paths import StorePaths
from store.vocab.errors import GenebError
from store.vocab.ids import safe_name
from store.vocab.revisions import commit_of

RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/submissions/{name}"
TIMEOUT_S = 30


def official_dir(paths: StorePaths, commit: str = OFFICIAL_COMMIT) -> Path:
    """Where the official files of `commit` go: `reference/official-submissions/` for the
    pinned (shipped) commit, `reference/official-submissions-<commit>/` for any other."""
    return paths.official_submissions(None if commit == OFFICIAL_COMMIT else commit)


def official_file_names() -> list[str]:
    return sorted(f"{safe_name(m)}.json" for m in official_model_ids())


def pinned_commit(commit: str) -> str:
    """`commit` as a full SHA (lower case), or a GenebError saying what to give."""
    sha = commit_of(commit)
    if sha is None:
        raise GenebError(f"--commit {commit!r}: not a commit SHA; give the full 40-character "
                         f"SHA of a github.com/{OFFICIAL_REPO} commit (the shipped data is at "
                         f"{OFFICIAL_COMMIT})")
    return sha


def fetch_url(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
        return response.read()


def _offline_message(dest: Path, url: str, exc: Exception, commit: str) -> str:
    names = official_file_names()
    return (
        f"cannot download {url} ({exc}). Without network: download the {len(names)} files "
        f"submissions/<model_id>.json of https://github.com/{OFFICIAL_REPO} at commit "
        f"{commit} (e.g. `git clone https://github.com/{OFFICIAL_REPO} && git -C GENEB "
        f"checkout {commit}`), put them in {dest}, then run "
        f"`geneb-engine import {dest}`"
    )


def fetch_official_submissions(paths: StorePaths, commit: str = OFFICIAL_COMMIT) -> list[Path]:
    """The 40 official submission files of `commit`, downloading those not yet in
    `official_dir(paths, commit)`."""
    dest = official_dir(paths, commit)
    fetched: dict[str, bytes] = {}
    for name in official_file_names():
        if (dest / name).exists():
            continue
        url = RAW_URL.format(repo=OFFICIAL_REPO, commit=commit, name=name)
        try:
            fetched[name] = fetch_url(url)
        except OSError as exc:  # URLError, HTTPError, timeouts and resets are all OSErrors
            raise GenebError(_offline_message(dest, url, exc, commit)) from None
    dest.mkdir(parents=True, exist_ok=True)
    for name, blob in fetched.items():
        write_bytes_atomic(dest / name, blob)
    return [dest / name for name in official_file_names()]


def shipped_official_files(paths: StorePaths) -> list[Path]:
    """The shipped submissions (40 official, 1 self-reported) and `leaderboard.json`, written
    into `official_dir(paths)`; no network."""
    dest = official_dir(paths)
    files = write_official_files(dest)
    return [*files, write_bytes_atomic(dest / "leaderboard.json", leaderboard_bytes())]


def official_files(paths: StorePaths, commit: str | None = None) -> list[Path]:
    """The files `import --official [--commit SHA]` imports: the shipped data at the pinned
    commit (offline), the download of the 40 official submissions at any other."""
    commit = OFFICIAL_COMMIT if commit is None else pinned_commit(commit)
    if commit == OFFICIAL_COMMIT:
        return shipped_official_files(paths)
    return fetch_official_submissions(paths, commit)
