"""The engine's modules import one another without a cycle; store/ and geneb_tui/ keep their rules.

Read from the source with `ast` (nothing is imported): every `import engine...` and
`from engine... import` (relative ones too), at module level or inside a function, is an edge
to the engine module it names (`from engine.a import b` names `engine.a.b` when that is a
module, else `engine.a`).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "engine"


def module_files() -> dict[str, Path]:
    """Module name → file, for every module of the package."""
    out = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imported(module: str, path: Path, known: set[str]) -> set[str]:
    """The other modules of the package that `module` imports anywhere in its file."""
    is_package = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[:len(base) - node.level + is_package]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in known:
                    out.add(sub)
                elif target in known:
                    out.add(target)
    return out - {module}


def edges() -> dict[str, set[str]]:
    files = module_files()
    return {m: imported(m, p, set(files)) for m, p in files.items()}


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


def test_the_graph_is_read():
    graph = edges()
    assert "engine.data" in graph["engine.suites"]                 # from engine.data import ...
    assert "engine.mini" in graph["engine.suites"]                 # from engine import mini, in
    assert "engine.suites" in graph["engine.commands.common"]      # a function
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}) == [["a", "b", "c"]]


def test_no_import_cycle_among_engine_modules():
    graph = edges()
    found = cycles(graph)
    shown = ["; ".join(f"{m} imports {', '.join(sorted(graph[m] & set(group)))}"
                       for m in group) for group in found]
    assert not found, "import cycles among engine modules:\n" + "\n".join(shown)


FORBIDDEN: dict[str, tuple[str, ...]] = {
    "store": ("engine", "geneb_tui", "torch", "transformers", "textual"),
    "geneb_tui": ("engine", "torch", "transformers"),
    "geneb_tui/core": ("textual", "textual_plotext"),
}


def top_level_imports(path: Path) -> set[str]:
    """The top-level package of every absolute import in a file, anywhere in it."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
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
