"""The batched heuristic (``agents.heuristic.batched.HeuristicPolicy``) makes exactly the
choices of the reference ``agents.heuristic.HeuristicAgent``.

Positions come from ``BatchedGame`` deals played by a mix of random and heuristic seats
(random play reaches odd positions, heuristic self-play the endgames the bot steers
into), for 2 to 7 players and variants of every option the bot can meet, the big tables'
play (``Params.big_table``) on and off. At every step both batched front ends (from the
state arrays, and from the observation and mask rows) are compared with
``HeuristicAgent.act`` on the same observation dict.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.heuristic import HeuristicAgent, Params, batched, bot, state_action
from agents.heuristic.batched import HeuristicPolicy
from agents.registry import batched_port
from pis_env.aec import raw_env
from pis_env.batched import BatchedEnv, BatchedGame, RandomPolicy
from pis_env.rules import Rules
from train.vector.sb3_vec_env import AgentPolicy


def agreement(rules: Rules, num_games: int, steps: int, heuristic_share: float, seed: int,
              params: Params | None = None, check_uint8: bool = False) -> int:
    """Play ``steps`` rounds of ``num_games`` games and assert that the batched choices
    equal the reference agent's at every position; returns the positions checked with
    more than one legal action."""
    game = BatchedGame(num_games, rules, seed=seed)
    game_u8 = BatchedGame(num_games, rules, seed=seed, obs_dtype=np.uint8) \
        if check_uint8 else None
    rnd = RandomPolicy(num_games, seed=seed + 1)
    bot = HeuristicPolicy(num_games, rules, params=params)
    agent = HeuristicAgent(rules.num_players, rules.num_deals, rules=rules, params=params)
    use_bot = np.random.default_rng(seed).random(num_games) < heuristic_share
    checked = 0
    for step in range(steps):
        from_state = bot(game).copy()
        from_obs = bot(game.obs, game.masks)
        if game_u8 is not None:
            np.testing.assert_array_equal(bot(game_u8.obs, game_u8.masks), from_obs)
        for b in range(num_games):
            expected = agent.act({"observation": game.obs[b], "action_mask": game.masks[b]})
            assert from_state[b] == expected and from_obs[b] == expected, (
                f"step {step} game {b}: reference {expected}, batched state route "
                f"{from_state[b]}, observation route {from_obs[b]}"
            )
            checked += int(game.masks[b].sum() > 1)
        actions = rnd(game).copy()
        actions[use_bot] = from_state[use_bot]
        game.step(actions, auto_reset=True)
        if game_u8 is not None:
            game_u8.step(actions, auto_reset=True)
    return checked


@pytest.mark.parametrize("options", [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 5},
    {"num_players": 6},
    {"num_players": 7},
    {"num_players": 2, "opening": "first_round", "draw_rule": "until_playable"},
    {"num_players": 3, "nominate": "other", "seven_penalty": "double",
     "after_penalty": "continue"},
    {"num_players": 4, "draw_rule": "one", "empty_stock": "reshuffle", "num_deals": 2},
    {"num_players": 5, "max_turns": 60, "opening": "first_round", "nominate": "other"},
])
@pytest.mark.parametrize("share", [0.0, 1.0])
def test_batched_heuristic_matches_the_agent(options, share):
    checked = agreement(Rules.from_options(**options), 48, 60, share, seed=7)
    assert checked > 800


@pytest.mark.parametrize("num_players", [5, 6, 7])
def test_batched_heuristic_matches_the_agent_with_the_big_tables_play_off(num_players):
    checked = agreement(Rules(num_players=num_players), 48, 60, 0.5, seed=11,
                        params=Params(big_table=False))
    assert checked > 400


def test_the_port_reads_the_big_tables_switch_and_thresholds_as_the_bot():
    assert (batched.BIG_TABLE, (batched._FULL_STOCK, batched._SHORT_STOCK)) == \
        (bot.BIG_TABLE, bot.SHORT_STOCK)
    rules = Rules(num_players=6)
    off = HeuristicPolicy(1, rules, big_table=False).params
    np.testing.assert_array_equal(off, HeuristicPolicy(1, rules, params=Params(
        big_table=False)).params)
    assert not np.array_equal(off, HeuristicPolicy(1, rules).params)
    np.testing.assert_array_equal(batched_port("heuristic?big_table=false", 1, rules).params,
                                  off)
    with pytest.raises(ValueError, match="big_table=1: must be true or false"):
        HeuristicPolicy(1, rules, big_table=1)


def test_uint8_observations_and_custom_params():
    params = Params(jack_keep=20.0, draw_cost=9.0, danger=(3.0, 2.0, 1.0), jack_draw=False,
                    draw_big_stock=10)
    rules = Rules(num_players=4, num_deals=3, reward="win")
    agreement(rules, 32, 60, 0.5, seed=3, params=params, check_uint8=True)
    agreement(Rules(num_players=2), 32, 60, 0.5, seed=4, check_uint8=True)


def test_matches_the_reference_env_and_state_action():
    """Observations of the reference AEC env, and ``state_action`` on its state."""
    for n, nominate in ((2, "any"), (4, "other"), (7, "any")):
        env = raw_env(num_players=n, nominate=nominate, empty_stock="reshuffle")
        bot = HeuristicPolicy(1, env.rules)
        agent = HeuristicAgent(n, rules=env.rules)
        for seed in range(12):
            env.reset(seed=seed)
            for _ in range(400):
                if env.terminations[env.agent_selection] or \
                        env.truncations[env.agent_selection]:
                    break
                ob = env.observe(env.agent_selection)
                expected = agent.act(ob)
                got = bot(ob["observation"][None], ob["action_mask"][None])[0]
                assert got == expected
                assert state_action(env.game, agent.table) == expected
                env.step(int(expected))


def test_as_batched_env_opponent_same_trajectory_as_the_agent():
    """``BatchedEnv`` with the batched bot plays the very matches it plays with the
    reference agent row by row (same seed, same learner actions)."""
    for n in (2, 4):
        rules = Rules(num_players=n)
        fast = BatchedEnv(32, rules, opponent=HeuristicPolicy(32, rules), seed=5)
        slow = BatchedEnv(32, rules, opponent=AgentPolicy(HeuristicAgent(n, rules=rules)),
                          seed=5)
        obs_f, masks_f = fast.reset()
        obs_s, masks_s = slow.reset()
        rng = np.random.default_rng(0)
        for _ in range(40):
            np.testing.assert_array_equal(obs_f, obs_s)
            np.testing.assert_array_equal(masks_f, masks_s)
            # a random legal learner action
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks_f])
            obs_f, rew_f, done_f, _ = fast.step(actions)
            obs_s, rew_s, done_s, _ = slow.step(actions)
            np.testing.assert_array_equal(rew_f, rew_s)
            np.testing.assert_array_equal(done_f, done_s)
            masks_f, masks_s = fast.masks, slow.masks


def test_over_matches_get_minus_one_and_shapes_are_checked():
    game = BatchedGame(4, num_players=3, seed=0)
    bot = HeuristicPolicy(4)
    masks = game.action_masks()
    masks[2] = 0
    out = HeuristicPolicy(4, num_players=3)(game.obs, masks)
    assert out[2] == -1 and (out[[0, 1, 3]] >= 0).all()
    assert bot(game).shape == (4,)
    with pytest.raises(ValueError, match="do not fit a table of 4 players"):
        HeuristicPolicy(4, num_players=4)(game.obs, game.masks)
