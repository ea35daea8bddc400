"""Charts for every front end, in data coordinates: no screen, no colours, no Rich.

* `data` -- what a chart draws (`Figure`); `scale` -- axes, outlier-robust limits and ticks.
* `options` -- a chart's settings, cycled by keys and shared with the reports.
* `group` -- a seed group on a chart: runs aligned by step, their mean and band.
* `readout` -- the chart cursor and what every overlaid run logged there.
* `tags` -- which metrics get a chart of their own.
* `spark` -- sparklines as text, one row or several.
"""
