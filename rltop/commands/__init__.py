"""One module per subcommand, each with ``add_parser(subparsers)`` and ``run(args) -> int``.

`rltop.cli` only builds the parser from this list and dispatches; a command imports its heavy
dependencies (numpy readers, Rich, Textual) inside ``run`` so ``rltop --help`` stays instant.
"""

COMMAND_MODULES = ("app", "watch", "export", "tail", "snapshot", "diff", "completions", "demo")
