#!/usr/bin/env python
"""``python train/rllib_ppo.py``: RLlib PPO on a Ray cluster (in ``.venv-rllib``).

The code is ``train.rllib.ppo``; this file keeps the documented command.
"""

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository root makes `train` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from train.rllib.ppo import main

if __name__ == "__main__":
    sys.exit(main())
