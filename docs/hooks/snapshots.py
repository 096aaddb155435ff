"""MkDocs hook: the dashboard's screenshots are the SVGs of its snapshot tests.

`tests/tui/__snapshots__/test_snapshots/test_<name>_snapshot.svg` becomes `screenshots/<name>.svg`
of the site at build time (nothing is committed under docs/), so a picture changes when the
dashboard does. Their @font-face rules name a font CDN beside the local font; the copies keep
the local font only, so the site asks no other server for anything.
"""

from __future__ import annotations

import re
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "tests/tui/__snapshots__/test_snapshots"
FOLDER = "screenshots"
_REMOTE_FONT = re.compile(r',\s*url\("https?://[^"]*"\)\s*format\("[^"]*"\)')


def screenshots() -> dict[str, str]:
    """Site path -> SVG text of every snapshot."""
    out = {}
    for svg in sorted(SOURCE.glob("test_*_snapshot.svg")):
        name = svg.name.removeprefix("test_").removesuffix("_snapshot.svg")
        out[f"{FOLDER}/{name}.svg"] = _REMOTE_FONT.sub("", svg.read_text(encoding="utf-8"))
    return out


def on_files(files, config):
    from mkdocs.structure.files import File

    for uri, content in screenshots().items():
        files.append(File.generated(config, uri, content=content))
    return files
