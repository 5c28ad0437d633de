"""``python -m agents.tournament``."""

import sys

from agents.tournament.cli import main

sys.exit(main())
