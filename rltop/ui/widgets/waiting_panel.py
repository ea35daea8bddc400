"""Shown before any run exists: where rltop looks and what it waits for."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from rltop.view.text.safe import visible


class WaitingPanel(Static):
    """ "Waiting for training logs under …" or the progress of the first read."""

    def show_waiting(self, roots: list[str], note: str = "") -> None:
        """Say where rltop looks and how to make a trainer write there."""
        text = Text()
        text.append("Waiting for training logs\n\n", style="bold")
        text.append("rltop watches ")
        text.append(", ".join(visible(root) for root in roots) or ".", style="bold")
        text.append(
            " and opens the dashboard as soon as a run writes its first events "
            "(events.out.tfevents.*), W&B run file (wandb/run-*/run-*.wandb) or trackio rows "
            "(<project>.db), or its first checkpoint (checkpoint-*/trainer_state.json).\n\n"
        )
        text.append(
            'With TRL, pass report_to="tensorboard", "wandb" or "trackio" (transformers 5 '
            "logs nowhere by default) and point rltop at the output_dir, the wandb folder or "
            "TRACKIO_DIR."
        )
        if note:
            text.append("\n\n" + visible(note))
        self.update(text)

    def show_loading(self, roots: list[str], points: int, runs: int) -> None:
        """Progress of the first read (the dashboard appears as soon as a run has points)."""
        text = Text()
        text.append("Reading event files under ", style="bold")
        text.append(", ".join(visible(root) for root in roots) or ".", style="bold")
        text.append(f"…\n\n{points:,} points in {runs} run(s) so far")
        # The panel's size is set by its CSS (1fr), not its text: a new count needs no layout of
        # the screen, which cost 13 ms per progress tick.
        self.update(text, layout=False)
