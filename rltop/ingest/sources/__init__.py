"""The registry of source kinds: which files rltop reads, and with which reader.

Discovery (`rltop.ingest.follow.discovery`) asks it which kind claims a file and which run the file
belongs to, the watcher asks it whether a changed file is one to read (native file events), and `RunFiles`
opens each file with its kind's reader. Nothing else knows the kinds.

Kinds: TensorBoard event files, W&B run files (``.wandb``), MLflow runs (a tracking server's, shown
as a tree by its storage backend `rltop.ingest.sources.mlflow.server`; ``mlflow.db``; ``mlruns/``), trackio
databases, trainer_state.json, veRL's console logs and veRL's JSONL file logs.

How to add a kind:

1. write one folder ``rltop/ingest/sources/<kind>/`` (or one module ``<kind>.py``) with a reader class
   and a ``KIND``:

   - the reader follows one file: ``read() -> ReadResult`` returns what is new since the previous
     call, decoded as `rltop.ingest.reading.Decoded` (points per tag as `rltop.model.series.Points`,
     texts, config); ``reset()``, ``unfinished()``, ``pending_bytes`` and ``path`` complete the
     `rltop.ingest.reading.SourceReader` protocol. It opens files only through
     `rltop.ingest.storage` (``storage.open_file(path)`` -> ``stat()`` and ``read(start, length)``),
     so it works on local files and on every fsspec URL at once. Raise nothing: problems are text
     in ``ReadResult.problems``; only `rltop.ingest.storage.Unreachable` propagates (the watcher
     retries it). ``ReadResult.restarted`` asks for the run to be read again (RELOADED);
   - ``KIND = SourceKind(name=..., label=..., pattern=..., claims=<file name -> bool>,
     run_directory=<file path -> run folder>, order=<file path -> sort key>, open=<path -> reader>,
     output_dir=<run folder -> training output_dir>, rank=..., newest_only=...)``
     (`rltop.ingest.reading.SourceKind` says what each field means). Keep the module's top-level
     imports light (numpy inside functions): discovery imports it before the first frame is drawn;

   optional fields: ``requirement`` (the one line naming an extra to install when the reader's
   package is missing: W&B needs ``rltop[wandb]``; checked before the screen for the paths given,
   and by one-shot loads), ``marks`` (names that say such runs lie in a folder: ``wandb``), and
   ``members`` for a file holding several runs (a trackio database: each run is read from its
   member path ``<file>::<member>``, `rltop.ingest.storage.member_path`), and ``accepts`` for
   names that other tools use too (``train.log``, ``*.jsonl``): a content check,
   ``accepts=HeadCheck(predicate)`` (`rltop.ingest.sources.content_check`), where
   ``predicate(head, whole)`` says from the file's first bytes (up to 256 KB; ``whole``: the file ends
   there) whether it is
   one of the kind's. Discovery asks it for every claimed file (`recognise`); the bytes are read
   once per file (again only while the file is shorter than the head, or after it shrank or was
   replaced), a binary file costs 4 KB, and a file it rejects is not a run, silently. ``claims``
   stays a test of the name alone: native file events ask it for every write; ``owner`` for a
   kind whose points are written to files of any name (MLflow's ``metrics/<key>``): the claimed
   file a written path belongs to, so that native file events wake its run;

   a file of lines read from an offset (a text log) needs no reader of its own: a decoder of
   complete lines for `rltop.ingest.sources.line_reader.LineFileReader` (windows, unfinished last
   lines, rewritten files and said-once counts of what was skipped are its business);

2. add its ``KIND`` to `KINDS` below (one line) (ordered by rank: the first kind that claims a name, and
   accepts the file when it looks inside, wins).

Tests: a reader test on a real file of that kind, and one through ``rltop snapshot`` (it then also
works live, under ``rltop tail``/``watch`` and on ``s3://`` with no further change).

* `completions` -- the completions source: TRL's ``<output_dir>/completions/completions_NNNNN.parquet``
  files.
* ``trackio/`` -- the ``trackio`` source kind: trackio's local SQLite databases, one ``<project>.db`` a
  project.
* `trainer_state` -- the ``trainer_state`` source kind: transformers'
  ``checkpoint-N/trainer_state.json``.
* ``verl/`` -- veRL's own logs: the console output kept in a file, and the file logger's JSON Lines.

* ``tfevents/`` -- the ``tfevents`` source kind: TensorBoard event files, as transformers, TRL, veRL and
  OpenRLHF write them.
"""

from __future__ import annotations

from rltop.ingest import storage
from rltop.ingest.reading import SourceKind
from rltop.ingest.sources import trainer_state
from rltop.ingest.sources.mlflow import database as mlflow_db
from rltop.ingest.sources.mlflow import files as mlflow_files
from rltop.ingest.sources.mlflow import server as mlflow_server
from rltop.ingest.sources.tfevents import kind as tfevents
from rltop.ingest.sources.trackio import kind as trackio_db
from rltop.ingest.sources.verl import console as verl_console
from rltop.ingest.sources.verl import jsonl as verl_jsonl
from rltop.ingest.sources.wandb import kind as wandb_run

KINDS: dict[str, SourceKind] = {
    kind.name: kind
    for kind in (tfevents.KIND, wandb_run.KIND, mlflow_server.KIND, mlflow_db.KIND, trackio_db.KIND,
                 mlflow_files.KIND, verl_jsonl.KIND, verl_console.KIND, trainer_state.KIND)
}  # fmt: skip
DEFAULT = tfevents.KIND.name


def kind(name: str) -> SourceKind:
    """The kind registered as ``name`` (KeyError for an unknown one)."""
    return KINDS[name]


def claim(file_name: str) -> SourceKind | None:
    """The kind whose files are named like ``file_name``, None for any other file."""
    for candidate in KINDS.values():
        if candidate.claims(file_name):
            return candidate
    return None


def recognise(path: str) -> SourceKind | None:
    """The kind that reads the file at ``path``: the first that claims its name and, when it looks
    inside (`SourceKind.accepts`), accepts its content; None for any other file. Raises only
    `rltop.ingest.storage.Unreachable`."""
    file_name = storage.name(path)
    for candidate in KINDS.values():
        if candidate.claims(file_name) and (candidate.accepts is None or candidate.accepts(path)):
            return candidate
    return None


def owner_of(path: str) -> str | None:
    """The source file a written file of another name belongs to (`SourceKind.owner`; None: none)."""
    for candidate in KINDS.values():
        if candidate.owner is not None:
            found = candidate.owner(path)
            if found is not None:
                return found
    return None


def is_source_file(file_name: str) -> bool:
    """True when some kind reads files named ``file_name`` (what wakes the native watcher)."""
    return claim(file_name) is not None


def what_is_read() -> str:
    """The files rltop looks for, for messages: "event files (events.out.tfevents.*), … or …"."""
    named = [f"{k.label} ({k.pattern})" for k in KINDS.values() if not k.virtual]
    return " or ".join(named) if len(named) < 3 else f"{', '.join(named[:-1])} or {named[-1]}"


def describe(kept: SourceKind, dropped: list[SourceKind]) -> tuple[str, str]:
    """(note, label) of a run read from ``kept`` while its output_dir also has ``dropped`` kinds.

    The note is a sentence for reports ("trainer_state.json also present; reading the event files
    (more points and wall times)"), the label a few words for the dashboard's header; both are empty
    for a run of the default kind with nothing else beside it.
    """
    if dropped:
        others = " and ".join(k.label for k in dropped)
        why = f" ({kept.why})" if kept.why else ""
        return f"{others} also present; reading the {kept.label}{why}", f"{kept.label}, not {others}"
    if kept.summary:
        return kept.summary, f"from {kept.label}"
    return "", ""
