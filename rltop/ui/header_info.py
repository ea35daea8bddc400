"""What the dashboard's header line shows, as plain data (Textual-free: the session builds it)."""

from __future__ import annotations

from dataclasses import dataclass

from rltop.health.findings import Level


@dataclass
class HeaderInfo:
    """Everything the header line can show; parts are dropped right to left when space runs out."""

    run: str | None = None
    kind: str = ""
    step: int | None = None
    level: Level | None = None
    age_text: str = ""
    stale: bool = False
    rate_text: str = ""
    run_position: tuple[int, int] | None = None
    paused_points: int | None = None
    loading_text: str = ""
    filter_text: str = ""
    note: str = ""
