"""Byte identity of the analyses' outputs across a refactor: `report --json` (every regime, two
metrics), the static site and `report --figures`, on the official store and on a filled
geneb-mini store.

    python bench/identity.py record DIR   # build the two stores in DIR/stores (once), write
                                          # every output and DIR/manifest.json (their sha256)
    python bench/identity.py check DIR    # write every output again with this checkout's code
                                          # over the same stores; compare with the manifest

Run `record` before a change that must not change any output and `check` after it; `check`
prints each file that differs and exits 1 when one does. The stores are built by this
checkout's `geneb-engine` (`import --official`; `fill --suite geneb-mini --models kmer-3 kmer-4
kmer-6`: a few minutes on two cores) and reused by `check`, so only the analyses run again.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = {
    "official": [("import", "--official")],
    "mini": [("fill", "--suite", "geneb-mini", "--models", "kmer-3", "kmer-4", "kmer-6",
              "--jobs", "auto")],
}
SUITE = {"official": "geneb-v1", "mini": "geneb-mini"}
REPORTS = [(regime, "mcc") for regime in ("full", "10shot", "1shot")] + [("full", "acc")]


def engine(*argv: str, store: Path, out: Path | None = None) -> None:
    done = subprocess.run([sys.executable, "-m", "engine.cli", *argv, "--store", str(store)],
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"geneb-engine {' '.join(argv)}: exit {done.returncode}\n{done.stderr}")
    if out is not None:
        out.write_text(done.stdout)


def outputs(folder: Path) -> dict[str, float]:
    """Write every output of both stores under `folder/out`; seconds per store."""
    out = folder / "out"
    shutil.rmtree(out, ignore_errors=True)
    seconds = {}
    for name, suite in SUITE.items():
        store, start = folder / "stores" / name, time.perf_counter()
        (out / name).mkdir(parents=True)
        for regime, metric in REPORTS:
            engine("report", "--suite", suite, "--regime", regime, "--metric", metric, "--json",
                   store=store, out=out / name / f"report-{regime}-{metric}.json")
        engine("site", "--suite", suite, "-o", str(out / name / "site"), store=store)
        engine("report", "--suite", suite, "--figures", str(out / name / "figures"),
               store=store, out=out / name / "report-figures.txt")
        seconds[name] = time.perf_counter() - start
    return seconds


def digests(folder: Path) -> dict[str, str]:
    out = folder / "out"
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*")) if p.is_file()}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("record", "check"):
        sys.exit(__doc__)
    mode, folder = argv[0], Path(argv[1]).resolve()
    for name, steps in BUILD.items():
        store = folder / "stores" / name
        if mode == "record" and not store.exists():
            store.parent.mkdir(parents=True, exist_ok=True)   # a new store: in a folder that is
            for step in steps:
                engine(*step, store=store)
        elif not store.exists():
            sys.exit(f"{store}: no store; run `record` first")
    seconds = outputs(folder)
    found = digests(folder)
    manifest = folder / "manifest.json"
    if mode == "record":
        manifest.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(found)} files in {manifest} "
              f"({', '.join(f'{k} {v:.1f} s' for k, v in seconds.items())})")
        return 0
    recorded = json.loads(manifest.read_text())
    differ = sorted(k for k in recorded.keys() | found.keys()
                    if recorded.get(k) != found.get(k))
    for name in differ:
        state = ("missing now" if name not in found else "new" if name not in recorded
                 else "differs")
        print(f"  {name}: {state}")
    same = len(recorded) - len([k for k in differ if k in recorded])
    print(f"{same} of {len(recorded)} recorded files byte for byte the same "
          f"({', '.join(f'{k} {v:.1f} s' for k, v in seconds.items())})")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
