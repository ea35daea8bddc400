"""rltop: top for reinforcement-learning training of language models.

* `__main__` -- ``python -m rltop``.
* ``alerts/`` -- rltop.alerts: what the health verdicts say, told outside the screen (no Textual, no
  Rich).
* `cli` -- the ``rltop`` command: parse arguments, dispatch to `rltop.commands`, turn errors into exit
  codes.
* ``commands/`` -- one module per subcommand, each with ``add_parser(subparsers)`` and ``run(args) ->
  int``.
* ``demo_data/`` -- the bundled demo: two real TRL runs and the machinery that replays them as if
  training were live.
* ``health/`` -- rltop.health: the rules behind the colours (no Textual, no Rich).
* ``ingest/`` -- reading training logs: the source kinds, following them live, and loading them once.
* ``live/`` -- the one judged store every live consumer shares (the dashboard and ``watch``).
* ``model/`` -- runs and their series (columnar numpy), value formatting. No Textual, no Rich.
* ``report/`` -- rltop.report: Rich renderables and exporters of the snapshot (text, Markdown, JSON,
  CSV, SVG, HTML).
* ``ui/`` -- the live dashboard: a Textual app over the series store, the health engine and the live
  watcher.
* ``view/`` -- what every front end shows, computed once: no Textual, no Rich, no terminal.
"""

import os as _os

__version__ = "0.1.0"

# rltop makes no BLAS call, yet OpenBLAS starts a worker per core when numpy loads it, and those
# workers spin: measured here, 0.13 CPU-s burnt in the first half second of every process (a
# fifth of a cold load of 900k scalars). OpenBLAS reads the variable once, when numpy loads it
# (later, after the first frame is painted). Processes rltop starts (``watch`` hooks) get the
# user's own environment back: see `inherited_environment`.
BLAS_THREADS = "OPENBLAS_NUM_THREADS"
_BLAS_SET_HERE = BLAS_THREADS not in _os.environ
if _BLAS_SET_HERE:
    _os.environ[BLAS_THREADS] = "1"


def inherited_environment() -> dict[str, str]:
    """The environment for a process rltop starts: the user's, without what rltop set for itself."""
    environ = dict(_os.environ)
    if _BLAS_SET_HERE and environ.get(BLAS_THREADS) == "1":
        del environ[BLAS_THREADS]
    return environ
