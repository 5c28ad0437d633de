#!/usr/bin/env python
"""``python train/ppo.py`` and ``pis-train``: MaskablePPO against a league of opponents.

The pipeline is ``train.sb3.run`` (its docstring lists the commands); this file is the
command the README promises, runnable as a script from any directory once the project is
installed.
"""

import sys

try:
    from train.sb3.run import main
except ModuleNotFoundError as missing:
    if missing.name not in ("train", "pis_env"):
        raise
    print("python train/ppo.py: error: the 'train' package is not importable: install the "
          "project (make, or pip install -e '.[train]') or run python -m train.ppo from the "
          "repository root", file=sys.stderr)
    sys.exit(2)

if __name__ == "__main__":
    sys.exit(main())
