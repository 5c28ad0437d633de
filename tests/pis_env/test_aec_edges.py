"""The AEC env's edges, read as a user meets them: calls before ``reset()``, the parallel
view's options, ``state()``'s type, rendering a fixed seat and ``"human"`` mode."""

from __future__ import annotations

import numpy as np
import pytest

import pis_env
from pis_env import pis_yedili_v0
from pis_env.actions import DRAW, PASS
from pis_env.render import render_table


@pytest.mark.parametrize("call, words", [
    ("state", "state() called before reset()"),
    ("export_history", "export_history() called before reset()"),
    ("render", "render() called before reset()"),
    ("observe", "observe() called before reset()"),
    ("step", "step() called before reset()"),
])
def test_calls_before_reset_say_so(call, words):
    env = pis_env.raw_env(render_mode="ansi")
    args = {"observe": ("player_0",), "step": (0,)}.get(call, ())
    with pytest.raises(RuntimeError) as e:
        getattr(env, call)(*args)
    assert str(e.value) == words


def test_a_step_after_the_episode_is_over_says_what_to_do_word_for_word():
    raw = pis_env.raw_env(illegal_action="terminate")
    raw.reset(seed=0)
    raw.step(PASS)  # never legal before a draw: the offender forfeits
    for _ in raw.possible_agents:
        raw.step(None)
    with pytest.raises(RuntimeError) as e:
        raw.step(DRAW)
    assert str(e.value) == ("step() after the episode is over (every agent is done): "
                            "call reset() to start a new one")


def test_a_finished_deal_without_charges_is_refused_in_words():
    raw = pis_env.raw_env()
    raw.reset(seed=0)
    raw.game.charges = None  # what the engine never does: a deal over with no charges
    with pytest.raises(RuntimeError) as e:
        raw._finish_deal()
    assert str(e.value) == "a finished deal without charges"


def test_a_two_deal_match_reports_the_match_score_after_each_deal():
    raw = pis_env.raw_env(num_deals=2)
    raw.reset(seed=3)
    while raw.game.deal_index == 0:
        agent = raw.agent_selection
        raw.step(int(np.flatnonzero(raw.observe(agent)["action_mask"])[0]))
    first = [raw.infos[a] for a in raw.possible_agents]
    assert [i["match_score"] for i in first] == raw.game.totals
    assert all(set(i) >= {"penalty", "winner", "match_score"} for i in first)


def test_last_before_reset_is_pettingzoos_own_error():
    from pettingzoo.utils.env import AECEnv

    with pytest.raises(AttributeError) as ours:
        pis_env.env().last()
    with pytest.raises(AttributeError) as theirs:
        AECEnv.last(pis_env.raw_env())
    assert "reset" in str(ours.value) and "agent_selection" in str(theirs.value)
    env = pis_env.env()
    env.reset(seed=0)
    obs, reward, term, trunc, info = env.last(observe=False)
    assert obs is None and reward == 0 and not term and not trunc


def test_the_wrapper_prints_as_the_env():
    assert str(pis_env.env(num_players=3)) == str(pis_env.raw_env(num_players=3))


def test_render_without_a_mode_warns_in_words():
    env = pis_env.raw_env()
    env.reset(seed=0)
    with pytest.warns(UserWarning) as record:
        assert env.render() is None
    # gymnasium's logger colours the line: WARN: and the message, nothing else
    assert str(record[0].message) == (
        "\x1b[33mWARN: render() called without a render_mode; set render_mode.\x1b[0m")


def test_the_parallel_view_keeps_its_render_settings_and_rules():
    par = pis_yedili_v0.parallel_env(render_mode="ansi", render_view="player_1",
                                     num_players=3, draw_rule="one")
    aec = par.aec_env.unwrapped
    assert aec.render_mode == "ansi" and aec.render_view == "player_1"
    assert aec.rules.num_players == 3 and aec.rules.draw_rule == "one"
    par.reset(seed=4)
    assert par.render() == render_table(aec.game, 1)


def test_a_fixed_seats_view_and_human_mode(capsys):
    env = pis_env.raw_env(num_players=3, render_mode="human", render_view="player_2")
    env.reset(seed=5)
    capsys.readouterr()
    assert env.render() is None
    assert capsys.readouterr().out == render_table(env.game, 2) + "\n"
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    assert capsys.readouterr().out == render_table(env.game, 2) + "\n"  # after every step


def test_state_is_float32_and_a_fresh_array():
    env = pis_env.raw_env()
    env.reset(seed=1)
    first = env.state()
    assert first.dtype == np.float32 and first.shape == env.state_space.shape
    first[:] = 7.0
    assert not np.array_equal(env.state(), first)


def test_the_env_before_and_just_after_reset_as_pettingzoo_describes_it():
    """No agents before ``reset()``; every reward 0 after it; the spaces' bounds and
    dtypes; a seeded env's later unseeded resets continue its stream."""
    env = pis_env.raw_env(num_players=3)
    assert env.agents == []
    for space, high, dtype in ((env.observation_space("player_0")["observation"], 1.0,
                                np.float32),
                               (env.observation_space("player_0")["action_mask"], 1, np.int8),
                               (env.state_space, 1.0, np.float32)):
        assert space.dtype == dtype and (space.low == 0).all() and (space.high == high).all()
    env.reset(seed=5)
    assert env.rewards == {a: 0.0 for a in env.possible_agents}
    decks = []
    for _ in range(2):
        twin = pis_env.raw_env(num_players=3)
        twin.reset(seed=5)
        twin.reset()
        decks.append(twin.game.deal_decks[0])
    assert decks[0] == decks[1]


def test_bad_render_arguments_are_refused_word_for_word():
    with pytest.raises(ValueError) as e:
        pis_env.raw_env(render_mode="rgb")
    assert str(e.value) == ("render_mode='rgb': allowed values are None, 'human', 'ansi', "
                            "'rgb_array'")
    with pytest.raises(ValueError) as e:
        pis_env.raw_env(num_players=3, render_view="player_5")
    assert str(e.value) == ("render_view='player_5': allowed values are 'current', 'full' "
                            "and the agent names player_0, player_1, player_2")
    full = pis_env.raw_env(render_mode="ansi", render_view="full")
    full.reset(seed=0)
    assert full.render() == render_table(full.game, None, reveal=True)
