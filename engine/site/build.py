"""Writing a site folder: the page templates (`templates/`, package data), the data as
`assets/data.js` (one global, for pages opened from file://, where a browser refuses to
fetch local JSON) and as `site.json`, the official leaderboard's two files when the store has
complete models, one page per model and per task.

The folder is written whole or not at all: built in a temporary folder beside it, then renamed
into place (a previous GENEB site there is replaced; any other non-empty folder is refused)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from store.official.leaderboard import LEADERBOARD_FILES
from store.vocab.errors import GenebError

GENERATOR = "geneb-engine site"   # site.json's `generator`: what marks a folder as a GENEB site
TEMPLATES = Path(__file__).with_name("templates")
ASSETS = ("site.css", "site.js")
DATA_JS = "assets/data.js"
SITE_JSON = "site.json"


def embedded(data: dict) -> str:
    """`data` as the script `assets/data.js`: `window.GENEB_SITE = {...};`, every `<` written
    `\\u003c` (no `</script>` or `<!--` in a store's text can end a script element)."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return f"window.GENEB_SITE = {text.replace('<', chr(92) + 'u003c')};\n"


def site_problem(folder: Path) -> str | None:
    """Why `folder` cannot receive a site, or None: missing, empty, or a previous GENEB site
    (its `site.json` names the generator)."""
    if not folder.exists() or not any(folder.iterdir()):
        return None
    try:
        previous = json.loads((folder / SITE_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        previous = None
    if isinstance(previous, dict) and previous.get("generator") == GENERATOR:
        return None
    return ("is a folder with other files, not a previous GENEB site; give an empty or new "
            "folder (nothing was written)")


def _template(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def _pages(kind: str) -> Callable[[str], str]:
    """The model or task pages: `detail.html`, the shell both share, with the sections of
    `<kind>.html`, read once; each page its key (a `path_part`, letters, digits, `._-` only)
    in `data-key`."""
    page = (_template("detail.html").replace("{{sections}}", _template(f"{kind}.html").rstrip("\n"))
            .replace("{{kind}}", kind))
    return lambda key: page.replace("{{key}}", key)


def _files(data: dict, leaderboard: tuple[dict, dict] | None) -> dict[str, str]:
    """Every file of the site: relative path -> text."""
    files = {"index.html": _template("index.html"),
             **{f"assets/{name}": _template(name) for name in ASSETS},
             DATA_JS: embedded(data),
             SITE_JSON: json.dumps(data, ensure_ascii=False, allow_nan=False,
                                   separators=(",", ":")),
             ".nojekyll": ""}   # GitHub Pages: serve the files as they are
    for kind, items in (("model", data["models"]), ("task", data["tasks"])):
        page = _pages(kind)
        for item in items:
            files[item["page"]] = page(Path(item["page"]).stem)
    if leaderboard is not None:
        files |= {name: json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
                  for name, doc in zip(LEADERBOARD_FILES, leaderboard, strict=True)}
    return files


def write_site(folder: Path, data: dict, leaderboard: tuple[dict, dict] | None) -> int:
    """Write the site into `folder` (see the module docstring); its size in bytes."""
    if (problem := site_problem(folder)) is not None:
        raise GenebError(f"-o {folder}: {problem}")
    parent = folder.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    temp = parent / f".{folder.name}.geneb-site-{os.getpid()}"
    old = parent / f".{folder.name}.geneb-site-old-{os.getpid()}"
    size = 0
    try:
        for name, text in _files(data, leaderboard).items():
            path = temp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            size += path.write_bytes(text.encode("utf-8"))
        if folder.exists():
            folder.rename(old)
        temp.rename(folder)
    except OSError as exc:
        if old.exists() and not folder.exists():
            old.rename(folder)
        raise GenebError(f"-o {folder}: cannot write ({exc.strerror or exc}); the folder is "
                         "as it was") from None
    finally:
        shutil.rmtree(temp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
    return size
