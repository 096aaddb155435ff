"""MkDocs hook: the command-line reference, generated from the parsers themselves.

One page per `geneb-engine` subcommand (`engine.cli.build_parser()`), one for the command's own
options and one for `geneb-tui` (`geneb_tui.cli.build_parser()`): usage, description and every
argument with its help, default and choices. The pages are made in `on_files` (nothing is
committed) and listed in the nav section `NAV_SECTION`, which `mkdocs.yml` leaves empty.
`tests/test_docs.py` calls `pages()` and `nav()` directly.
"""

from __future__ import annotations

import argparse
import html

NAV_SECTION = "Command line"
FOLDER = "reference/cli"
WIDTH = 100   # usage lines are wrapped here, whatever the terminal building the site


def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Page name -> parser: `geneb-engine`, each of its subcommands, `geneb-tui`."""
    from engine.cli import build_parser as engine_parser
    from geneb_tui.cli import build_parser as tui_parser

    engine = engine_parser()
    out = {"geneb-engine": engine}
    out.update(_subcommands(engine))
    out["geneb-tui"] = tui_parser()
    return out


def _subparsers_action(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = _subparsers_action(parser)
    return dict(action.choices) if action else {}


def _summaries(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Subcommand -> the one-line help its parent lists it with."""
    action = _subparsers_action(parser)
    return {a.dest: a.help or "" for a in action._choices_actions} if action else {}


def _text(value: str) -> str:
    """Help text as Markdown: `quoted` parts as code, the rest plain (no markup, no HTML, no
    table breaks)."""
    parts = " ".join(value.split()).split("`")
    if len(parts) % 2 == 0:          # an unpaired backtick: all plain
        parts = ["`".join(parts)]
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"`{part}`")
            continue
        part = html.escape(part, quote=False)
        for ch in "\\`*_[]|#":
            part = part.replace(ch, "\\" + ch)
        out.append(part)
    return "".join(out)


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = parser.formatter_class(prog=parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The action's help as `--help` prints it (%(default)s and the like expanded)."""
    if not action.help:
        return ""
    return parser.formatter_class(prog=parser.prog)._expand_help(action)


def _names(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """`--models MODEL [MODEL ...]`, `-o PATH, --output PATH`, `SOURCE`: as `--help` lists it."""
    formatter = parser.formatter_class(prog=parser.prog, width=10_000)
    return formatter._format_action_invocation(action)


def _facts(action: argparse.Action) -> list[str]:
    facts = []
    if action.required and action.option_strings:
        facts.append("required")
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        facts.append("choices: " + ", ".join(f"`{c}`" for c in action.choices))
    default = action.default
    if not any(default is v for v in (None, False, argparse.SUPPRESS)) and not isinstance(
            action, argparse._StoreConstAction | argparse._CountAction):
        shown = " ".join(map(str, default)) if isinstance(default, list | tuple) else default
        facts.append(f"default: `{shown}`")
    if action.nargs == argparse.OPTIONAL and action.const is not None:
        facts.append(f"alone: `{action.const}`")
    return facts


def _arguments(parser: argparse.ArgumentParser, level: str) -> list[str]:
    """Every argument of `parser`, by the groups `--help` shows them in."""
    lines = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if a.help is not argparse.SUPPRESS
                   and not isinstance(a, argparse._SubParsersAction)]
        if not actions:
            continue
        lines += [f"{level} {_text(group.title[:1].upper() + group.title[1:])}", ""]
        for action in actions:
            facts = _facts(action)
            help_text = _text(_help(parser, action))
            lines.append(f"- `{_names(parser, action)}`" + (f": {help_text}" if help_text else ""))
            if facts:
                lines.append(f"  ({'; '.join(facts)})")
        lines.append("")
    return lines


def _page(name: str, parser: argparse.ArgumentParser, summary: str) -> str:
    title = name if name.startswith("geneb-") else f"geneb-engine {name}"
    lines = [f"# {title}", ""]
    if summary:
        lines += [_text(summary[:1].upper() + summary[1:]) + ".", ""]
    lines += ["```text", _usage(parser), "```", ""]
    if parser.description:
        lines += [_text(parser.description), ""]
    verbs = _subcommands(parser)
    if verbs and name != "geneb-engine":
        lines += ["Verbs: " + ", ".join(f"[`{v}`](#{parser.prog.split()[-1]}-{v})"
                                        for v in verbs) + ".", ""]
    lines += _arguments(parser, "##")
    if name == "geneb-engine":
        lines += ["## Commands", "", "| command | what it does |", "|---|---|"]
        lines += [f"| [`{cmd}`]({cmd}.md) | {_text(text)} |"
                  for cmd, text in _summaries(parser).items()]
        lines.append("")
        return "\n".join(lines)
    summaries = _summaries(parser)
    for verb, verb_parser in verbs.items():
        lines += [f"## {parser.prog.split()[-1]} {verb}", ""]
        if summaries.get(verb):
            lines += [_text(summaries[verb]), ""]
        lines += ["```text", _usage(verb_parser), "```", ""]
        if verb_parser.description:
            lines += [_text(verb_parser.description), ""]
        lines += _arguments(verb_parser, "###")
    return "\n".join(lines)


def _uri(name: str) -> str:
    return f"{FOLDER}/{'index' if name == 'geneb-engine' else name}.md"


def pages() -> dict[str, str]:
    """Source path in the site -> Markdown of every command-line reference page."""
    parsers = _parsers()
    summaries = _summaries(parsers["geneb-engine"])
    return {_uri(name): _page(name, parser, summaries.get(name, ""))
            for name, parser in parsers.items()}


def nav() -> list[dict[str, str]]:
    """The nav entries of the pages, in the order `geneb-engine --help` lists the commands."""
    return [{name if name.startswith("geneb-") else f"geneb-engine {name}": _uri(name)}
            for name in _parsers()]


def on_config(config):
    from mkdocs.exceptions import PluginError

    for section in config.nav or ():
        found = _section(section)
        if found is not None:
            found[:] = nav()
            return config
    raise PluginError(f"mkdocs.yml: the nav has no section '{NAV_SECTION}: []' for the "
                      "command-line reference")


def _section(entry) -> list | None:
    """The (empty) list of the nav section named NAV_SECTION, searched depth first."""
    if not isinstance(entry, dict):
        return None
    for title, value in entry.items():
        if title == NAV_SECTION and isinstance(value, list):
            return value
        if isinstance(value, list):
            for child in value:
                found = _section(child)
                if found is not None:
                    return found
    return None


def on_files(files, config):
    from mkdocs.structure.files import File

    for uri, content in pages().items():
        files.append(File.generated(config, uri, content=content))
    return files
