#!/usr/bin/env python
"""``python -m train.belief``: train the learned belief model over hidden cards.

The code is ``train.belief_model.training``; this file keeps the documented command.
"""

import sys

from train.belief_model.training import main

if __name__ == "__main__":
    sys.exit(main())
