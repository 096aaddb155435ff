"""Writing a site folder: the page templates (`templates/`, package data), the data as
`assets/data.js` (one global, for pages opened from file://, where a browser refuses to
fetch local JSON) and as `site.json`, the official leaderboard's two files when the store has
complete models, one page per model and per task.

The folder is an output folder (`store.output_folder`): the site's files are written beside the
user's (a README, a CNAME, `.git/` are kept), each replaced whole, `index.html` last; a site
written before the folder's marker existed is recognised by its `site.json` (`legacy_names`)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from store.atomic import pid_alive
from store.official.leaderboard import LEADERBOARD_FILES, leaderboard_texts
from store.output_folder import OutputFolder, write_output

GENERATOR = "geneb-engine site"   # the output's writer, in its marker and in site.json
TEMPLATES = Path(__file__).with_name("templates")
ASSETS = ("site.css", "site.js")
DATA_JS = "assets/data.js"
SITE_JSON = "site.json"
ENTRY = "index.html"          # written last: the page a reader opens
# The folders a site build of the version before the marker left beside DIR when killed: the
# new site being written (`.DIR.geneb-site-PID`) and the previous one moved aside (`-old-PID`).
_OLD_BUILD = re.compile(r"^\.(?P<name>.+)\.geneb-site-(?P<old>old-)?(?P<pid>\d+)$")


def embedded(data: dict) -> str:
    """`data` as the script `assets/data.js`: `window.GENEB_SITE = {...};`, every `<` written
    `\\u003c` (no `</script>` or `<!--` in a store's text can end a script element)."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return f"window.GENEB_SITE = {text.replace('<', chr(92) + 'u003c')};\n"


def legacy_names(folder: Path) -> list[str] | None:
    """The files the site of a version before the marker wrote into `folder`, read from its
    `site.json` (the generator named, the pages listed); None when the folder holds no such
    site."""
    try:
        doc = json.loads((folder / SITE_JSON).read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or doc.get("generator") != GENERATOR:
            return None
        pages = [item["page"] for kind in ("models", "tasks") for item in doc[kind]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return [ENTRY, *(f"assets/{name}" for name in ASSETS), DATA_JS, SITE_JSON, ".nojekyll",
            *LEADERBOARD_FILES, *(p for p in pages if isinstance(p, str))]


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
    files = {ENTRY: _template(ENTRY),
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
        files |= leaderboard_texts(leaderboard)
    return files


def write_site(out: OutputFolder, data: dict,
               leaderboard: tuple[dict, dict] | None) -> tuple[int, list[str]]:
    """Write the site into the output folder `out` (see the module docstring): (its size in
    bytes, notes on what builds of an older version left beside it)."""
    notes = _old_builds(out.path)
    files = {name: text.encode("utf-8") for name, text in _files(data, leaderboard).items()}
    write_output(out, files, last=ENTRY)
    return sum(len(b) for b in files.values()), notes


def _old_builds(folder: Path) -> list[str]:
    """Clear what killed builds of the version before the marker left beside `folder`: a
    partial site (only its own files) is removed; a previous site moved aside (it may hold the
    user's files) is moved back when `folder` is missing, else kept and named in a note."""
    notes = []
    folder = folder.absolute()             # as that version named them
    parent = folder.parent
    try:
        entries = sorted(parent.iterdir()) if parent.is_dir() else []
    except OSError:
        return notes
    for entry in entries:
        m = _OLD_BUILD.match(entry.name)
        if m is None or m["name"] != folder.name or pid_alive(int(m["pid"])) \
                or not entry.is_dir() or entry.is_symlink():
            continue
        if not m["old"]:
            shutil.rmtree(entry, ignore_errors=True)
        elif not folder.exists():
            entry.rename(folder)      # the same folder: a rename cannot fail but for a race
        else:
            notes.append(f"{entry} is a previous site an interrupted build of an older version "
                         f"moved aside (it may hold your files); it is kept: move what you "
                         f"want back into {folder} and remove it")
    return notes
