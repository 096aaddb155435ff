"""The README stays a door and the docs site's generated reference stays complete.

The reference pages are made by the MkDocs hooks in docs/hooks/ (`make docs` builds the site);
here their functions run directly, without a build.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path

import pytest
import yaml

from engine.cli import build_parser as engine_parser
from geneb_tui.cli import build_parser as tui_parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _hook(name: str):
    spec = importlib.util.spec_from_file_location(f"docs_hook_{name}",
                                                  ROOT / "docs" / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cli():
    return _hook("cli_reference")


@pytest.fixture(scope="module")
def pages(cli):
    return cli.pages()


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _nav_uris(nav) -> list[str]:
    out = []
    for entry in nav:
        for value in (entry.values() if isinstance(entry, dict) else [entry]):
            out += _nav_uris(value) if isinstance(value, list) else [value]
    return out


def test_the_readme_is_at_most_250_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_every_relative_link_of_the_readme_resolves_to_a_file():
    targets = LINK.findall(README.read_text(encoding="utf-8"))
    relative = [t.split("#")[0] for t in targets
                if not re.match(r"[a-z]+:", t) and not t.startswith("#")]
    assert len(relative) >= 10           # the links into docs/ and the screenshot
    assert [t for t in relative if not (ROOT / t).is_file()] == []


def test_every_command_has_its_reference_page_in_the_nav(cli, pages):
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    built = cli.on_config(type("Config", (), {"nav": config["nav"]})())
    in_nav = _nav_uris(built.nav)
    expected = ["reference/cli/index.md", "reference/cli/geneb-tui.md",
                *(f"reference/cli/{name}.md" for name in _commands(engine_parser()))]
    assert len(expected) == 21           # geneb-engine, its 19 commands, geneb-tui
    for uri in expected:
        assert uri in pages
        assert uri in in_nav


def _listed(page: str) -> str:
    """The argument lists of a page (its `- \\`--option ...\\`` lines), not its usage block."""
    return "\n".join(line for line in page.splitlines() if line.startswith("- `"))


def test_every_option_of_every_command_is_listed_on_its_page(pages):
    checked = 0
    parsers = {"index": engine_parser(), "geneb-tui": tui_parser(), **_commands(engine_parser())}
    for name, parser in parsers.items():
        listed = _listed(pages[f"reference/cli/{name}.md"])
        nested = [parser] + (list(_commands(parser).values()) if name == "data" else [])
        for p in nested:
            for action in p._actions:
                for option in action.option_strings:
                    assert re.search(rf"`(.*[ ,])?{re.escape(option)}[ ,`]", listed), \
                        f"{name}: {option}"
                    checked += 1
    assert checked > 150


def test_the_data_command_lists_each_verb_with_its_options(pages):
    page = pages["reference/cli/data.md"]
    for verb in ("download", "verify", "where"):
        assert f"## data {verb}" in page
        assert f"usage: geneb-engine data {verb}" in page


def test_defaults_and_choices_come_from_the_parser(pages):
    fill = pages["reference/cli/fill.md"]
    assert "- `--regimes {full,10shot,1shot} [{full,10shot,1shot} ...]`\n" \
           "  (choices: `full`, `10shot`, `1shot`; default: `full 10shot 1shot`)" in fill
    assert "(default: `1e-12`)" in pages["reference/cli/compare.md"]
    seed = pages["reference/cli/report.md"].split("- `--bootstrap-seed S`")[1].split("\n- ")[0]
    assert "(default: `0`)" in seed            # a default of 0 is a default
    assert "(required)" in fill.split("`--models MODEL [MODEL ...]`")[1].split("\n- ")[0]


def test_the_reference_tables_cover_every_field_and_column():
    from store.catalog import ModelMeta
    from store.tables.schema import RESULT_SCHEMA
    from store.vocab.protocol import NAMED

    code = _hook("code_reference")
    fields = code.model_fields()
    for name in ModelMeta.__dataclass_fields__:
        assert f"| `{name}` |" in fields
    assert "| `pooling` | `str` | `mean` | `mean`, `mean-with-padding`, `cls`, `tracks`, " \
           "`trunk` |" in fields
    columns = code.result_columns()
    for name in RESULT_SCHEMA.names:
        assert f"| `{name}` |" in columns
    protocols = code.protocols()
    for group in NAMED.values():
        for p in group:
            assert f"`{p.hash}`" in protocols
    assert "| `geneb-v1` |  | `logreg` | `sklearn-lbfgs` | `1.0` | `1000` |" in protocols


def test_the_screenshots_are_the_snapshot_svgs_without_remote_fonts():
    shots = _hook("snapshots").screenshots()
    assert "screenshots/main_view.svg" in shots
    assert len(shots) == len(list((ROOT / "tests/tui/__snapshots__/test_snapshots").glob("*.svg")))
    for svg in shots.values():
        assert svg.startswith("<svg") and 'local("FiraCode-Regular")' in svg
        assert not re.search(r"url\(\W*https?:", svg)


def _readme_section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    return text.split(f"\n## {title}\n")[1].split("\n## ")[0]


def test_the_readme_lists_the_pages_of_the_sites_nav():
    """The README's Documentation list and mkdocs.yml's nav name the same pages (the command
    reference, generated at build time, is named in words in one and filled by a hook in the
    other)."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = {t.removeprefix("docs/") for t in LINK.findall(_readme_section("Documentation"))
              if t.startswith("docs/")}
    assert listed == set(_nav_uris(config["nav"]))


def _store_tree() -> dict[str, str]:
    """The store guide's folder tree: each top-level entry (`catalog/`, `models.toml`) -> its
    text, continuation lines included."""
    page = (ROOT / "docs" / "guide" / "store.md").read_text(encoding="utf-8")
    block = page.split("```\n<store>/\n")[1].split("```")[0]
    entries: dict[str, str] = {}
    for line in block.splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            name, _, text = line.strip().partition(" ")
            entries[name] = text
        else:
            entries[name] += " " + line.strip()
    beside = page.split("Beside these")[1].split("\n\n")[0]
    return entries | dict.fromkeys(re.findall(r"`([a-z]+/)", beside), "")


def _pattern(documented: str) -> re.Pattern:
    """A documented path (`<model>/<task>/{train,test}`, `source=<source>/*.parquet`) as a
    regular expression: a placeholder or `*` is any name, {a,b} one of its names."""
    out = re.escape(documented)
    out = re.sub(r"<[a-z_]+>|\\\*", "[^/]+", out)
    return re.compile(re.sub(r"\\\{([^}]*)\\\}", lambda m: "(" + m[1].replace(",", "|") + ")",
                             out) + "$")


@pytest.fixture(scope="module")
def written_store(tmp_path_factory):
    """A store as `fill`, `audit` and `import` write it: kmer-3 on one tiny task, that task
    audited, one official submission imported."""
    from engine.cli import main
    from tests.conftest import SUBMISSIONS
    from tests.engine.conftest import write_task

    root = tmp_path_factory.mktemp("layout")
    (root / "suite").mkdir()
    write_task(root / "suite" / "tiny_task.csv", 60, 30, 2, 1)
    store = str(root / "store")
    for argv in (["fill", "--suite", str(root / "suite"), "--models", "kmer-3", "--regimes",
                  "full"], ["audit", "--suite", str(root / "suite")],
                 ["import", str(SUBMISSIONS / "GROVER.json")]):
        assert main([*argv, "--store", store]) == 0
    return root / "store"


def test_the_store_guides_tree_names_what_a_store_holds(written_store):
    tree = _store_tree()
    written = {p.name + "/" if p.is_dir() else p.name for p in written_store.iterdir()}
    assert written - set(tree) == set()
    catalog = {p.name for p in (written_store / "catalog").iterdir()}
    assert catalog == set(re.findall(r"[a-z_]+\.parquet", tree["catalog/"]))
    # embeddings.zarr/: <model>/<task>/{train,test}/{embeddings,labels,done}, every folder
    splits = _pattern(re.search(r"<model>/\S+(?=:)", tree["embeddings.zarr/"])[0])
    zarr = written_store / "embeddings.zarr"
    arrays = [p.relative_to(zarr).as_posix() for p in zarr.glob("*/*/*/*") if p.is_dir()]
    assert len(arrays) == 6 and all(splits.match(a) for a in arrays), arrays
    # results/: _delta_log/ and source=<source>/model=<model>/*.parquet
    files = _pattern(re.search(r"source=\S+\.parquet", tree["results/"])[0])
    results = written_store / "results"
    parquet = [p.relative_to(results).as_posix() for p in results.rglob("*.parquet")
               if "_delta_log" not in p.parts]
    assert len(parquet) == 2 and all(files.match(p) for p in parquet), parquet
    assert "_delta_log/" in tree["results/"] and (results / "_delta_log").is_dir()
