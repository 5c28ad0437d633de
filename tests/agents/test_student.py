"""The student bot (``agents.student``): the shipped file at tables of two players, one
deal or four, v0 or v1; deterministic for a seed; a clear refusal of another table size;
its network reads the v0 observation and the particle filter's marginals it runs."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.belief.particles import ParticleBelief
from pis_env import pis_yedili_v1, raw_env
from pis_env.observation import observation_encoder


def _deal(bot, num_deals: int = 1, layout: int = 1, seed: int = 3, seat: int = 0):
    """One deal (a whole match with ``num_deals``) with ``bot`` in ``seat`` against the
    heuristic: the student's moves with its value estimates, and the deal indices it
    moved in; every move checked against the engine's own legal mask."""
    env = (pis_yedili_v1.raw_env if layout else raw_env)(num_players=2, num_deals=num_deals)
    env.reset(seed=seed)
    other = agents.make("heuristic", num_players=2, num_deals=num_deals, seed=seed)
    game, moves, deals = env.game, [], set()
    while not game.match_over:
        s = game.current
        obs = env.observe(env.possible_agents[s])
        if s == seat:
            action = bot.act(obs)
            assert (game.legal_mask() >> action) & 1, action
            moves.append((action, bot.last_value))  # the value: the belief read, exactly
            deals.add(game.deal_index)
        else:
            action = other.act(obs)
        env.step(action)
    assert game.end_reason != "truncated"
    return moves, deals


@pytest.mark.parametrize("layout", [0, 1])
def test_the_shipped_student_plays_only_legal_moves_for_a_whole_deal(layout):
    bot = agents.make("student", num_players=2, seed=0)
    assert bot.path.endswith("student_2p.pt") and bot.layout_version == 1
    for seat in (0, 1):
        moves, _ = _deal(bot, layout=layout, seat=seat, seed=seat)
        assert len(moves) > 3
        bot.reset(seed=1)


def test_the_student_plays_every_deal_of_a_four_deal_match():
    bot = agents.make_for_table("student", {"num_players": 2, "num_deals": 4}, seed=2)
    moves, deals = _deal(bot, num_deals=4)
    assert deals == {0, 1, 2, 3} and len(moves) > 12


def test_the_student_is_deterministic_for_a_seed():
    first = _deal(agents.make("student", num_players=2, seed=7), seed=5)[0]
    again = _deal(agents.make("student", num_players=2, seed=7), seed=5)[0]
    reused = agents.make("student", num_players=2, seed=1)
    _deal(reused, seed=9)
    # the seed's play from here on, whatever came before (what the filter learnt of who
    # the opponent is carries over a plain reset, as the search's does)
    reused.reset(seed=7, opponents_changed=True)
    assert first == again == _deal(reused, seed=5)[0]


@pytest.mark.parametrize("players", [3, 4])
def test_the_student_refuses_a_table_size_its_file_was_not_trained_for(players):
    """In one line, by ``agents.make`` (the registry's table sizes) and by the bot itself
    (its file's table, whatever path it is given)."""
    from agents.student import StudentAgent

    for build in (lambda: agents.make("student", num_players=players),
                  lambda: StudentAgent(path="models/student_2p.pt", num_players=players),
                  lambda: StudentAgent(num_players=players)):
        with pytest.raises(ValueError) as e:
            build()
        message = str(e.value)
        assert "\n" not in message and message.startswith("student")
        assert "2 players" in message and f"{players}" in message


def test_the_network_reads_the_v0_observation_and_the_filters_marginals():
    """At a v1 table the network's input is the one-deal v0 encoder's observation of the
    same position, the marginals of a filter with the file's settings shown the same
    observations, and the mask."""
    bot = agents.make("student", num_players=2, seed=4)
    twin = ParticleBelief(2, seed=4, **bot.meta["filter"])
    seen = []
    bot.network.forward = lambda x, real=bot.network.forward: seen.append(x) or real(x)
    env = pis_yedili_v1.raw_env(num_players=2)
    env.reset(seed=8)
    v0 = observation_encoder(2, 1, 0)
    game, other = env.game, agents.make("heuristic", num_players=2)
    checked = 0
    while not game.deal_over and checked < 6:
        s = game.current
        obs = env.observe(env.possible_agents[s])
        if s != 0:
            env.step(other.act(obs))
            continue
        expected_obs = v0.encode(game, 0)
        before = len(seen)
        action = bot.act(obs)
        twin.observe(bot.decode(obs))
        if len(seen) > before:
            x = seen[-1]
            size = expected_obs.size
            np.testing.assert_array_equal(x[:size], expected_obs)
            np.testing.assert_allclose(x[size:size + 52], twin.belief().ravel(), rtol=1e-6)
            np.testing.assert_array_equal(x[size + 52:], obs["action_mask"])
            checked += 1
        twin.record(action)
        env.step(action)
    assert checked >= 3
