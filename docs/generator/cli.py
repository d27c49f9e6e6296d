"""The command-line reference: every ``compactor`` and ``ccr`` command, subcommand and option, from the parsers."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from generator._common import HEADER, WIDTH
from generator._common import cell as _cell


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Any] | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


# The usage lines and the argument names are composed here rather than by argparse, whose
# formatting changes between Python versions: the reference is the same whichever Python makes it.


def _metavar(action: argparse.Action) -> str:
    """What stands for an option's value, with its repetition (``N``, ``{a,b}``, ``[FILE]``, ``H [H ...]``)."""
    if isinstance(action.metavar, tuple):
        return " ".join(action.metavar)
    if action.metavar is not None:
        name = action.metavar
    elif action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        name = "{" + ",".join(str(c) for c in action.choices) + "}"
    else:
        name = action.dest.upper() if action.option_strings else action.dest
    if isinstance(action, argparse._SubParsersAction):
        return f"{name} ..."
    nargs = action.nargs
    if nargs == "?":
        return f"[{name}]"
    if nargs == "*":
        return f"[{name} ...]"
    if nargs == "+":
        return f"{name} [{name} ...]"
    if isinstance(nargs, int):
        return " ".join([name] * nargs)
    return name


def _invocation(action: argparse.Action) -> str:
    """How an argument is written: ``-n N, --limit N`` shortened to ``-n, --limit N``, or a positional's name."""
    if not action.option_strings:  # its repetition is in the usage line
        return action.metavar if isinstance(action.metavar, str) else action.dest
    names = ", ".join(action.option_strings)
    return names if action.nargs == 0 else f"{names} {_metavar(action)}"


def _usage_part(action: argparse.Action) -> str:
    if not action.option_strings:
        return _metavar(action)
    first = action.option_strings[0]
    return first if action.nargs == 0 else f"{first} {_metavar(action)}"


def _usage(parser: argparse.ArgumentParser) -> str:
    """``usage: prog [-h] [--opt X] (--a | --b) POSITIONAL``, wrapped at ``WIDTH`` columns."""
    groups = {id(a): g for g in parser._mutually_exclusive_groups for a in g._group_actions}
    optionals: list[str] = []
    positionals: list[str] = []
    done: set[int] = set()
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or id(action) in done:
            continue
        group = groups.get(id(action))
        if group is not None:
            members = [a for a in group._group_actions if a.help != argparse.SUPPRESS]
            done.update(id(a) for a in members)
            inner = " | ".join(_usage_part(a) for a in members)
            optionals.append(f"({inner})" if group.required else f"[{inner}]")
        elif action.option_strings:
            optionals.append(_usage_part(action) if action.required else f"[{_usage_part(action)}]")
        else:
            positionals.append(_usage_part(action))
    head = f"usage: {parser.prog}"
    lines, line = [], head
    for part in optionals + positionals:
        if len(line) + 1 + len(part) > int(WIDTH) and line.strip() != head.strip() and line.strip():
            lines.append(line)
            line = " " * len(head)
        line += " " + part
    lines.append(line)
    return "\n".join(lines)


def _arguments(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            continue
        invocation = _invocation(action)
        helped = formatter._expand_help(action) if action.help else ""
        shown_default = action.default not in (None, argparse.SUPPRESS, False, [], "") and "default" not in helped
        if shown_default and not isinstance(action, argparse._StoreConstAction | argparse._CountAction):
            helped += f" (default: `{action.default}`)"
        rows.append(f"| {_cell(f'`{invocation}`')} | {_cell(helped)} |")
    if not rows:
        return []
    return ["| argument | meaning |", "|---|---|", *rows, ""]


def _command_section(parser: argparse.ArgumentParser, summary: str, depth: int) -> list[str]:
    lines = [f"{'#' * depth} `{parser.prog}`", ""]
    if summary:
        lines += [summary[0].upper() + summary[1:] + ".", ""]
    if parser.description and parser.description.strip() != summary.strip():
        lines += [" ".join(parser.description.split()), ""]
    lines += ["```", _usage(parser), "```", ""]
    lines += _arguments(parser)
    if parser.epilog:
        lines += [" ".join(parser.epilog.split()), ""]
    inner = _subparsers(parser)
    if inner is not None:
        helps = {a.dest: a.help or "" for a in inner._choices_actions}
        for name, child in inner.choices.items():
            lines += _command_section(child, helps.get(name, ""), depth + 1)
    return lines


def _program(name: str, build: Callable[[str | None], argparse.ArgumentParser], commands: dict[str, Any]) -> list[str]:
    top = build(None)
    lines = [f"## `{name}`", "", " ".join((top.description or "").split()), ""]
    lines += ["```", _usage(top), "```", ""]
    lines += _arguments(top)
    if top.epilog:
        lines += [" ".join(top.epilog.split()), ""]
    lines += ["| command | what it does |", "|---|---|"]
    lines += [f"| [`{name} {cmd}`](#{name}-{cmd}) | {_cell(help_)} |" for cmd, (_, help_) in commands.items()]
    lines.append("")
    for cmd, (_, help_) in commands.items():
        parser = _subparsers(build(cmd))
        assert parser is not None
        lines += _command_section(parser.choices[cmd], help_, 3)
    return lines


def cli_reference() -> str:
    """Every ``compactor`` and ``ccr`` command, subcommand and option, from the parsers."""
    import ccr.cli
    import compactor.cli

    lines = [
        HEADER.format(source="the argparse parsers (compactor.cli, ccr.cli)"),
        "Every command has `--help`, which prints the same as its section here.",
        "",
    ]
    lines += _program("compactor", compactor.cli.build_parser, dict(compactor.cli.COMMANDS))
    lines += _program("ccr", ccr.cli.build_parser, dict(ccr.cli.COMMANDS))
    return "\n".join(lines).rstrip() + "\n"
