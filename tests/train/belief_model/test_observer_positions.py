"""train.belief_model.observer_positions: the positions the belief learns from and is
benchmarked at."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from train.belief_model.observer_positions import observer_positions


@pytest.mark.parametrize("n,version", [(2, 0), (3, 1), (5, 1)])
def test_positions_carry_the_truth_and_the_observers_own_moves(n, version):
    """Each position's holders agree with the public counts (every opponent's hand size,
    the stock, the cards the observer sees), ``previous`` is a legal move of the position
    before it in the same game, and a game's first position is marked."""
    positions = list(observer_positions(
        n, lambda s: agents.make("random", num_players=n, seed=s), seed=3, version=version,
        games=4))
    assert [p.game for p in positions if p.first] == [0, 1, 2, 3]
    for before, pos in zip(positions, positions[1:]):
        if pos.first:
            assert pos.previous is None
            continue
        assert pos.game == before.game and before.observation["action_mask"][pos.previous]
    for pos in positions:
        d, holders = pos.decoded, pos.holders
        for k in range(1, n):
            assert (holders == k).sum() == d["hand_sizes"][k]
        assert (holders == 0).sum() == d["stock_size"]
        seen = np.flatnonzero(holders < 0).tolist()
        assert seen == sorted(set(d["hand"]) | set(d["discard"]))
    assert sum(p.choice for p in positions) > 10
