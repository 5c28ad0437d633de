#!/usr/bin/env python
"""``python train/expert_iteration.py``: expert iteration (search-labelled imitation, then PPO).

The code is ``train.expert.iteration``; this file keeps the documented command.
"""

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository root makes `train` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from train.expert.iteration import main

if __name__ == "__main__":
    sys.exit(main())
