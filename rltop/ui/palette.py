"""rltop's actions in Textual's command palette (Ctrl+P), next to the keys that run them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

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
    yield SystemCommand("Runs overview", "Hide / show the runs overview (v)",
                        app.dashboard.action_toggle_overview)
    # The palette closes first: the picture is taken of the screen, not of the palette.
    yield SystemCommand("Screenshot", "Save an SVG of the screen (current directory, or --screenshot-dir)",
                        lambda: app.set_timer(0.1, app.save_screenshot_here))
    if screen.id == "detail":
        yield SystemCommand("More smoothing", "Next EMA weight (s)", lambda: app.action_smoothing(1))
        yield SystemCommand("Less smoothing", "Previous EMA weight (S)", lambda: app.action_smoothing(-1))
        yield SystemCommand("X axis", "Step, time since start, wall time (x)", app.action_x_axis)
        yield SystemCommand("Other runs", "This metric of the other runs too (o)", app.action_toggle_overlay)
