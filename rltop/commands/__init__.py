"""One module per subcommand, each with ``add_parser(subparsers)`` and ``run(args) -> int``.

`rltop.cli` only builds the parser from this list and dispatches; a command imports its heavy
dependencies (numpy readers, Rich, Textual) inside ``run`` so ``rltop --help`` stays instant.

* `alert_options` -- the alert options ``rltop watch`` and the dashboard share, and their checks (one
  line, exit 2).
* `app` -- ``rltop [PATH...]`` / ``rltop app``: the live dashboard (a snapshot when stdout is not a
  terminal).
* `common` -- what every subcommand shares: exit codes, one-line messages, path and filter arguments.
* `completions` -- ``rltop completions PATH``: what the policy wrote at one step, for scripts, issues
  and PRs.
* `diff` -- ``rltop diff``: the settings that differ between runs, each run's verdict beside them.
* `demo` -- ``rltop demo``: two real TRL runs replayed live into a temporary directory, with the
  dashboard on it.
* `export` -- ``rltop export PATH... --format csv|jsonl``: every point to stdout, sorted by run, tag,
  step.
* `snapshot` -- ``rltop snapshot PATH...``: the dashboard's verdict printed once, with a health exit
  code.
* `tail` -- ``rltop tail PATH...``: every point already written, then every new point as it lands.
* `watch` -- ``rltop watch PATH...``: the dashboard's judgement without a screen, for nohup, systemd and
  cron.
"""

COMMAND_MODULES = ("app", "watch", "export", "tail", "snapshot", "diff", "completions", "demo")
