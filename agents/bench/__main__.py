"""``python -m agents.bench BOT``: the benchmark card (``pis-bench``)."""

import sys

from agents.bench.cli import main

sys.exit(main())
