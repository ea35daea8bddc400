"""The numbers the rules are made of, vectorised so a bulk load and a one-point update share code.

* `robust` -- trailing and rolling medians, rolling ranges, noise estimates;
* `spike_baseline` -- the spike rules' baseline (the median of the last normal points), by
  speculation over a long history, bit for bit the point-by-point loop's numbers.
"""
