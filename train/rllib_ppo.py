#!/usr/bin/env python
"""``python train/rllib_ppo.py``: RLlib PPO on a Ray cluster (in ``.venv-rllib``).

The code is ``train.rllib.ppo``; this file keeps the documented command.
"""

import sys

from train.rllib.ppo import main

if __name__ == "__main__":
    sys.exit(main())
