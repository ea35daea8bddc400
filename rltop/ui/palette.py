"""rltop's actions in Textual's command palette (Ctrl+P), next to the keys that run them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from textual.app import SystemCommand
from textual.screen import Screen

if TYPE_CHECKING:
    from rltop.ui.app import RltopApp


def palette_commands(app: RltopApp, screen: Screen) -> Iterator[SystemCommand]:
    """The palette entries for ``screen`` (the detail screen adds its chart settings)."""
    yield SystemCommand("Runs", "List the runs and switch to one (r)", app.action_runs)
    yield SystemCommand("Filter tags", "Regular-expression tag filter (/)", app.dashboard.action_filter)
    yield SystemCommand("Pause / resume", "Freeze the screen while data keeps arriving (p)", app.action_pause)
    yield SystemCommand("Next theme", "Cycle rltop's themes (t)", app.action_next_theme)
    yield SystemCommand("Help", "Keys and colours (?)", app.action_help)
    yield SystemCommand("Worst run", "Show the worst run and follow it (w)", app.action_follow_worst)
    yield SystemCommand(
        "Runs overview", "Hide / show the runs overview (v)", app.dashboard.action_toggle_overview
    )
    yield SystemCommand(
        "Compare runs",
        "Settings that differ, each verdict, what goes with the failure (d)",
        app.action_config_diff,
    )
    yield SystemCommand(
        "Group overview by setting", "Next setting that differs, then off (b)", app.action_group_by
    )
    # The palette closes first: the picture is taken of the screen, not of the palette.
    yield SystemCommand(
        "Screenshot",
        "Save an SVG of the screen (current directory, or --screenshot-dir)",
        lambda: app.set_timer(0.1, app.save_screenshot_here),
    )
    if screen.id == "detail":
        detail: Any = screen
        yield SystemCommand("More smoothing", "Next EMA weight (s)", lambda: detail.action_smoothing(1))
        yield SystemCommand("Less smoothing", "Previous EMA weight (S)", lambda: detail.action_smoothing(-1))
        yield SystemCommand("X axis", "Step, time since start, wall time (x)", detail.action_x_axis)
        yield SystemCommand(
            "Zoom", "All, last 50 %, 25 %, 10 % of the run (z)", lambda: detail.action_zoom(1)
        )
        yield SystemCommand("Log y", "Log scale (symlog when a value is ≤ 0) on/off (l)", detail.action_log_y)
        yield SystemCommand(
            "Ignore outliers", "Scale to the 1st–99th percentile on/off (i)", detail.action_outliers
        )
        yield SystemCommand("Runs on the chart", "Tick the runs to overlay (o)", detail.action_pick_runs)
        yield SystemCommand("Seed group", "Mean and band, or the runs one by one (g)", detail.action_group)
        yield SystemCommand("Band", "Min–max or ±1 std (b)", detail.action_band)
    elif screen.id == "dashboard":
        yield SystemCommand(
            "Chart grid",
            "Charts above the cards on large terminals, on/off (c)",
            app.dashboard.action_toggle_grid,
        )
