"""``python -m agents.web``: the same as ``pis-serve``."""

import sys

from .server import main

sys.exit(main())
