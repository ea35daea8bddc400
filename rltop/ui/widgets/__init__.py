"""Widgets of the dashboard, one a file; layout and colours live in ``rltop/ui/app.tcss``.

* `alert_item` -- one line of the alert strip: a metric's findings, one line at rest, everything when
  expanded.
* `alert_strip` -- the alert strip: one line per metric with a finding, what matters now first, above
  the metrics.
* `chart_grid` -- the chart grid above the cards on large terminals: the shown run's key values as real
  charts.
* `chart_readout` -- the line under the detail chart: the cursor's step and time, and every overlaid
  run's value there.
* `detail_chart` -- a plotext chart of one metric: the detail screen's, and (subclassed) each chart of
  the dashboard grid.
* `filter_bar` -- the ``/`` tag filter: a regular expression, applied as you type, like TensorBoard's
  filter box.
* `grid_chart` -- one chart of the dashboard's grid: the detail screen's chart, smaller, in a card's
  border.
* `header_bar` -- the header: the run shown (level, name, kind, step, freshness), the state of every
  run, the view.
* `metric_board` -- the scrollable board of metric cards, grouped as the catalogue groups them.
* `metric_card` -- one metric: a bordered card (wide layout) or a single line (narrow layout).
* `metric_group` -- a catalogue group of cards: its title line and a grid whose column count the board
  sets.
* `runs_overview` -- the runs overview: one line per run above the alerts, so no run is ever out of
  sight.
* `runs_table` -- the runs list: name, trainer kind, step, worst level and staleness of every run.
* `waiting_panel` -- shown before any run exists: where rltop looks and what it waits for.

* `diff_table` -- the config diff as a table: one row per run, its verdict, then each setting that
  differs.
"""
