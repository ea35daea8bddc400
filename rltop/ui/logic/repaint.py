"""When the dashboard draws what changed, and which parts it redraws: the repaint policy.

What is on screen is true now. New data is drawn `COALESCE` seconds after it arrives (the batches
of one flush land in one frame), and while data keeps streaming at most every `MIN_GAP` seconds,
so a point is on screen within about ``MIN_GAP`` of reaching the store, whatever the terminal size
or the number of runs. A repaint is never put off because drawing costs CPU: drawing is made cheap
instead (only what changed is redrawn, `plan_repaint`; the cards draw only when their text
changes). An earlier policy spaced repaints by their cost, up to 5 s apart: the screen lagged the
run by seconds, and a warning could come and go without ever being drawn (issue 28).

During the first read of a large log, the cards wait for the whole picture: they are drawn at most
every `FIRST_READ_EVERY` seconds, the header shows the progress in between. While the dashboard
is paused nothing is drawn (the data is still read and judged).

No Textual here: the app turns `RepaintSchedule.request` into a timer and calls
`RepaintSchedule.begin` when it fires.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MIN_GAP = 0.25
"""Seconds between two repaints caused by new data (at most four a second while data streams)."""
COALESCE = 0.01
"""Seconds a repaint waits after the change that asked for it, so that the batches of one flush
(one per file, or per run) are drawn in one frame."""
FIRST_READ_EVERY = 5.0
"""While the first read runs, the cards and verdicts are drawn at most this often (the header shows
the progress in between): the whole picture is judged and laid out once it is complete."""


@dataclass
class RepaintSchedule:
    """When the next repaint comes: at most one scheduled, never later than a change allows."""

    min_gap: float = MIN_GAP
    coalesce: float = COALESCE
    first_read_every: float = FIRST_READ_EVERY
    last_begun: float = -math.inf
    """When the last repaint began (monotonic seconds)."""
    last_whole: float = -math.inf
    """When the cards were last drawn while the first read was still running."""
    due: float | None = None
    """When the scheduled repaint fires (None: none is scheduled)."""

    def request(self, now: float, at_once: bool = False) -> float | None:
        """A change wants drawing: the delay (from ``now``) of the repaint to schedule in place of
        any scheduled one, or None when the one already scheduled comes soon enough.

        ``at_once``: a change the user waits for (the first read is complete, a key was pressed)
        skips the `min_gap` spacing; a change of data waits for it.
        """
        at = now + self.coalesce
        if not at_once:
            at = max(at, self.last_begun + self.min_gap)
        if self.due is not None and self.due <= at:
            return None
        self.due = at
        return at - now

    def begin(self, now: float) -> None:
        """The scheduled repaint fires now."""
        self.due = None
        self.last_begun = now

    def cancel(self) -> None:
        """The scheduled repaint was dropped (paused, closing)."""
        self.due = None

    def draws_whole(self, now: float, caught_up: bool) -> bool:
        """Whether this repaint draws the cards and verdicts, not just the first read's progress.

        Always once the first read is complete; before that, every `first_read_every` seconds
        from `last_whole` (the app starts it at its own start: a log read within that time is
        judged and laid out once, complete).
        """
        if caught_up:
            return True
        if now - self.last_whole < self.first_read_every:
            return False
        self.last_whole = now
        return True


@dataclass(frozen=True)
class RepaintPlan:
    """What one repaint redraws. The header is always offered its new text (it repaints only when
    the text changed), and so is the runs overview (one line per run, redrawn when a line changed)."""

    run: bool
    """The shown run's alerts, cards and charts (each redraws only what changed)."""
    top_screen: bool
    """The screen over the dashboard (detail, completions) shows a run that changed."""
    runs_list: bool
    """The runs list (or the runs compared, ``d``) is open and a run changed."""


def plan_repaint(
    changed: set[str],
    structure: bool,
    switched: bool,
    current: str | None,
    top_screen: str | None = None,
    top_run: str | None = None,
) -> RepaintPlan:
    """Which parts a repaint redraws.

    ``changed``: runs with new data or a new verdict since the last repaint; ``structure``: runs
    appeared or went away (or the view was reset: unpaused, the first read completed);
    ``switched``: the dashboard now shows another run; ``current``: the run it shows;
    ``top_screen``/``top_run``: the id of the screen on top and the run it shows, if any.
    """
    return RepaintPlan(
        run=switched or structure or current is None or current in changed,
        top_screen=top_screen in ("detail", "completions") and (structure or top_run in changed),
        runs_list=top_screen in ("runs", "diff") and (structure or bool(changed)),
    )
