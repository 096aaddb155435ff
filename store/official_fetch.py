"""Download the 40 official submissions at a pinned commit of the GENEB repository.

The files land in `<store>/reference/official-submissions/` and stay there, so a later
`geneb-engine import --official` works offline. Files already there are not downloaded again.
Any network error ends in one message naming what to download, where to put it and the command
that imports the local copies.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

from store.atomic import write_bytes_atomic
from store.catalog import official_model_ids
from store.errors import GenebError
from store.ids import safe_name
from store.paths import StorePaths

OFFICIAL_REPO = "darlednik/GENEB"
OFFICIAL_COMMIT = "e14bb8208e57f01f7d809a08dc0b3e31174d6f25"
RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/submissions/{name}"
TIMEOUT_S = 30


def official_dir(paths: StorePaths) -> Path:
    return paths.root / "reference" / "official-submissions"


def official_file_names() -> list[str]:
    return sorted(f"{safe_name(m)}.json" for m in official_model_ids())


def fetch_url(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
        return response.read()


def _offline_message(dest: Path, url: str, exc: Exception) -> str:
    names = official_file_names()
    return (
        f"cannot download {url} ({exc}). Without network: download the {len(names)} files "
        f"submissions/<model_id>.json of https://github.com/{OFFICIAL_REPO} at commit "
        f"{OFFICIAL_COMMIT} (e.g. `git clone https://github.com/{OFFICIAL_REPO} && git -C GENEB "
        f"checkout {OFFICIAL_COMMIT}`), put them in {dest}, then run "
        f"`geneb-engine import {dest}`"
    )


def fetch_official_submissions(paths: StorePaths) -> list[Path]:
    """The 40 official submission files, downloading those not yet in `official_dir(paths)`."""
    dest = official_dir(paths)
    fetched: dict[str, bytes] = {}
    for name in official_file_names():
        if (dest / name).exists():
            continue
        url = RAW_URL.format(repo=OFFICIAL_REPO, commit=OFFICIAL_COMMIT, name=name)
        try:
            fetched[name] = fetch_url(url)
        except OSError as exc:  # URLError, HTTPError, timeouts and resets are all OSErrors
            raise GenebError(_offline_message(dest, url, exc)) from None
    dest.mkdir(parents=True, exist_ok=True)
    for name, blob in fetched.items():
        write_bytes_atomic(dest / name, blob)
    return [dest / name for name in official_file_names()]
