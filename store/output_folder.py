"""The folders a command writes its output into (`site -o DIR`, `report --figures DIR`,
`leaderboard -o DIR`, `data variants|long-range -o DIR`): one rule
for where such a folder may be, what in it the command owns, and how a new output replaces the
previous one.

**Where.** Refused, in one line, before anything is computed: an empty path (`''` names no
folder; it is most often an unset variable), the root folder, the home folder, the store (the
one the command reads, resolved as every command resolves it: `store.paths`) and any folder
inside it, a file, a folder holding another command's output, and the current folder unless it
is empty or already this command's output (a folder full of a project's files is more likely a
slip than a wish; name the folder from elsewhere, or give a new one).

**What it owns.** `MARKER` (`.geneb-output.json`) records which command wrote the folder and
every file it wrote there (relative name -> sha256). A build writes, replaces and removes only
those files; everything else (a README, a CNAME, `.git/`, notes) is the user's and kept. A name
the build must write that is taken by something it did not write, or by a file of its own that
was changed since, is refused before anything is written, naming it. An owned file the new build
does not produce is removed, unless it was changed since (then it is the user's, and kept). A
folder written before the marker existed is recognised by the command's `legacy` reader (the
names that version wrote there); its files are taken as written.

**The swap.** 1. Every new file is written beside its final name under a temporary name
(`store.atomic.temp_path`) and fsynced (several at once): a failure here removes them, the
previous output untouched. 2. The marker records, for each name, the previous and the new
digest. 3. Each file is renamed over its final name (`os.replace`), the entry file (`last`)
last. 4. Owned files the new build does not produce are removed. 5. The marker records the new
files alone. So the folder never disappears, and a reader sees each file whole, the previous
build's or the new one's (during a build, a mix of the two). A build killed midway leaves such
a mix and temporary files; the next build (one at a time: it holds `flock` on the folder)
removes every temporary file it finds beside the names it owns (`store.sweep.abandoned`) and
completes the output.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from store.atomic import fsync_dir, temp_path, write_bytes_atomic
from store.failpoints import reach
from store.folders import named_folder
from store.paths import StorePaths
from store.sweep import abandoned, remove
from store.vocab.errors import GenebError

MARKER = ".geneb-output.json"
FORMAT = 1
# A name an output may hold: relative, `/`-separated parts of letters, digits and `._-`, none
# of them `.` or `..` (what the marker and a legacy reader give is untrusted).
NAME = re.compile(r"^(?!.*(?:^|/)\.{1,2}(?:/|$))[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)*$")
_DIGEST = re.compile(r"^[0-9a-f]{64}$")
_SHOWN = 3            # conflicting names a refusal names before "and N more"
_WRITERS = 16         # threads writing a build's files


def _never(_folder: Path) -> Iterable[str] | None:
    return None


@dataclass(frozen=True)
class OutputFolder:
    """A checked output folder (`output_folder`): the option and path as the user gave them,
    the path, the command recorded as its writer, and the reader of the names an older version
    of that command wrote there without a marker (None: not such a folder)."""
    option: str
    given: str
    path: Path
    generator: str
    legacy: Callable[[Path], Iterable[str] | None] = field(default=_never, compare=False)

    def refuse(self, problem: str) -> GenebError:
        return GenebError(f"{self.option} {self.given}: {problem}")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def output_folder(option: str, given: str, *, generator: str, store: StorePaths, is_for: str,
                  legacy: Callable[[Path], Iterable[str] | None] = _never) -> OutputFolder:
    """`given` checked as the output folder of `generator` (see the module docstring, "Where");
    `is_for` ends each refusal (what the folder is for, e.g. "give the folder to write the site
    into"). One GenebError naming `option` and `given` when it cannot be used."""
    if not given.strip():
        raise GenebError(f"{option} '': an empty path names no folder; {is_for}")
    path = named_folder(option, given, is_for, may_be_missing=True)
    out = OutputFolder(option, given, path, generator, legacy)
    where = path.resolve()
    home = _home()
    if where == Path(where.anchor):
        raise out.refuse(f"is the root folder; {is_for}")
    if where == home:
        raise out.refuse(f"is your home folder; {is_for}")
    if where == store.root or store.root in where.parents:
        raise out.refuse(f"is {'' if where == store.root else 'inside '}the store "
                         f"{store.root}, which holds only what geneb keeps there; {is_for} "
                         "(outside the store)")
    owned = _owned(out)      # a marker of another command, or one that cannot be read: refused
    if where == _cwd() and owned is None and any(path.iterdir()):
        raise out.refuse(f"is the current folder, which holds files {generator} did not "
                         f"write; {is_for} (a new or empty one, e.g. {option} output)")
    return out


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except RuntimeError:          # no home folder known
        return None


def _cwd() -> Path | None:
    try:
        return Path.cwd().resolve()
    except OSError:               # the current folder was removed
        return None


def _read_marker(out: OutputFolder) -> dict | None:
    """The marker's document (None: the folder has none); a GenebError when it is not one this
    command can read as its own."""
    file = out.path / MARKER
    if not file.exists():
        return None
    try:
        doc = json.loads(file.read_bytes())
        generator, files = doc["generator"], doc["files"]
        valid = (doc["format"] == FORMAT and isinstance(generator, str)
                 and isinstance(files, dict)
                 and all(isinstance(k, str) and NAME.match(k) and k != MARKER
                         and isinstance(v, list) and v
                         and all(isinstance(d, str) and _DIGEST.match(d) for d in v)
                         for k, v in files.items()))
    except (OSError, ValueError, TypeError, KeyError) as exc:
        valid, why = False, f" ({exc})"
    else:
        why = ""
    if not valid:
        raise out.refuse(f"its {MARKER} (the record of the files geneb wrote there) cannot be "
                         f"read{why}; remove the files geneb wrote there and that record, or "
                         "give another folder")
    if generator != out.generator:
        raise out.refuse(f"holds the output of `{generator}` (its {MARKER}); give another "
                         "folder")
    return files


def _owned(out: OutputFolder) -> dict[str, list[str] | None] | None:
    """Name -> the digests it was written with (None: written before the marker existed, any
    content), of every file the command owns in the folder; None when it owns none (no marker,
    and no folder an older version wrote)."""
    if not out.path.is_dir():
        return None
    files = _read_marker(out)
    if files is not None:
        return files
    names = out.legacy(out.path)
    if names is None:
        return None
    return {name: None for name in names if NAME.match(name) and name != MARKER}


def _file_digest(path: Path) -> str | None:
    """The digest of a regular file at `path` (not through a link); None for anything else."""
    try:
        if not path.is_file() or path.is_symlink():
            return None
        return digest(path.read_bytes())
    except OSError:
        return None


def _conflicts(out: OutputFolder, files: Mapping[str, bytes],
               owned: Mapping[str, list[str] | None]) -> tuple[list[str], dict[str, str]]:
    """(the names the build must write that are taken by what it does not own, the owned files
    on disk as they are: name -> digest, those changed since left out: the user's now)."""
    mine: dict[str, str] = {}
    for name, digests in owned.items():
        found = _file_digest(out.path / name)
        if found is not None and (digests is None or found in digests):
            mine[name] = found
    taken = []
    for name, data in files.items():
        path = out.path / name
        parents = [p for p in path.relative_to(out.path).parents if p != Path(".")]
        if any(os.path.lexists(out.path / p) and ((out.path / p).is_symlink()
                                                  or not (out.path / p).is_dir())
               for p in parents):
            taken.append(name)
        elif os.path.lexists(path) and name not in mine and _file_digest(path) != digest(data):
            taken.append(name)
    return sorted(taken), mine


@contextmanager
def _alone(folder: Path):
    """Hold `flock` on the folder itself: one build of it at a time (the kernel releases it
    when the holder dies)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _leftovers(folder: Path, names: Iterable[str]) -> list[Path]:
    """Temporary files of interrupted builds beside the names a build owns (and the marker)."""
    found = []
    for parent in {(folder / n).parent for n in [*names, MARKER]}:
        try:
            entries = os.listdir(parent)
        except OSError:
            continue
        found += [parent / e for e in entries if abandoned(e, alone=True)]
    return found


def _marker(out: OutputFolder, files: Mapping[str, Iterable[str]]) -> None:
    """Write the marker: the generator, and each name with its digests (one line a file)."""
    lines = [f" {json.dumps(name)}: {json.dumps(sorted(set(d)))}"
             for name, d in sorted(files.items())]
    text = (f'{{"generator": {json.dumps(out.generator)}, "format": {FORMAT}, "files": {{\n'
            + ",\n".join(lines) + "\n}}\n")
    reach("output-step")
    write_bytes_atomic(out.path / MARKER, text.encode())


def _write_temp(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def write_output(out: OutputFolder, files: Mapping[str, bytes], *, last: str) -> None:
    """Write `files` (relative name -> bytes) as the folder's new output (see the module
    docstring, "What it owns" and "The swap"), `last` (the entry page, the index) renamed into
    place after the others. One GenebError naming the option and the folder when a name is
    taken or a write fails (before the renames: the previous output as it was)."""
    assert all(NAME.match(n) and n != MARKER for n in files) and last in files
    swapping = False
    try:
        out.path.mkdir(parents=True, exist_ok=True)
        with _alone(out.path):
            owned = _owned(out) or {}
            taken, mine = _conflicts(out, files, owned)
            if taken:
                raise out.refuse(_taken(out, taken))
            remove(_leftovers(out.path, [*owned, *files]))
            new = {name: digest(data) for name, data in files.items()}
            temps = _write_all(out, files)
            try:
                _marker(out, {n: {d for d in (mine.get(n), new.get(n)) if d}
                              for n in {*mine, *new}})
            except BaseException:
                remove(list(temps.values()))
                raise
            swapping = True
            for name in sorted(files, key=lambda n: (n == last, n)):
                reach("output-step")
                os.replace(temps[name], out.path / name)
            for name in sorted(set(mine) - set(new)):
                reach("output-step")
                (out.path / name).unlink(missing_ok=True)
            for parent in {(out.path / n).parent for n in files}:
                fsync_dir(parent)
            _marker(out, {n: [d] for n, d in new.items()})
    except OSError as exc:
        state = ("it holds some files of the new output and the others of the previous one; "
                 "run again" if swapping else "the previous output is as it was")
        raise out.refuse(f"cannot write ({exc.strerror or exc}); {state}") from None


def _taken(out: OutputFolder, taken: list[str]) -> str:
    one = len(taken) == 1
    more = f" and {len(taken) - _SHOWN} more" if len(taken) > _SHOWN else ""
    return (f"{', '.join(taken[:_SHOWN])}{more} {'is' if one else 'are'} not what "
            f"{out.generator} wrote there (or changed since); move {'it' if one else 'them'} "
            "away, or give another folder; nothing was written")


def _write_all(out: OutputFolder, files: Mapping[str, bytes]) -> dict[str, Path]:
    """Every file under a temporary name beside its final one, written and fsynced by
    `_WRITERS` threads (parallel fsyncs share the filesystem's journal commits: a site's 150
    files in a fraction of the time of one after another): name -> temporary path. On any
    failure the temporary files are removed (the folders created for them stay: empty)."""
    temps = {name: temp_path(out.path / name) for name in files}
    try:
        with ThreadPoolExecutor(_WRITERS) as pool:
            done = []
            for name, data in files.items():
                (out.path / name).parent.mkdir(parents=True, exist_ok=True)
                reach("output-step")
                done.append(pool.submit(_write_temp, temps[name], data))
            for future in done:
                future.result()
    except BaseException:
        remove(list(temps.values()))
        raise
    return temps
