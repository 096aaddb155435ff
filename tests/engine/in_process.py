"""`geneb-engine` run in the test's process: its exit status and stderr, and the check that a
refused command printed one clear line and left the store as it was."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

from engine.cli import main
from tests.helpers import digest


def outputs(capsys, *argv: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `geneb-engine argv` in this process."""
    capsys.readouterr()
    try:
        rc = main(list(argv))
    except SystemExit as exc:               # argparse errors
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def printed(*argv: str) -> tuple[int, str]:
    """(exit status, stdout) of `geneb-engine argv` in this process, without pytest's `capsys`
    (which a module's fixture cannot have); stderr goes where pytest puts it."""
    out = io.StringIO()
    with redirect_stdout(out):
        rc = main(list(argv))
    return rc, out.getvalue()


def computed(capsys, *argv: str) -> int:
    """The cells a `fill --json` (`argv`) computed, by its `cell` events; exit 0 asserted."""
    rc, out, err = outputs(capsys, *argv)
    assert rc == 0, err
    return sum(e["computed"] for e in map(json.loads, out.splitlines()) if e["event"] == "cell")


def run(capsys, *argv: str) -> tuple[int, str]:
    """(exit status, stderr) of `geneb-engine argv` in this process."""
    rc, _, err = outputs(capsys, *argv)
    return rc, err


def refused(capsys, store: Path, *argv: str, names: tuple[str, ...], lines: int = 1) -> str:
    """Run, and check: exit 2, `lines` line(s) on stderr naming each of `names`, no traceback,
    the store unchanged. Returns stderr."""
    before = digest(store)
    rc, err = run(capsys, *argv)
    assert rc == 2, err
    assert "Traceback" not in err
    assert len(err.splitlines()) == lines and err.endswith("\n"), err
    for name in names:
        assert name in err, (name, err)
    assert digest(store) == before
    return err
