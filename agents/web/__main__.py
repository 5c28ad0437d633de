"""``python -m agents.web``: the same as ``pis-serve``."""

import sys

from agents.web.server import main

sys.exit(main())
