"""``compactor plugin path [--marketplace]``: where the Claude Code plugin of this installation is.

Prints the plugin folder (for ``claude --plugin-dir``), or with
``--marketplace`` the folder that holds the marketplace listing it (for
``claude plugin marketplace add``). Exit 66 when the installation has no
plugin folder. The search is ``compactor.claude_code.plugin.find_plugin``.
``compactor plugin`` alone prints its help (the actions there are).
"""

from __future__ import annotations

import argparse

from compactor.claude_code.plugin import find_marketplace, find_plugin

__all__ = ["register", "run_help", "run_path"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``plugin`` subcommand and its ``path`` action."""
    parser = subparsers.add_parser(
        "plugin",
        help="where the Claude Code plugin of this installation is",
        description="The Claude Code plugin that this installation of compactor carries.",
    )
    parser.set_defaults(func=run_help, plugin_parser=parser)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    path = actions.add_parser(
        "path",
        help="print the plugin folder (for claude --plugin-dir)",
        description='Print the plugin folder, for `claude --plugin-dir "$(compactor plugin path)"`; with '
        "--marketplace, the folder of the marketplace that lists it, for "
        '`claude plugin marketplace add "$(compactor plugin path --marketplace)"` and then '
        "`claude plugin install compactor@compactor`.",
    )
    path.add_argument(
        "--marketplace",
        action="store_true",
        help="print the marketplace folder instead (claude plugin marketplace add)",
    )
    path.set_defaults(func=run_path)


def run_help(args: argparse.Namespace) -> int:
    """``compactor plugin`` with no action: print its help, which lists the actions."""
    args.plugin_parser.print_help()
    return 0


def run_path(args: argparse.Namespace) -> int:
    """Print the folder asked for.

    Raises:
        InputNotFound: this installation has no plugin folder (or no marketplace beside it).
    """
    print(find_marketplace() if args.marketplace else find_plugin())
    return 0
