"""``HeuristicAgent`` and the helpers every rule-based bot shares (``mask_int``,
``table_rules``), case by case, with references written out here."""

from __future__ import annotations

import numpy as np
import pytest

from agents.heuristic import HeuristicAgent, mask_int
from agents.heuristic.bot import ObservationReader, table_rules
from pis_env import pis_yedili_v0
from pis_env.aec import mask_array
from pis_env.engine import GameState
from pis_env.observation import ObservationEncoder, decode_observation
from pis_env.rules import Rules


@pytest.mark.parametrize("make", [
    lambda bits: bits.astype(np.int8),          # the env's own mask (the fast path)
    lambda bits: bits.astype(bool),
    lambda bits: bits.astype(np.int64),
    lambda bits: bits.astype(np.int8).tolist(),
    lambda bits: bits.astype(np.int8)[None],    # another shape: the general path
])
def test_a_mask_is_read_as_the_integer_of_its_set_entries(make):
    rng = np.random.default_rng(0)
    for _ in range(20):
        bits = (rng.random(58) < 0.3).astype(np.int8)
        bits[[0, 57]] = rng.integers(0, 2, 2)
        expected = sum(1 << i for i in range(58) if bits[i])
        assert mask_int(make(bits)) == expected
    assert mask_int(make(np.zeros(58, np.int8))) == 0


def test_the_agents_defaults_and_seed():
    agent = HeuristicAgent(seed=5)
    assert (agent.num_players, agent.num_deals, agent.seed) == (2, 1, 5)
    assert agent.last_standing is None


def _observations(num_players: int, num_deals: int, seed: int = 0):
    env = pis_yedili_v0.env(num_players=num_players, num_deals=num_deals)
    env.reset(seed=seed)
    mover = HeuristicAgent(num_players=num_players, num_deals=num_deals)
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        yield observation
        env.step(mover.act(observation))


def test_at_a_match_table_the_agent_reads_the_standing():
    agent = HeuristicAgent(num_players=2, num_deals=2)
    deals = set()
    for observation in _observations(2, 2):
        agent.act(observation)
        decoded = decode_observation(observation["observation"], 2, 2)
        assert agent.last_standing == (decoded["deal"], decoded["scores"])
        deals.add(decoded["deal"])
    assert deals == {0, 1}
    one_deal = HeuristicAgent(num_players=2)
    one_deal.act(next(_observations(2, 1)))
    assert one_deal.last_standing is None


def test_an_observation_without_a_legal_action_is_refused():
    observation = next(_observations(2, 1))
    with pytest.raises(ValueError) as error:
        HeuristicAgent().act({**observation,
                              "action_mask": np.zeros_like(observation["action_mask"])})
    assert str(error.value) == ("no legal action in this observation: it is not this "
                                "agent's turn")


def test_with_the_two_lowest_actions_legal_the_rules_decide():
    """A position (found by random play under draw-until-playable) where only cards 0 and 1
    are legal: that is not one legal action, and the rules pick 0, not the highest id."""
    rules = Rules.from_options(num_players=4, draw_rule="until_playable",
                               empty_stock="reshuffle")
    game = GameState(rules, seed=138)
    rng = np.random.default_rng(138)
    for _ in range(34):
        legal = game.legal_actions()
        game.apply(legal[rng.integers(len(legal))])
    assert game.legal_actions() == [0, 1]
    observation = {"observation": ObservationEncoder(4).encode(game, game.current),
                   "action_mask": mask_array(game.legal_mask())}
    agent = HeuristicAgent(num_players=4, rules=rules)
    assert agent.act(observation) == 0


def test_an_unknown_rules_keyword_names_up_to_three_near_options():
    with pytest.raises(TypeError) as error:
        table_rules(None, 2, 1, num_plaenalty=1)
    assert str(error.value) == (
        "unexpected keyword argument 'num_plaenalty': not a rules option; did you mean "
        "seven_penalty, num_players, num_deals? (the options: "
        + ", ".join(Rules.keys()) + ")")


def test_an_unknown_rules_keyword_with_no_near_option_lists_them_all():
    with pytest.raises(TypeError) as error:
        table_rules(None, 2, 1, zzz=1)
    assert str(error.value) == ("unexpected keyword argument 'zzz': not a rules option "
                                "(the options: " + ", ".join(Rules.keys()) + ")")


def test_an_unknown_keyword_error_crosses_a_process_whole():
    """A tournament worker's error reaches the parent pickled: the keyword and the
    message must both survive, as the same type."""
    import pickle

    from agents.heuristic.bot import UnknownOption

    with pytest.raises(UnknownOption) as error:
        table_rules(None, 2, 1, zzz=1)
    back = pickle.loads(pickle.dumps(error.value))
    assert type(back) is UnknownOption
    assert back.option == "zzz" and str(back) == str(error.value)


def test_rules_of_another_type_are_refused():
    with pytest.raises(ValueError) as error:
        table_rules(5, 2, 1)
    assert str(error.value) == "rules must be a Rules or a dict of options, got 5"


def test_the_reader_defaults_to_a_one_deal_table():
    observation = next(_observations(2, 1))
    assert ObservationReader(2).standing(observation["observation"]) is None
    assert ObservationReader(2).read(observation["observation"]) == \
        ObservationReader(2, 1).read(observation["observation"])


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6, 7])
def test_the_engine_states_move_is_the_observations_move(players):
    """``state_action`` (what mc's rollouts call on an engine state) plays the move the
    agent plays from the observation of the same position, whoever is to move, at every
    table size: each seat's hand size and each opponent's refused suits read in turn
    order from the mover."""
    from agents.heuristic import state_action

    env = pis_yedili_v0.raw_env(num_players=players)
    agent = HeuristicAgent(num_players=players)
    compared = 0
    for seed in range(8):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            move = agent.act(obs)
            assert state_action(env.game, agent.table) == move, (seed, compared)
            compared += 1
            env.step(move)
    assert compared >= 50  # the decisions of 8 deals (a 7-player deal is short)
