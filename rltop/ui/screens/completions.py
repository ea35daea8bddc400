"""The completions screen: what the policy wrote at one step, next to the alarm that sent you here.

Opened with ``e`` from the dashboard (the focused alert's step, else the newest logged step), with
Enter or ``e`` on an alert (its step, or the nearest logged one), and with ``e`` from the detail
screen (the chart cursor's step). Keys: ← → the previous/next logged step (Home/End: first/last),
``s`` sort (file order, reward, advantage), ``u`` distinct completions only, ``/`` filter by text,
↑ ↓ PgUp PgDn scroll, Esc back.

Only the run's index lives in memory; the rows of the step shown are read from its parquet file
in a thread worker (`rltop.ingest.sources.completions.read_step`) and handed back as a message. Text from
the policy is drawn as Rich `Text` built from escaped lines (`rltop.view.completions`), never as
markup, and folded to the width (a 5000-character completion wraps, it does not run off).
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from rltop.model.completions import StepCompletions, StepSummary
from rltop.view.completions import SORTS, CompletionRow, arrange, build_rows, caption, reward_line
from rltop.view.text.numbers import format_short
from rltop.view.text.safe import visible

NO_COMPLETIONS = "no completions logged for this run: TRL writes them with log_completions=True"
MAX_SHOWN = 200  # rows drawn at once: a 1024-row step of 8 KB completions would be megabytes of text


class StepRead(Message):
    """A step's rows, read in a worker thread."""

    def __init__(self, step: StepCompletions) -> None:
        super().__init__()
        self.step = step


class CompletionsScreen(Screen):
    """One step's completions of one run."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("left", "step(-1)", "Step", key_display="←→"),
        Binding("right", "step(1)", "Step", show=False),
        Binding("home", "step_end(-1)", show=False),
        Binding("end", "step_end(1)", show=False),
        Binding("s", "sort", "Sort"),
        Binding("slash", "filter", "Filter", key_display="/"),
        Binding("u", "unique", "Unique"),
        Binding("up,k", "scroll(-1)", show=False),
        Binding("down,j", "scroll(1)", show=False),
        Binding("pageup", "scroll(-10)", show=False),
        Binding("pagedown", "scroll(10)", show=False),
    ]
    AUTO_FOCUS = None  # never the filter box: it takes ← → Home End; it opens on "/" only
    COMPONENT_CLASSES = {"completions--head", "completions--dim", "completions--mark", "completions--label"}

    def __init__(self, run: str, step: int | None = None, tag: str | None = None) -> None:
        super().__init__(id="completions")
        self.run_name = run
        self.asked = step  # the step asked for (None: follow the newest logged step)
        self.tag = tag
        self.summary: StepSummary | None = None  # the logged step shown
        self.loaded: StepCompletions | None = None  # its rows, once read
        self.sort = "row"
        self.filter_text = ""
        self.unique = False  # one row per distinct completion of a group
        self._title = Static(id="completions-title")
        self._caption = Static(id="completions-caption")
        self._filter = Input(placeholder="filter completions by text", id="completions-filter")
        self._filter.display = False  # hidden, and out of the focus chain, until "/"
        self._filter.can_focus = False
        self._body = Static(id="completions-body")
        # The caption scrolls with the rows: in a 40 x 20 pane it would otherwise take half the height.
        self._scroll = VerticalScroll(self._caption, self._body, id="completions-scroll", can_focus=False)

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._filter
        yield self._scroll
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_view()

    # -- data --------------------------------------------------------------------------------------

    def _run(self):
        return self.app.store.runs.get(self.run_name)

    def refresh_view(self) -> None:
        """Pick the step to show from the run's index (it may have grown) and read it if it changed."""
        run = self._run()
        index = run.completions if run is not None else None
        summary = None
        if index:
            summary = index.latest() if self.asked is None else index.nearest(self.asked)
        if summary is None:
            if self.summary is not None:
                self.refresh_bindings()  # the step keys go from the footer
            self.summary, self.loaded = None, None
            self._show_header()
            self._body.update(Text(index.note if index is not None and index.note else NO_COMPLETIONS))
            return
        shown = self.summary
        if shown is None:
            self.refresh_bindings()  # a step to show: the step keys come to the footer
        if shown is None or summary.step != shown.step or summary.version != shown.version:
            self.summary = summary
            self.loaded = None
            self._body.update(Text("reading…"))
            self._read(summary)
        self._show_header()

    def _read(self, summary: StepSummary) -> None:
        from rltop.ingest.sources.completions import read_step
        from rltop.model.completion_checks import trusted_cap

        cap = trusted_cap(self._run(), summary)

        def work() -> None:
            self.post_message(StepRead(read_step(summary, cap)))

        self.run_worker(work, thread=True, exclusive=True, group="completions-read")

    @on(StepRead)
    def _step_read(self, message: StepRead) -> None:
        if self.summary is None or message.step.summary.step != self.summary.step:
            return  # the user moved on meanwhile
        self.loaded = message.step
        self._show_rows()

    # -- drawing -----------------------------------------------------------------------------------

    def _style(self, name: str):
        return self.get_component_rich_style(f"completions--{name}")

    def _show_header(self) -> None:
        title = Text(no_wrap=True, overflow="ellipsis")
        title.append("Completions", style="bold")
        summary = self.summary
        if summary is not None:
            title.append(f"  step {summary.step}", style="bold")
            if self.asked is not None and self.asked != summary.step:
                title.append(f" (nearest logged to {self.asked})", style=self._style("dim"))
            steps = self._run().completions.steps
            title.append(f"  {steps.index(summary.step) + 1}/{len(steps)}", style=self._style("dim"))
        if self.tag:
            title.append(f"  from {visible(self.tag)}", style=self._style("dim"))
        title.append(f"  {visible(self.app.session.display_name(self.run_name))}", style=self._style("dim"))
        self._title.update(title)
        lines = Text()
        if summary is not None:
            lines.append(caption(summary, self._run()))
            means = reward_line(summary)
            if means:
                lines.append("\nmeans: ", style=self._style("label"))
                lines.append(means)
            lines.append(f"\nsort: {self.sort}", style=self._style("dim"))
            if self.unique:
                lines.append(" · distinct completions only", style=self._style("dim"))
            if self.filter_text:
                lines.append(f" · filter: {visible(self.filter_text)}", style=self._style("dim"))
        self._caption.update(lines)

    def _show_rows(self) -> None:
        step = self.loaded
        if step is None:
            return
        if step.problem:
            self._body.update(Text(visible(step.problem)))
            return
        rows = arrange(build_rows(step), self.sort, self.filter_text, self.unique)
        if not rows:
            self._body.update(Text(f"no completion contains {visible(self.filter_text)!r}"))
            return
        body = Text(overflow="fold")
        for position, row in enumerate(rows[:MAX_SHOWN]):
            if position:
                body.append("\n\n")
            self._append_row(body, row)
        if len(rows) > MAX_SHOWN:
            body.append(
                f"\n\n{MAX_SHOWN} of {len(rows)} shown: s sorts, u folds identical ones, / filters; "
                "rltop completions prints them all",
                style=self._style("dim"),
            )
        self._body.update(body)

    def _append_row(self, body: Text, row: CompletionRow) -> None:
        dim, mark = self._style("dim"), self._style("mark")
        body.append(f"#{row.number}", style=self._style("head"))
        body.append(f" · group {row.group}", style=dim)
        if row.rewards:
            detail = ", ".join(f"{name} {value}" for name, value in row.rewards)
            body.append(f" · reward {format_short(row.reward)}")
            body.append(f" ({detail})", style=dim)
        if row.advantage is not None:
            body.append(f" · advantage {format_short(row.advantage)}")
        body.append(f" · {row.length} chars", style=dim)
        for flag in row.flags:
            body.append(" · ", style=dim)
            body.append(flag, style=mark)
        for name, value in row.extras:
            body.append(f" · {name} {value}", style=dim)
        body.append("\nprompt  ", style=self._style("label"))
        body.append("\n        ".join(row.prompt), style=dim)
        body.append("\n     →  ", style=self._style("label"))
        body.append("\n        ".join(row.completion))

    # -- keys --------------------------------------------------------------------------------------

    STEP_KEYS = frozenset({"step", "step_end", "sort", "filter", "unique"})
    """Actions that need a logged step: without one the footer does not offer them."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The step, sort, filter and unique keys act only on a step's rows: hidden while none is shown."""
        if action in self.STEP_KEYS:
            return self.summary is not None
        return True

    def action_back(self) -> None:
        """Esc: close the filter first, then the screen."""
        if self._filter.display:
            self._close_filter()
            return
        self.app.pop_screen()

    def action_step(self, offset: int) -> None:
        """← →: the previous / next logged step."""
        run = self._run()
        if run is None or self.summary is None:
            return
        found = run.completions.neighbour(self.summary.step, offset)
        if found is not None:
            self.asked = found.step
            self.refresh_view()

    def action_step_end(self, direction: int) -> None:
        """Home / End: the first / the newest logged step (End follows new steps)."""
        run = self._run()
        if run is None or not run.completions:
            return
        self.asked = None if direction > 0 else run.completions.steps[0]
        self.refresh_view()

    def action_sort(self) -> None:
        """``s``: file order → reward → advantage."""
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self._show_header()
        self._show_rows()
        self._scroll.scroll_home(animate=False)

    def action_unique(self) -> None:
        """``u``: every completion, or one per distinct completion of a group."""
        self.unique = not self.unique
        self._show_header()
        self._show_rows()
        self._scroll.scroll_home(animate=False)

    def action_filter(self) -> None:
        """``/``: filter the completions by text (Enter or Esc closes the bar, the filter stays)."""
        self._filter.display = True
        self._filter.can_focus = True
        self._filter.focus()

    def action_scroll(self, lines: int) -> None:
        """↑ ↓ PgUp PgDn."""
        self._scroll.scroll_relative(y=lines, animate=False)

    @on(Input.Changed, "#completions-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self._show_header()
        self._show_rows()

    @on(Input.Submitted, "#completions-filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        self._close_filter()

    def _close_filter(self) -> None:
        self._filter.display = False
        self._filter.can_focus = False
        self.set_focus(None)
