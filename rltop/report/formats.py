"""Names and limits the snapshot command and the renderers share (imports nothing heavy).

`rltop.commands.snapshot` builds its argument parser from these without importing numpy or Rich,
so ``rltop --help`` stays instant.
"""

SNAPSHOT_FORMATS = ("text", "markdown", "json", "csv", "svg", "html")
FAIL_ON_CHOICES = ("warn", "critical", "never")
MIN_WIDTH = 40
"""The narrowest layout: every line of the text view fits in 40 columns."""
MAX_WIDTH = 1000
DEFAULT_WIDTH = 80
"""Width when neither --width, $COLUMNS nor a terminal says otherwise (files, pipes, cron)."""
