"""What every source reader returns (`rltop.ingest.sources`): the same shapes for every file kind.

A reader (the event-file reader, the trainer_state.json reader, …) follows one source: each
``read()`` returns a `ReadResult` with what was new since the previous call, decoded into
`Decoded`: scalar points per tag as `rltop.model.series.Points`, text summaries, and settings of
the run. The change feed (`rltop.ingest.feed`) turns these into batches for consumers.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # numpy loads only once a file is read (`rltop PATH` paints its first frame first)
    from rltop.ingest.columns import TagColumns
    from rltop.model.series import Points


class Decoded:
    """Everything one read decoded.

    Scalar points come per tag (``scalars``) or, from the event-file reader's vectorised tier, as
    one pack of columns of many tags (``columns``, a `rltop.ingest.columns.TagColumns`): the change
    feed joins the packs of a file's reads and splits them by tag once (`take_columns`), where a
    split per read costs a Python step per tag and read. Reading ``scalars`` splits a pack first,
    so a reader of ``scalars`` sees every point either way. A read holds one form or the other.
    """

    def __init__(
        self,
        scalars: dict[str, Points] | None = None,
        texts: list[tuple[str, int, float, str]] | None = None,
        file_version: str | None = None,
        config: dict[str, Any] | None = None,
        lowest_step: int | None = None,
        columns: TagColumns | None = None,
    ) -> None:
        self._scalars: dict[str, Points] = {} if scalars is None else scalars
        self.texts: list[tuple[str, int, float, str]] = texts or []  # tag, step, wall, text
        self.file_version = file_version
        # Settings of the run found in the source (trainer_state.json's max_steps, logging_steps…): they
        # reach the rules as the run's config, as transformers' ``args/text_summary`` does.
        self.config = config
        # The smallest step among all the scalars, when the decoder knows it (None: not computed).
        self.lowest_step = lowest_step
        self.columns = columns

    @property
    def scalars(self) -> dict[str, Points]:
        """Points per tag, in file order (the pack of columns, if any, split by tag first)."""
        if self.columns is not None:
            from rltop.ingest.columns import split_by_tag

            assert not self._scalars, "a read holds its points per tag or as columns, not both"
            self._scalars = split_by_tag([self.columns])
            self.columns = None
        return self._scalars

    @scalars.setter
    def scalars(self, value: dict[str, Points]) -> None:
        self._scalars = value

    def take_columns(self) -> TagColumns | None:
        """The pack of columns, given away (None when the points are per tag): the read keeps none."""
        columns, self.columns = self.columns, None
        return columns

    def __repr__(self) -> str:
        columns = self.columns
        held = f"columns of {len(columns)} points" if columns is not None else f"{len(self._scalars)} tags"
        return f"{type(self).__name__}({held}, {len(self.texts)} texts, file_version={self.file_version!r})"


# Points collected row by row: tag -> (steps, wall times, values), as readers of row-shaped logs
# (W&B history records, trackio rows) gather them before `points_of` turns them into columns.
Columns = dict[str, tuple[list[int], list[float], list[float]]]

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
OUT_OF_RANGE = "step or value out of range"


def step_fits(step: object) -> bool:
    """True for an integer step that a 64-bit column holds (a step of 2**70 or 1e20 is not a step)."""
    if isinstance(step, bool):
        return False
    try:
        return INT64_MIN <= operator.index(step) <= INT64_MAX  # type: ignore[arg-type]
    except TypeError:
        return False


def points_of(columns: Columns, skipped: dict[str, int] | None = None) -> dict[str, Points]:
    """Each tag's collected (steps, wall times, values) as `Points` (float64 values, as logged).

    Never raises on a value: a point whose step does not fit int64 or whose value does not fit a
    float64 (a 400-digit integer) is left out and counted in ``skipped`` under `OUT_OF_RANGE`, so
    the reader can say it once; one odd point never costs the tag's other points.
    """
    import numpy as np

    from rltop.model.series import Points

    result: dict[str, Points] = {}
    for tag, (steps, walls, values) in columns.items():
        try:
            columns_of = (np.asarray(steps, dtype=np.int64), np.asarray(walls, dtype=np.float64),
                          np.asarray(values, dtype=np.float64))  # fmt: skip
        except (OverflowError, TypeError, ValueError):
            kept = [point for point in zip(steps, walls, values) if _fits(point)]
            if skipped is not None:
                skipped[OUT_OF_RANGE] = skipped.get(OUT_OF_RANGE, 0) + len(steps) - len(kept)
            if not kept:
                continue
            columns_of = (np.array([p[0] for p in kept], dtype=np.int64),
                          np.array([p[1] for p in kept], dtype=np.float64),
                          np.array([p[2] for p in kept], dtype=np.float64))  # fmt: skip
        result[tag] = Points(*columns_of, single_precision=False)
    return result


def _fits(point: tuple[object, object, object]) -> bool:
    """One (step, wall, value) that int64/float64 columns hold."""
    step, wall, value = point
    if not step_fits(step):
        return False
    try:
        float(wall)  # type: ignore[arg-type]
        float(value)  # type: ignore[arg-type]
    except (OverflowError, TypeError, ValueError):
        return False
    return True


def skipped_message(path: str, skipped: dict[str, int]) -> str:
    """One line for the points a reader left out of ``path``: "…: 3 points skipped (step or value …)"."""
    parts = [f"{n} point{'s' if n != 1 else ''} skipped ({why})" for why, n in skipped.items() if n]
    return f"{path}: {'; '.join(parts)}"


@dataclass
class ReadResult:
    """What one `SourceReader.read` call produced."""

    decoded: Decoded = field(default_factory=Decoded)
    problems: list[str] = field(default_factory=list)
    bytes_read: int = 0  # bytes newly taken in: file growth seen, or bytes newly decoded
    more: bool = False  # the file holds more than this call could use (call again)
    restarted: bool = False  # the source was rewritten: the run must be read anew (RELOADED)
    large_next: bool = False  # the next call reads one large record (publish these points first)
    mtime: float | None = None  # the file's modification time as this read saw it (saves a stat)

    def restart(self, path: str, reason: str) -> None:
        """Say that the file at ``path`` ``reason`` (`rltop.ingest.storage.restart_reason`: was
        replaced, shrank, was rewritten) and ask for its run to be read anew (RELOADED); the reader
        resets itself."""
        self.problems.append(f"{path}: file {reason}; reading it again from the start")
        self.restarted = True


class SourceReader(Protocol):
    """Follows one source file (or, for kinds read from their newest file, one run's files)."""

    path: str

    def read(self) -> ReadResult:
        """What is new since the previous call (at most about one window of it)."""

    def reset(self) -> None:
        """Forget everything read: the next read starts from the beginning."""

    def unfinished(self) -> str | None:
        """What a one-shot load should say about the end of the source (None: nothing)."""

    @property
    def pending_bytes(self) -> int:
        """Bytes present but not decoded yet (a record the writer has not finished)."""


@dataclass(frozen=True)
class SourceKind:
    """One kind of source file: how to recognise it, which run it belongs to, how to read it.

    Registered in `rltop.ingest.sources`; everything else (discovery, the watcher, loads) works
    from these fields alone.
    """

    name: str  # "tfevents"
    label: str  # what users call the files: "event files"
    pattern: str  # for messages: "events.out.tfevents.*"
    claims: Callable[[str], bool]  # a file name of this kind (cheap: native file events ask it too)
    run_directory: Callable[[str], str]  # the run a claimed file belongs to (a directory path)
    order: Callable[[str], Any]  # sort key of a run's files: the reading order (the newest last)
    open: Callable[[str], SourceReader]  # a reader of one file
    output_dir: Callable[[str], str]  # the training output_dir a run directory belongs to
    rank: int = 0  # an output_dir with runs of several kinds is read from the highest rank only
    why: str = ""  # what a higher rank buys, for the note: "more points and wall times"
    summary: str = ""  # what reading this kind means for the user, said in the run's header
    quiet_hint: str = "training stopped, or its writer buffers: see flush_secs"  # why no data may come
    newest_only: bool = False  # only the newest file is read; its reader `follow`s the run's files
    sessions: bool = False  # transformers' runs/<session> folders of one output_dir may be one run
    # The one line naming what to install when a package the reader needs is missing, else None
    # (W&B run files need the wandb package's protobuf classes: ``rltop[wandb]``).
    requirement: Callable[[], str | None] = lambda: None
    # A file or folder name that says runs of this kind lie there (W&B: ``wandb``, ``run-…``): a
    # root's name and its entries are checked against it before the screen, for `requirement`.
    marks: Callable[[str], bool] = lambda name: False
    # For a file holding several runs (a trackio database): (member path, run directory) of each
    # run in it, the member path read as that run's file (`rltop.ingest.storage.member_path`), the
    # directory naming it; [] for a file that holds no run. None: one file, one run_directory. It may
    # raise (a damaged or locked database: trackio raises a ValueError naming it): discovery says the
    # message as one problem line and lists the other files.
    members: Callable[[str], list[tuple[str, str]]] | None = None
    # For names that many tools use (``train.log``, ``*.jsonl``): whether the claimed file at this
    # path is really one of this kind, from its content (`rltop.ingest.sources.content_check.HeadCheck`:
    # its first bytes, read once per file). Discovery asks it; a file it rejects is not a run,
    # silently. It raises nothing but `rltop.ingest.storage.Unreachable`. None: the name is enough.
    accepts: Callable[[str], bool] | None = None
    # For runs whose data is written to files of any name (MLflow's ``mlruns/<exp>/<run>/metrics/<key>``):
    # the kind's claimed file a written local path belongs to (None: not one of the kind's). Native
    # file events ask it for every write of a file no kind claims, so it must be string work only.
    owner: Callable[[str], str | None] | None = None
    # Its files exist only in a storage backend's tree (an MLflow server's runs), never in a folder:
    # messages about what a folder lacks do not name it.
    virtual: bool = False
