"""Record the shipped belief models' probabilities that
``tests/agents/belief/test_shipped_beliefs.py`` then holds every later version of the code to.

    python scripts/record_shipped_beliefs.py

Run it only when a belief model is deliberately retrained: the point of the record is
that a change to the features the models read shows up as a failing test.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for ``tests``

import numpy as np  # noqa: E402

from tests.agents.belief.test_shipped_beliefs import FIXTURE, beliefs_in_play  # noqa: E402

if __name__ == "__main__":
    arrays = {f"belief_{n}p": beliefs_in_play(n).astype(np.float32) for n in (2, 4)}
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(FIXTURE, **arrays)
    print(f"wrote {FIXTURE}: " + ", ".join(f"{k} {v.shape}" for k, v in arrays.items()))
