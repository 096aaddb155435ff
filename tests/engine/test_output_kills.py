"""Output folders survive `kill -9`: `geneb-engine site -o S` and `report --figures S` killed at
random moments of a rebuild (a random write step of `store.output_folder`, or a random time)
leave S present, the user's files in it untouched and every file of the output the previous
build's or the new one's; the rerun leaves exactly the new output, its marker, the user's files
and nothing else (no temporary file, nothing beside S). Every run is a real process."""

from __future__ import annotations

import contextlib
import io
import json
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from engine.cli import main
from store.atomic import TEMP_NAME
from store.output_folder import MARKER
from tests.engine.processes import ROOT, env_of
from tests.helpers import digest, sweep_size

KILLS = sweep_size(full=20, sampled=3)      # per command
USER_FILES = {"README.md": "# our leaderboard\n", "CNAME": "geneb.example.org\n",
              ".git/HEAD": "ref: refs/heads/main\n", ".git/objects/ab/cdef": "blob",
              "notes.png": "my own figure"}
COMMANDS = {"site": ("site", "-o"), "figures": ("report", "--figures")}
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="SIGKILL of a process group")


def _cmd(command: str, store: Path, out: Path) -> list[str]:
    name, option = COMMANDS[command]
    return [sys.executable, "-m", "engine.cli", name, "--store", str(store), "--resamples", "0",
            option, str(out)]


def _build_here(command: str, store: Path, out: Path) -> None:
    """A build in this process (cheaper than a process: no start-up), where no kill is meant:
    the reference builds, the first one and the reruns."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        rc = main(_cmd(command, store, out)[3:])
    assert rc == 0, stderr.getvalue()


def _output(folder: Path) -> dict[str, str]:
    """The output's files in `folder` (name -> sha256): all but the user's, the marker and
    temporary files."""
    return {n: d for n, d in digest(folder).items() if d != "dir" and n not in USER_FILES
            and n != MARKER and not TEMP_NAME.match(Path(n).name)}


def _temps(folder: Path) -> list[str]:
    return [p.relative_to(folder).as_posix() for p in folder.rglob("*")
            if TEMP_NAME.match(p.name)]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_output_killed_midway_is_the_old_or_the_new_one(small_stores, tmp_path, command):
    stores = (small_stores["four"], small_stores["one"])    # builds that differ in files
    out = tmp_path / "here" / "out"
    _build_here(command, stores[0], out)
    _build_here(command, stores[1], tmp_path / "alone" / "out")
    builds = [_output(out), _output(tmp_path / "alone" / "out")]    # each build's output
    assert set(builds[0]) != set(builds[1])          # one has files the other has not
    wall = None            # of a process killed at its last steps: about a whole run's
    for name, text in USER_FILES.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    mine = {n: d for n, d in digest(out).items() if n in USER_FILES}
    rng = random.Random(20261206 + len(command))
    mixed = 0              # kills that left some files of each build (the swap's middle)
    for kill in range(KILLS):
        new = (kill + 1) % 2                              # the build this round makes
        old_files, new_files = builds[1 - new], builds[new]
        steps = 2 * len(new_files) + len(set(old_files) - set(new_files)) + 2
        if kill % 2 == 0:      # a random write step (store.output_folder's failpoints)
            step = rng.randint(1, steps)
            what = f"kill {kill}: step {step} of {steps}"
            start = time.perf_counter()
            killed = subprocess.run(_cmd(command, stores[new], out), cwd=ROOT,
                                    env=env_of(uuid.uuid4().hex,
                                               GENEB_FAILPOINT=f"output-step:{step}"),
                                    capture_output=True, text=True, timeout=300)
            assert killed.returncode == -signal.SIGKILL, f"{what}: {killed.stderr}"
            wall = max(wall or 0, time.perf_counter() - start)
        else:                  # a random time of an uninterrupted run
            delay = rng.uniform(0.2, wall)
            what = f"kill {kill}: at {delay:.2f} s"
            proc = subprocess.Popen(_cmd(command, stores[new], out), cwd=ROOT,
                                    env=env_of(uuid.uuid4().hex), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
            proc.wait(60)
        assert out.is_dir(), f"{what}: the folder is gone"
        assert {n: d for n, d in digest(out).items() if n in USER_FILES} == mine, what
        now = _output(out)
        for name, d in now.items():
            assert d in (old_files.get(name), new_files.get(name)), f"{what}: {name} is neither"
        mixed += now not in (old_files, new_files)
        if (out / MARKER).exists():
            json.loads((out / MARKER).read_text())          # whole, never half written
        _build_here(command, stores[new], out)
        assert _output(out) == new_files, f"{what}: the rerun is not the new output"
        assert {n: d for n, [d] in json.loads((out / MARKER).read_text())["files"].items()} \
            == new_files, what
        assert {n: d for n, d in digest(out).items() if n in USER_FILES} == mine, what
        assert _temps(out) == [], f"{what}: temporary files left"
        assert [p.name for p in out.parent.iterdir()] == ["out"], f"{what}: leftovers beside"
    assert mixed >= 1, "no kill landed in the middle of a swap: retune the kills"
