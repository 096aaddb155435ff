"""`store.output_folder` on its own: a marker is untrusted (a name leaving the folder is refused,
never followed), and two builds of one folder at once take turns (each leaves its whole
output, never a mix)."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import pytest

from store.output_folder import MARKER, output_folder, write_output
from store.paths import resolve_store
from store.vocab.errors import GenebError

GENERATOR = "geneb-engine test"


def _folder(path: Path, store: Path):
    return output_folder("-o", str(path), generator=GENERATOR, store=resolve_store(store),
                         is_for="give another folder")


@pytest.mark.parametrize("name", ["../victim", "/tmp/victim", "a/../../victim", "."])
def test_a_marker_naming_a_file_outside_the_folder_is_refused(tmp_path, name):
    victim = tmp_path / "victim"
    victim.write_text("not geneb's")
    out = tmp_path / "out"
    out.mkdir()
    sha = hashlib.sha256(victim.read_bytes()).hexdigest()
    (out / MARKER).write_text(json.dumps({"generator": GENERATOR, "format": 1,
                                          "files": {name: [sha]}}))
    with pytest.raises(GenebError, match=f"its {MARKER} .* cannot be read"):
        _folder(out, tmp_path / "store")
    assert victim.read_text() == "not geneb's"


def test_two_builds_of_one_folder_take_turns(tmp_path):
    """Each build's files differ in every byte and name set; whatever the order, the folder
    ends as one whole build and its marker says which."""
    out = _folder(tmp_path / "out", tmp_path / "store")
    builds = [{f"pages/{k}.html": bytes([n]) * 50_000 for k in range(n, 60 + n)}
              for n in (1, 2)]
    for n, files in enumerate(builds):
        files["index.html"] = f"build {n}".encode()
    threads = [threading.Thread(target=write_output, args=(out, files),
                                kwargs={"last": "index.html"}) for files in builds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    on_disk = {p.relative_to(out.path).as_posix(): p.read_bytes()
               for p in out.path.rglob("*") if p.is_file() and p.name != MARKER}
    assert on_disk in builds
    marker = json.loads((out.path / MARKER).read_text())["files"]
    assert marker == {n: [hashlib.sha256(b).hexdigest()] for n, b in on_disk.items()}
