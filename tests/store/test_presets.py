"""The analyses' presets in one place: every reader's resample count, the bootstrap's seed and
the level of the intervals are named in `store/analyses/presets.py` alone, and no function
of the three packages states a level or a resample count of its own as a default."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from store.analyses import presets

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "store" / "analyses" / "presets.py"
# A name that holds a preset: a resample count (not the CLI's upper bound), the seed, the level.
PRESET = re.compile(r"^(\w+_)?RESAMPLES$|^SEED$|^LEVEL$")
BOUNDS = {"MAX_RESAMPLES"}
# A parameter whose default is a preset (0 resamples, "none", is a choice, not a preset).
PARAMETER = re.compile(r"^(n_)?resamples$|^level$")


def _constant(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float) \
        and not isinstance(node.value, bool)


def restated(root: Path = ROOT) -> list[str]:
    """Each place outside the presets' module that names a preset with a number of its own."""
    found = []
    for package in ("engine", "store", "geneb_tui"):
        for path in sorted((root / package).rglob("*.py")):
            if path == HOME:
                continue
            where = path.relative_to(root)
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Assign | ast.AnnAssign):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    for t in targets:
                        if isinstance(t, ast.Name) and PRESET.match(t.id) \
                                and t.id not in BOUNDS and _constant(node.value):
                            found.append(f"{where}:{node.lineno}: {t.id} = "
                                         f"{ast.unparse(node.value)}")
                elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    args = node.args
                    pairs = [*zip(args.args[len(args.args) - len(args.defaults):], args.defaults,
                                  strict=True),
                             *zip(args.kwonlyargs, args.kw_defaults, strict=True)]
                    for arg, default in pairs:
                        if PARAMETER.match(arg.arg) and _constant(default) and default.value:
                            found.append(f"{where}:{node.lineno}: {node.name}({arg.arg}="
                                         f"{ast.unparse(default)})")
    return found


def test_the_presets_are_named_in_one_place():
    found = restated()
    assert not found, "presets restated outside store/analyses/presets.py:\n" + "\n".join(found)


def test_the_rule_finds_a_restated_preset(tmp_path):
    """Planted: a level default, a resample constant and a level constant are found; the CLI's
    bound and a default of 0 resamples are not."""
    package = tmp_path / "store"
    package.mkdir()
    (package / "planted.py").write_text(
        "TABLE_RESAMPLES = 5_000\nLEVEL = 0.95\nMAX_RESAMPLES = 100_000\n"
        "def f(x, level: float = 0.9, resamples: int = 0):\n    pass\n")
    found = [line.split(": ", 1)[1] for line in restated(tmp_path)]
    assert found == ["TABLE_RESAMPLES = 5000", "LEVEL = 0.95", "f(level=0.9)"]


def test_the_presets_values_and_alpha():
    """The values the docs and the report's help state, and the tests' alpha at the level."""
    assert (presets.RESAMPLES, presets.SITE_RESAMPLES, presets.TABLE_RESAMPLES,
            presets.EXAMPLE_RESAMPLES, presets.SEED, presets.LEVEL) == (
        10_000, 1_000, 5_000, 2_000, 0, 0.95)
    assert presets.alpha_of(presets.LEVEL) == 0.05
    assert presets.alpha_of(0.9) == 0.1 and 1 - 0.9 != 0.1   # the float noise rounded off
