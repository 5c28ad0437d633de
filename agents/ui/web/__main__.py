"""``python -m agents.ui.web``: the same as ``pis-serve``."""

import sys

from agents.ui.web.server import main

sys.exit(main())
