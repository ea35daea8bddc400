"""rltop.alerts: what the health verdicts say, told outside the screen (no Textual, no Rich).

* `events` -- `AlertTracker` turns successive `RunHealth` verdicts of a run into `AlertEvent` values
  (a new finding, an escalation, a recovery, a stall, a finished run); `Gate` is the per-recipient
  rate limit (one call per run and rule per episode, at or above a level).
* `payload` -- the JSON payload, the ``RLTOP_*`` environment and the one-line texts of an event,
  every text display-safe whatever the names hold; `display_name` is the one place that names a run.
* `hooks` -- `CommandRunner`: ``--on-alert`` commands (and ``notify-send``) in the background: one
  call per run at a time, a bounded queue per run, a cap shared in turn between runs, a timeout;
  their failures said once.
* `webhooks` -- `WebhookSender`: Slack-compatible, Discord, ntfy and raw-JSON POSTs with urllib, a
  timeout and a bounded retry, from a thread per webhook that no failure ends.
* `dispatch` -- `Alerts`: tracker + gates + every recipient, the object `rltop watch` and the
  dashboard feed with verdicts.

* `problems` -- failures of alert recipients, said once: a hook that always fails must not flood the
  log.
* `settings` -- what the command line asks alerts to do, and webhook URLs: light (no numpy), checked
  before start.
"""
