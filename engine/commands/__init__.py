"""One module per `geneb-engine` subcommand; each exposes `register(subparsers)`.

A subcommand's handler takes the parsed args and returns an exit code. Human output goes
through rich; `--json` prints one JSON document (or, for `fill`, one JSON event per line).
"""

COMMANDS: tuple[str, ...] = (
    "demo",
    "fill",
    "status",
    "export",
    "tasks",
    "models",
    "fetch_models",
    "import_",
    "import_embeddings",
    "validate",
    "leaderboard",
    "site",
    "report",
    "recommend",
    "compare",
    "data",
    "doctor",
    "prune",
    "audit",
)


def module_of(command: str) -> str | None:
    """The module of the subcommand named `command` on the command line (`fetch-models`:
    `fetch_models`, `import`: `import_`); None for a name that is none of them."""
    return next((m for m in COMMANDS if m.rstrip("_").replace("_", "-") == command), None)
