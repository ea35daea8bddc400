"""The ``rltop`` command: parse arguments, dispatch to `rltop.commands`, turn errors into exit codes.

Exit codes: 0 success (snapshot: healthy), 1 snapshot found a finding at or above ``--fail-on``,
2 usage or input errors (one line on stderr, never a traceback), 3 snapshot could not read some of
its input (see `rltop.commands.snapshot`). ``rltop [PATH...]`` without a subcommand opens the
dashboard (the ``app`` command); a first word that is neither a command nor an existing path says
both (``rltop snapshop``: no such command, and no such file or directory; did you mean snapshot?).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from rltop import __version__
from rltop.commands import COMMAND_MODULES
from rltop.commands.common import EXIT_OK, EXIT_USAGE, OneLineParser, UsageError, error_line

DEFAULT_COMMAND = "app"


def _command_module(name: str):
    return importlib.import_module(f"rltop.commands.{name}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand, or with the command ``only``: a run of one
    command imports no other command's module (they cost the dashboard's start 0.03 s)."""
    parser = OneLineParser(
        prog="rltop",
        description="top for RL training of language models: watch TRL TensorBoard logs. "
        "`rltop [PATH...]` opens the live dashboard (default PATH: .).",
        epilog="exit codes: 0 ok, 1 snapshot found findings at --fail-on or worse, 2 usage or input error, "
        "3 snapshot could not read some of its input",
    )
    parser.add_argument("--version", action="version", version=f"rltop {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        if only is None or name == only:
            _command_module(name).add_parser(sub)
    return parser


def _with_default_command(argv: list[str]) -> list[str]:
    """``rltop ./logs`` means ``rltop app ./logs``; ``rltop --help`` stays the global help."""
    if argv and (argv[0] in COMMAND_MODULES or argv[0] in ("-h", "--help", "--version")):
        return argv
    return [DEFAULT_COMMAND, *argv]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rltop`` console script and ``python -m rltop``."""
    given = list(sys.argv[1:] if argv is None else argv)
    args_list = _with_default_command(given)
    # The global help and --version list every command; anything else names its command first.
    command = args_list[0] if args_list and args_list[0] in COMMAND_MODULES else None
    parser = build_parser(command)
    args, extras = parser.parse_known_args(args_list)
    if extras:  # argparse would blame the top-level parser: name the command's own help instead
        _subparser(parser, args.command).error(f"unrecognized arguments: {' '.join(extras)}")
    if given and args_list[0] != given[0] and not given[0].startswith("-"):
        unknown = _unknown_word(given[0])
        if unknown is not None:
            error_line(unknown)
            return EXIT_USAGE
    try:
        return _command_module(args.command).run(args)
    except BrokenPipeError:
        # `rltop export ... | head`: the reader left; that is not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (UsageError, ValueError, OSError) as error:
        error_line(_one_line(error))
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


def _unknown_word(word: str) -> str | None:
    """The error for ``rltop WORD`` when WORD is neither a command nor an existing path (None when it
    is a path, or may be one: a URL, a path with a folder in it, or a name that exists)."""
    import difflib

    if "://" in word or os.sep in word or (os.altsep and os.altsep in word) or os.path.lexists(word):
        return None
    close = difflib.get_close_matches(word, COMMAND_MODULES, n=1)
    hint = f"did you mean `rltop {close[0]}`? " if close else ""
    return (
        f"{word}: no such command, and no such file or directory ({hint}commands: "
        f"{', '.join(COMMAND_MODULES)}; see rltop --help)"
    )


def _subparser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser:
    """The parser of ``command`` (the top-level one when there is none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return action.choices[command]
    return parser


def _one_line(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return " ".join(text.split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
