"""The app's screens: dashboard (default), detail (Enter on a metric), runs list, help.

* `completions` -- the completions screen: what the policy wrote at one step, next to the alarm that
  sent you here.
* `dashboard` -- the default screen: header, runs overview, alert strip, metric board, filter bar and
  footer.
* `detail` -- enter on a metric: the whole series as a chart to read values off, with what it means and
  what to do.
* `detail_info` -- the text under the detail chart: statistics, how the chart is drawn, findings,
  config, meaning.
* `help` -- ``?``: every key (from the key table the footer and ``rltop app --help`` use too), what the
  colours mean, where the thresholds come from.
* `overlay_picker` -- ``o`` on the detail screen: tick the runs the chart overlays (Space toggles, Enter
  or Esc closes).
* `runs` -- ``r``: the list of runs; Enter switches the dashboard to the highlighted run.

* `diff` -- ``d``: the runs compared: the settings that differ with each run's verdict, and the split
  line.
"""
