"""The belief-guided search bot (agents.search): deterministic for a seed, legal at every
table size, its budget counted in rollouts."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make
from agents.search import scores_of
from pis_env import raw_env


def _play(n: int, seed: int, search_kwargs: dict, others: str = "heuristic"):
    """One deal with ``search`` in seat 0: its actions, rollout counts and legal-action
    counts at each of its decisions."""
    env = raw_env(num_players=n)  # illegal_action="raise": an illegal move fails the test
    env.reset(seed=seed)
    bots = [make("search", num_players=n, seed=seed, **search_kwargs)]
    bots += [make(others, num_players=n, seed=seed + s) for s in range(1, n)]
    record = []
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = int(agent.split("_")[1])
        action = bots[seat].act(obs)
        assert obs["action_mask"][action] == 1
        if seat == 0:
            record.append((action, bots[0].last_rollouts, int(obs["action_mask"].sum())))
        env.step(action)
    return record


def test_deterministic_for_a_seed():
    a = _play(2, 5, {"rollouts": 24})
    b = _play(2, 5, {"rollouts": 24})
    assert a == b
    assert any(r for _, r, _ in a), "the search must have searched at least once"


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_legal_at_every_table_size(n):
    record = _play(n, 10 + n, {"rollouts": 8}, others="random" if n % 2 else "heuristic")
    assert record


@pytest.mark.parametrize("mode", ["belief", "hints", "uniform"])
def test_budget_in_rollouts(mode):
    budget = 20
    record = _play(2, 3, {"rollouts": budget, "determinize": mode})
    searched = [(r, legal) for _, r, legal in record if legal > 1]
    assert searched
    for rollouts, legal in searched:
        # budget // A determinizations x A actions: never more than the budget, unless
        # there are more legal actions than rollouts (then one each).
        assert rollouts == max(1, budget // legal) * legal
        assert rollouts <= max(budget, legal)
    assert all(r == 0 for _, r, legal in record if legal == 1)


def test_bad_arguments():
    with pytest.raises(ValueError, match="rollouts"):
        make("search", rollouts=0)
    with pytest.raises(ValueError, match="determinize"):
        make("search", determinize="oracle")


def test_scores_match_mc():
    """The vectorized score is agents.mc.deal_score's: charge differential plus the win
    bonus, truncated rows scored on hand points."""
    charges = np.array([[0, 30], [12, 0], [0, 0]])
    winners = np.array([[1, 0], [0, 1], [0, 0]])
    points = np.array([[0, 30], [12, 0], [5, 9]])
    truncated = np.array([False, False, True])
    s = scores_of(charges, winners, points, truncated, "points", 100.0)
    np.testing.assert_allclose(s, [30 + 100, -12 - 100, 9 + 100])


def test_paired_difference(tmp_path):
    """The paired comparison of two tournaments reads the search seat's wins per
    (deal, rotation)."""
    from agents.search import paired_difference

    head = "table,deal,rotation,seat,agent,charge,winner,end_reason,decisions\n"
    a = tmp_path / "a.csv"
    b = tmp_path / "b.csv"
    a.write_text(head + "0,0,0,0,search,0,1,going_out,5\n0,0,0,1,heuristic,9,0,going_out,5\n"
                 "0,1,0,0,search,0,1,going_out,5\n0,1,0,1,heuristic,9,0,going_out,5\n")
    b.write_text(head + "0,0,0,0,search?x=1,0,1,going_out,5\n0,0,0,1,heuristic,9,0,going_out,5\n"
                 "0,1,0,0,search?x=1,7,0,going_out,5\n0,1,0,1,heuristic,0,1,going_out,5\n")
    diff, low, high, count = paired_difference(str(a), str(b))
    assert (diff, count) == (0.5, 2)
    assert low < 0.5 < high
