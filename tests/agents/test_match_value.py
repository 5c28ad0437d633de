"""Match-aware scoring (``agents.match_value``) and the bots that use it: the last deal
scores the match result, one deal left the exact chance computed from the charge model by
hand, and ``search``/``mc`` score by the match at a match table only."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.match_value import charge_model, future_charges, match_scores, win_share
from pis_env import raw_env
from pis_env.observation import SCORE_SCALE, Layout


def test_win_share_counts_a_tie_as_a_share():
    np.testing.assert_array_equal(win_share(np.array([[10, 20], [20, 10], [15, 15]])),
                                  [1.0, 0.0, 0.5])
    np.testing.assert_allclose(win_share(np.array([[5, 5, 9, 5], [6, 5, 9, 5]])), [1 / 3, 0])


def test_the_last_deal_scores_the_match_result():
    # totals before the deal [50, 40]; rollouts charging [0, 30], [20, 10], [0, 10], [0, 5]
    charges = np.array([[0, 30], [20, 10], [0, 10], [0, 5]])
    np.testing.assert_array_equal(match_scores(charges, [50, 40], deal=3, num_deals=4),
                                  [100.0, 0.0, 50.0, 0.0])


def _exact_two_player(s0: int, s1: int) -> float:
    """Seat 0's win share with one model deal left at two players, from the histogram: the
    deal's winner is either seat with chance 1/2, the other is charged X."""
    values, p = charge_model(2)
    other_pays = np.sum(p * ((s0 < s1 + values) + 0.5 * (s0 == s1 + values)))
    i_pay = np.sum(p * ((s0 + values < s1) + 0.5 * (s0 + values == s1)))
    return 100.0 * 0.5 * (other_pays + i_pay)


@pytest.mark.parametrize("totals,charges", [([0, 0], [0, 20]), ([30, 0], [0, 25]),
                                            ([10, 60], [40, 0]), ([100, 0], [0, 0])])
def test_one_deal_left_is_the_chance_the_model_gives(totals, charges):
    got = match_scores(np.array([charges]), totals, deal=2, num_deals=4, samples=40000)[0]
    assert abs(got - _exact_two_player(totals[0] + charges[0], totals[1] + charges[1])) < 1.5


def test_the_futures_are_sums_of_model_deals():
    values, p = charge_model(4)
    assert values.min() >= 0 and abs(p.sum() - 1) < 1e-12
    one, three = future_charges(4, 1, 20000), future_charges(4, 3, 20000)
    assert ((one == 0).sum(axis=1) >= 1).all()  # every model deal has its winner
    mean_deal = 3 / 4 * float(np.dot(values, p))  # one seat in four pays nothing
    assert abs(one.mean() - mean_deal) < 0.02 * mean_deal
    assert abs(three.mean() - 3 * mean_deal) < 0.02 * 3 * mean_deal
    np.testing.assert_array_equal(future_charges(4, 3, 20000), three)  # always the same
    assert future_charges(2, 0).tolist() == [[0, 0]]


def _last_deal_position(num_players: int, my_total: int, their_total: int):
    """An observation of the last deal of a four-deal match with a choice of moves, its
    scores segment rewritten to the given totals (observer first)."""
    env = raw_env(num_players=num_players, num_deals=4)
    env.reset(seed=2)
    bot = agents.make("heuristic", num_players=num_players, num_deals=4)
    game = env.game
    while True:
        obs = env.observe(env.agent_selection)
        if game.deal_index == 3 and obs["action_mask"].sum() >= 3:
            break
        env.step(bot.act(obs))
    scores = Layout.of(num_players, 4).offsets["scores"]
    totals = [my_total] + [their_total] * (num_players - 1)
    vector = obs["observation"].copy()
    vector[scores] = [t / (t + SCORE_SCALE) for t in totals]
    return {"observation": vector, "action_mask": obs["action_mask"]}


BOTS = [("search", {"rollouts": 96}), ("mc", {"samples": 4, "rollouts": 2})]


@pytest.mark.parametrize("name,options", BOTS)
def test_a_decided_match_leaves_the_move_to_the_heuristic(name, options):
    for num_players in (2, 4):
        heuristic = agents.make("heuristic", num_players=num_players, num_deals=4)
        for mine, theirs, value in ((0, 900, 100.0), (900, 0, 0.0)):
            obs = _last_deal_position(num_players, mine, theirs)
            bot = agents.make(name, num_players=num_players, num_deals=4, seed=0, **options)
            action = bot.act(obs)
            assert set(bot.last_values.values()) == {value}
            assert action == heuristic.act(obs)
            deal_level = agents.make(name, num_players=num_players, num_deals=4, seed=0,
                                     match_aware=False, **options)
            deal_level.act(obs)
            assert len(set(deal_level.last_values.values())) > 1


@pytest.mark.parametrize("name,options", BOTS)
def test_a_close_match_is_scored_by_its_win_chance(name, options):
    obs = _last_deal_position(2, 40, 40)
    bot = agents.make(name, num_players=2, num_deals=4, seed=0, **options)
    bot.act(obs)
    values = list(bot.last_values.values())
    assert all(0.0 <= v <= 100.0 for v in values) and len(set(values)) > 1


@pytest.mark.parametrize("name,options", BOTS)
def test_a_one_deal_table_keeps_the_deal_score(name, options):
    env = raw_env(num_players=2)
    env.reset(seed=4)
    bot = agents.make("heuristic", num_players=2)
    while env.observe(env.agent_selection)["action_mask"].sum() < 3:
        env.step(bot.act(env.observe(env.agent_selection)))
    obs = env.observe(env.agent_selection)
    aware = agents.make(name, num_players=2, seed=0, **options)
    plain = agents.make(name, num_players=2, seed=0, match_aware=False, **options)
    assert aware.act(obs) == plain.act(obs)
    assert aware.last_values == plain.last_values
    assert any(v < 0 or v > 100 for v in aware.last_values.values())  # points, not a chance
