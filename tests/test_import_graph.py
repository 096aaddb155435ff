"""The three packages import one another without a cycle; imports inside functions only keep a
heavy or optional package lazy, and say which; store/ and geneb_tui/ keep their rules.

Read from the source with `ast` (nothing is imported). For the cycles, every `import` and
`from ... import` (relative ones too) anywhere in a file, inside functions and `TYPE_CHECKING`
blocks included, is an edge to the project module it names (`from a.b import c` names `a.b.c`
when that is a module, else `a.b`). An import inside a function must carry `# lazy: NAME[, ...]`
(on its line, or alone on the line above) naming a package that importing it at the top would
add to what the module imports at load time (its top-level imports, followed through the
project's modules): a start-up kept short (polars, duckdb, torch...) or an optional dependency
(torch, transformers, ray, huggingface_hub...). Anything else belongs at the top of the file.
"""

from __future__ import annotations

import ast
import re
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "store", "geneb_tui")
# What an import inside a function may keep lazy: packages slow to import or optional.
LAZY_WORTHY = frozenset({
    "torch", "transformers", "huggingface_hub", "safetensors", "ray", "enformer_pytorch",
    "lucaone", "evo", "stripedhyena", "einops", "yaml", "polars", "duckdb", "deltalake",
    "pyarrow", "zarr", "numcodecs", "numpy", "scipy", "sklearn", "textual", "textual_plotext",
    "plotext", "rich", "filelock", "packaging", "matplotlib", "pyfaidx",
})
LAZY = re.compile(r"#\s*lazy:\s*(?P<names>[\w, ]+)")


@cache
def module_files() -> dict[str, Path]:
    """Module name -> file, for every module of the three packages."""
    out = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _targets(module: str, node: ast.Import | ast.ImportFrom, known) -> list[str]:
    """What an import statement names: a project module, or a package's top-level name."""
    if isinstance(node, ast.Import):
        return [a.name if a.name in known else a.name.split(".")[0] for a in node.names]
    if node.level:
        is_package = module_files()[module].name == "__init__.py"
        base = module.split(".")
        base = base[:len(base) - node.level + is_package]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    if target.split(".")[0] not in PACKAGES:
        return [target.split(".")[0]]
    return [f"{target}.{a.name}" if f"{target}.{a.name}" in known else target for a in node.names]


def _walk(node: ast.AST, in_function: bool = False, type_only: bool = False):
    """(import node, inside a function, inside `if TYPE_CHECKING`) for every import."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, in_function, type_only
        nested = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        checking = isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)
        yield from _walk(child, in_function or nested, type_only or checking)


def imports(module: str) -> list[tuple[ast.Import | ast.ImportFrom, bool, bool, list[str]]]:
    known = module_files()
    return [(node, fn, typing, _targets(module, node, known))
            for node, fn, typing in _walk(_tree(known[module]))]


def edges() -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere in its file."""
    known = module_files()
    return {m: {t for *_, ts in imports(m) for t in ts if t in known} - {m} for m in known}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each group of modules that import one another (a strongly connected component of more
    than one module, by Tarjan's algorithm), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def _with_parents(module: str) -> list[str]:
    """Importing `a.b.c` runs `a` and `a.b` first."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


@cache
def loaded(module: str) -> frozenset[str]:
    """The outside packages importing `module` loads: its top-level imports (not inside a
    function or `TYPE_CHECKING`), followed through the project's modules and their packages."""
    known = module_files()
    seen: set[str] = set()
    outside: set[str] = set()
    todo = _with_parents(module)
    while todo:
        m = todo.pop()
        if m in seen or m not in known:
            continue
        seen.add(m)
        for _, in_function, typing, targets in imports(m):
            if in_function or typing:
                continue
            for t in targets:
                if t.split(".")[0] in PACKAGES:
                    todo += [p for p in _with_parents(t) if p in known]
                else:
                    outside.add(t)
    return frozenset(outside)


def _lazy_names(lines: list[str], node: ast.AST) -> set[str] | None:
    """The packages the `# lazy:` comment of an import names (None: no such comment)."""
    for line in (lines[node.lineno - 1], lines[node.lineno - 2] if node.lineno > 1 else ""):
        m = LAZY.search(line)
        if m and (line is lines[node.lineno - 1] or line.strip().startswith("#")):
            return {n.strip() for n in m["names"].split(",") if n.strip()}
    return None


def lazy_import_problems() -> list[str]:
    known = module_files()
    problems = []
    for module, path in known.items():
        lines = path.read_text().splitlines()
        for node, in_function, _, targets in imports(module):
            if not in_function:
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            adds = set().union(*(loaded(t) if t in known else {t} for t in targets))
            adds = (adds - loaded(module)) & LAZY_WORTHY
            named = _lazy_names(lines, node)
            if not adds:
                problems.append(f"{where}: keeps nothing lazy (import it at the top)")
            elif named is None:
                problems.append(f"{where}: no `# lazy: ...` comment (it keeps "
                                f"{', '.join(sorted(adds))} lazy)")
            elif not named & adds:
                problems.append(f"{where}: `# lazy: {', '.join(sorted(named))}` but it keeps "
                                f"{', '.join(sorted(adds))} lazy")
    return problems


def test_the_graph_is_read():
    graph = edges()
    assert "engine.data" in graph["engine.suites"]                  # from engine.data import ...
    assert "engine.mini" in graph["engine.suites"]                  # from engine import mini
    assert "store.vocab.errors" in graph["store.paths"]
    assert "geneb_tui.core.view_cache" in graph["geneb_tui.app"]    # inside a function
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}) == [["a", "b", "c"]]
    assert "polars" in loaded("store.db") and "polars" not in loaded("store.vocab")
    assert "torch" not in loaded("engine.cli")


def test_no_import_cycle_among_the_packages_modules():
    graph = edges()
    found = cycles(graph)
    shown = ["; ".join(f"{m} imports {', '.join(sorted(graph[m] & set(group)))}"
                       for m in group) for group in found]
    assert not found, "import cycles:\n" + "\n".join(shown)


def test_imports_inside_functions_keep_a_heavy_or_optional_package_lazy_and_say_which():
    problems = lazy_import_problems()
    assert not problems, "\n".join(problems)


def test_the_lazy_rule_finds_each_kind_of_problem(tmp_path, monkeypatch):
    """Planted imports inside functions: one that keeps nothing lazy, one with no comment, one
    whose comment names the wrong package, and one as it should be."""
    pkg = tmp_path / "store"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "heavy.py").write_text("import polars\n")
    (pkg / "planted.py").write_text(
        "def a():\n    import json\n\n"
        "def b():\n    from store import heavy\n\n"
        "def c():\n    from store import heavy  # lazy: torch\n\n"
        "def d():\n    from store import heavy  # lazy: polars\n")
    this = sys.modules[__name__]
    monkeypatch.setattr(this, "ROOT", tmp_path)
    monkeypatch.setattr(this, "PACKAGES", ("store",))
    for f in (module_files, loaded, _tree):
        f.cache_clear()
    try:
        found = [p.split(": ", 1)[1] for p in lazy_import_problems()]
    finally:
        for f in (module_files, loaded, _tree):
            f.cache_clear()
    assert found == ["keeps nothing lazy (import it at the top)",
                     "no `# lazy: ...` comment (it keeps polars lazy)",
                     "`# lazy: torch` but it keeps polars lazy"]


FORBIDDEN: dict[str, tuple[str, ...]] = {
    "store": ("engine", "geneb_tui", "torch", "transformers", "textual"),
    "store/analyses": ("engine",),   # the analysis layer: read by the engine, never reading it
    "geneb_tui": ("engine", "torch", "transformers"),
    "geneb_tui/core": ("textual", "textual_plotext"),
}


def top_level_imports(path: Path) -> set[str]:
    """The top-level package of every absolute import in a file, anywhere in it."""
    out = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            out.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_the_packages_keep_their_import_rules():
    """engine -> store <- geneb_tui: the store and the dashboard never import the engine, torch
    or transformers (not even inside a function), the dashboard's core never imports Textual."""
    broken = [f"{path.relative_to(ROOT)} imports {', '.join(sorted(bad))}"
              for folder, banned in FORBIDDEN.items()
              for path in sorted((ROOT / folder).rglob("*.py"))
              if (bad := top_level_imports(path) & set(banned))]
    assert not broken, "\n".join(broken)
    assert "torch" in top_level_imports(ROOT / "engine/encoders/streaming.py")   # it reads imports


def test_only_the_command_line_imports_the_commands():
    """engine/commands parses, calls the analysis layer and prints: nothing but the CLI
    (engine/cli.py and the commands themselves) imports it, inside a function included (the
    site's data, the figures and the dashboard read `store.analyses`)."""
    commands = "engine.commands"
    broken = [f"{m} imports {', '.join(sorted(t for t in ts if t.startswith(commands)))}"
              for m, ts in sorted(edges().items())
              if m != "engine.cli" and not m.startswith(commands)
              and any(t == commands or t.startswith(commands + ".") for t in ts)]
    assert not broken, "\n".join(broken)


def test_the_presets_load_before_polars():
    """The analyses' presets (resamples, seed, level) are read by the command line's defaults
    and the dashboard's first frame: importing them, or the layer's package, loads no outside
    package; the CLI and the main table's intervals stay without polars."""
    assert loaded("store.analyses.presets") <= {"__future__"}
    assert loaded("store.analyses") <= {"__future__"}
    assert "polars" not in loaded("engine.cli")
    assert "polars" not in loaded("geneb_tui.core.intervals")
