"""Text every front end shows the same way: widths, numbers, times, wording, safety.

* `cells` -- terminal cells of a string; `fit` -- text that fits a column, cut at word boundaries.
* `safe` -- names and messages from log files made safe to show (never interpreted).
* `numbers` -- numbers for narrow columns; `humanize` -- times, counts and rates as people read them.
* `sentences` -- the wording of the same facts everywhere; `headline` -- an alert on one line of any
  width, its number never cut; `marks` -- level badges, icons and trend marks.
* `rules` -- the thresholds of the rules that judge a metric, in the words of the rules table.
"""
