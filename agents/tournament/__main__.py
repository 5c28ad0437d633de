"""``python -m agents.tournament``."""

import sys

from .cli import main

sys.exit(main())
