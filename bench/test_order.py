"""The seconds each test file took in a measured run, slowest first, into tests/durations.json:
`make test` runs its files in that order (tests/conftest.py), so that `pytest -n 2 --dist
loadfile` starts the longest files first and no long file is left running alone at the end
(xdist's own order is by number of tests, which put the six monkey runs and the Ray fills last).

    pytest -n 2 --dist loadfile --junitxml=/tmp/junit.xml    # or `make test` with that option
    python bench/test_order.py /tmp/junit.xml

A file the record does not name runs after those it names (new files are measured at the next
record). The order changes no test's outcome, only when it runs.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "tests" / "durations.json"


def file_of(classname: str) -> str | None:
    """The test file of a junit `classname` (`tests.engine.test_cli.TestX`): the longest dotted
    prefix that is a file under the repository."""
    parts = classname.split(".")
    for n in range(len(parts), 0, -1):
        path = Path(*parts[:n]).with_suffix(".py")
        if (ROOT / path).is_file():
            return path.as_posix()
    return None


def seconds_per_file(junit: Path) -> dict[str, float]:
    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(junit).iter("testcase"):
        path = file_of(case.get("classname", ""))
        if path is not None:
            seconds[path] += float(case.get("time", 0))
    return dict(sorted(seconds.items(), key=lambda kv: -kv[1]))


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_file():
        print("usage: python bench/test_order.py JUNIT.xml", file=sys.stderr)
        return 2
    seconds = seconds_per_file(Path(argv[0]))
    RECORD.write_text(json.dumps({k: round(v, 1) for k, v in seconds.items()}, indent=0) + "\n")
    print(f"{len(seconds)} files, {sum(seconds.values()):.0f} s in all -> {RECORD}")
    for path, s in list(seconds.items())[:15]:
        print(f"{s:8.1f} s  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
