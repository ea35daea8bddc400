"""veRL's own logs: the console output kept in a file, and the file logger's JSON Lines.

* `console` -- the ``verl_console`` kind (``trainer.logger=['console']``) and its content check.
* `console_reader` -- decoding a console log line by line; `lines` -- one line with Ray's prefixes and
  colours taken off, a metric line read strictly; `config` -- the resolved config veRL prints at start.
* `jsonl` -- the ``verl_jsonl`` kind (``trainer.logger=['file']``); `jsonl_reader` -- its records.
"""
