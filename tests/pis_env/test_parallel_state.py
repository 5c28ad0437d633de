"""``state()`` / ``state_space`` (the whole deal, for centralized critics; a fresh
float32 array) and the turn-based ``parallel_env`` of both env versions (PettingZoo's
``parallel_api_test``; the render settings and rules it keeps)."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

import pis_env
from pis_env import pis_yedili_v0, pis_yedili_v1
from pis_env.privileged import privileged_features
from pis_env.render import render_table

VERSIONS = [pis_yedili_v0, pis_yedili_v1]


@pytest.mark.parametrize("module", VERSIONS, ids=["v0", "v1"])
def test_parallel_env_passes_the_parallel_api_test(module):
    env = module.parallel_env(num_players=3)
    parallel_api_test(env, num_cycles=400)
    observations, _ = env.reset(seed=1)
    mover = env.unwrapped.agent_selection
    assert [a for a, o in observations.items() if o["action_mask"].any()] == [mover]
    np.testing.assert_array_equal(env.state(), env.unwrapped.state())


@pytest.mark.parametrize("module", VERSIONS, ids=["v0", "v1"])
def test_the_critics_input_is_the_same_whoever_observes(module):
    """At every decision of a random game, ``state()`` is one vector whichever agent
    observes or moves, lies in ``state_space``, and holds every hidden card."""
    env = module.env(num_players=3, num_deals=2)
    env.reset(seed=4)
    raw = env.unwrapped
    rng = np.random.default_rng(0)
    states = 0
    for agent in env.agent_iter(2000):
        observation, _, terminated, truncated, _ = env.last()
        state = raw.state()
        assert raw.state_space.contains(state)
        for other in raw.possible_agents:  # the observer changes, the state does not
            raw.observe(other)
            np.testing.assert_array_equal(raw.state(), state)
        if terminated or truncated:
            env.step(None)
            continue
        size = raw.observation_space(agent)["observation"].shape[0]
        seat0 = raw.observe("player_0")["observation"]
        np.testing.assert_array_equal(state[:size], seat0)
        np.testing.assert_array_equal(state[size:-4], privileged_features(raw.game, 0))
        turn = state[-4:]
        assert turn[:3].tolist() == [float(raw.agent_selection == a)
                                     for a in raw.possible_agents]
        assert turn[3] == float(raw.game.has_drawn)
        states += 1
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert states > 30


def test_the_state_tells_apart_deals_that_look_alike_to_every_seat_but_one():
    env = pis_yedili_v0.raw_env(num_players=3)
    env.reset(seed=2)
    before = env.state()
    seen = env.observe("player_0")["observation"].copy()
    game = env.game
    one = game.hands[1] & -game.hands[1]  # the lowest card of seat 1 and of seat 2
    two = game.hands[2] & -game.hands[2]
    game.hands[1] ^= one | two
    game.hands[2] ^= one | two
    np.testing.assert_array_equal(env.observe("player_0")["observation"], seen)
    assert not np.array_equal(env.state(), before)


def test_state_before_reset_is_a_clear_error():
    with pytest.raises(RuntimeError, match="before reset"):
        pis_yedili_v1.raw_env().state()


def test_the_parallel_view_keeps_its_render_settings_and_rules():
    par = pis_yedili_v0.parallel_env(render_mode="ansi", render_view="player_1",
                                     num_players=3, draw_rule="one")
    aec = par.aec_env.unwrapped
    assert aec.render_mode == "ansi" and aec.render_view == "player_1"
    assert aec.rules.num_players == 3 and aec.rules.draw_rule == "one"
    par.reset(seed=4)
    assert par.render() == render_table(aec.game, 1)


def test_state_is_float32_and_a_fresh_array():
    env = pis_env.raw_env()
    env.reset(seed=1)
    first = env.state()
    assert first.dtype == np.float32 and first.shape == env.state_space.shape
    first[:] = 7.0
    assert not np.array_equal(env.state(), first)
