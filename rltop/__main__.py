"""``python -m rltop``."""

import sys

from rltop.cli import main

sys.exit(main())
