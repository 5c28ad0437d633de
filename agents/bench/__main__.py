"""``python -m agents.bench SPEC``: the benchmark card (``pis-bench``)."""

import sys

from agents.bench.cli import main

sys.exit(main())
