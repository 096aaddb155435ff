"""`geneb-engine demo`: the first command after installing geneb. It runs two commands as they
are (their parser and handler, in this process): `import --official` (the official results,
shipped with geneb, no network) and `fill --suite geneb-mini --models kmer-3 kmer-4 kmer-6 --jobs
auto` (the built-in suite with the weight-free k-mer baselines, a few minutes on a laptop), then
says what to run next. A second run computes nothing: both commands store only what is missing.
"""

from __future__ import annotations

import shutil
import sys
import sysconfig
from pathlib import Path

from engine.cli import build_parser
from engine.commands.common import console
from store.vocab.suites import GENEB_MINI_SUITE

IMPORT = ("import", "--official")
FILL = ("fill", "--suite", GENEB_MINI_SUITE.name, "--models", "kmer-3", "kmer-4", "kmer-6",
        "--jobs", "auto")


def register(sub, common) -> None:
    p = sub.add_parser(
        "demo", parents=[common], help="start here: the official results and a small suite "
                                       "filled with the k-mer baselines",
        description=f"Run `geneb-engine {' '.join(IMPORT)}` then `geneb-engine {' '.join(FILL)}` "
                    "into the store, then show the next commands (the dashboard, the report, "
                    "your own model). Run again, it computes nothing.")
    p.set_defaults(handler=run, changes_store=True)   # engine.cli: store_changed


def run(args) -> int:
    parser = build_parser()
    given = [*(("--store", args.store) if args.store is not None else ()),
             *(("--json",) if args.json else ())]
    for argv in (IMPORT, FILL):
        step = parser.parse_args([*argv, *given])
        if code := int(step.handler(step) or 0):
            return code
    if not args.json:
        store = f" --store {args.store}" if args.store is not None else ""
        tui, engine = command("geneb-tui"), command("geneb-engine")
        steps = [(f"{tui}{store}", "the dashboard over this store"),
                 (f"{engine} report{store}",
                  "the GENEB analyses of the official results, in the terminal"),
                 (f"{engine} fill{store} --suite geneb-mini --models PATH",
                  "your own model: a folder save_pretrained wrote, or a hub id (org/name); "
                  "--suite geneb-v1 after `geneb-engine data download`")]
        width = max(len(command) for command, _ in steps)
        console.print("\nnext:\n" + "\n".join(f"  {command.ljust(width)}   {what}"
                                              for command, what in steps)
                      + (f"\n{line}" if (line := on_path_line()) else ""),
                      markup=False, highlight=False)
    return 0


def _scripts() -> Path:
    """The folder of this installation's console scripts (a virtual environment's bin)."""
    return Path(sysconfig.get_path("scripts"))


def _shown(path: Path) -> str:
    """`path` relative to the current folder when inside it (.venv/bin/geneb-tui), else whole."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def command(name: str) -> str:
    """How to run the console script `name` from here: its name where the shell finds this
    installation's; else its path (`_shown`); else, where it was not installed as a script,
    this interpreter running its module."""
    script = _scripts() / name
    if not script.exists():
        module = {"geneb-tui": "geneb_tui.cli", "geneb-engine": "engine.cli"}[name]
        return f"{sys.executable} -m {module}"
    found = shutil.which(name)
    return name if found and Path(found).resolve() == script.resolve() else _shown(script)


def on_path_line() -> str | None:
    """What to do so that `geneb-tui` and `geneb-engine` run by name where the shell does not
    find them (the virtual environment `make demo` made is not activated); None where it
    does, or where they are no scripts."""
    scripts = _scripts()
    if not (scripts / "geneb-tui").exists() or command("geneb-tui") == "geneb-tui":
        return None
    activate = scripts / "activate"
    how = (f"run `source {_shown(activate)}`" if activate.exists()
           else f"add {scripts} to PATH")
    return (f"(geneb-tui and geneb-engine are in {_shown(scripts)}, which is not on your "
            f"PATH: {how} to run them by name)")
