#!/usr/bin/env python
"""``python train/expert_iteration.py``: expert iteration (search-labelled imitation, then PPO).

The code is ``train.expert.iteration``; this file keeps the documented command.
"""

import sys

from train.expert.iteration import main

if __name__ == "__main__":
    sys.exit(main())
