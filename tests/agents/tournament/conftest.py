"""Fixtures of the tournament tests."""

from __future__ import annotations

import pytest

from agents.tournament import run_tournament


@pytest.fixture()
def two():
    return run_tournament(["heuristic", "greedy"], num_players=2, deals=3, seed=2,
                          workers=1, progress=False)
