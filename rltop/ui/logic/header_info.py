"""What the dashboard's header line shows, as plain data (Textual-free: the session builds it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rltop.health.findings import Level


@dataclass
class HeaderInfo:
    """Everything the header line can show; parts are dropped, least important first, to fit."""

    run: str | None = None
    """The current run's display name, already safe to print."""
    kind: str = ""
    step_text: str = ""
    """``step 150`` or ``finished at step 200``."""
    level: Level | None = None
    finished: bool = False
    age_text: str = ""
    stale: bool = False
    rate_text: str = ""
    fleet: list[tuple[str, int]] = field(default_factory=list)
    """(state, runs) of every run, worst first, when there is more than one run."""
    paused_points: int | None = None
    loading_text: str = ""
    filter_text: str = ""
    note: str = ""
    source: str = ""
    """What the run is read from, when not event files ("from trainer_state.json")."""
    source_aside: str = ""
    """A choice worth a word, shown only where the whole line has room to spare."""
