"""The heuristic at tables of five to seven players (``Params.big_table``): as the stock
runs short it sheds points, its Jack included, because a big table's deal nearly always
ends on the stock with the fewest points in hand winning (RULES.md). Below five players,
with the switch off (``heuristic?big_table=false``) and for the held-out variants it
plays as it always did.

Each position is stacked with ``GameState.from_position``: the player to move (seat 0)
holds the cards named, the top card is the one named, every opponent holds
``opponents`` cards and the stock holds ``stock`` cards; the rest is the discard pile.
The bot is asked through its observation (``HeuristicAgent.act``) and through the engine
state (``state_action``, the rollout policy), which must agree.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

import agents
from agents.heuristic import DEFAULT_PARAMS, HeuristicAgent, Params, Table, state_action
from agents.heuristic.bot import SHORT_STOCK, short_stock
from agents.heuristic.variants import HELD_OUT
from pis_env import card_name
from pis_env.aec import mask_array
from pis_env.cards import parse_card
from pis_env.engine import PLAY, GameState
from pis_env.observation import ObservationEncoder
from pis_env.rules import Rules

#: A Jack, a low club that follows the top card, and cards that follow nothing.
JACK_OR_LOW = ("JH", "3C", "KS", "QD", "9S", "6D")


def position(num_players: int, hand, top: str, stock: int, opponents: int = 6) -> GameState:
    mine = [parse_card(c) for c in hand]
    top_card = parse_card(top)
    rest = [c for c in range(52) if c not in mine and c != top_card]
    hands = [sum(1 << c for c in mine)]
    for _ in range(num_players - 1):
        hands.append(sum(1 << c for c in rest[:opponents]))
        rest = rest[opponents:]
    n = num_players
    return GameState.from_position(
        Rules(num_players=n), hands=hands, stock=rest[:stock], pile=rest[stock:] + [top_card],
        top=top_card, active_suit=top_card // 13, pending_sevens=0, phase=PLAY,
        has_drawn=False, direction=1, current=0, dealer=n - 1, opened=(1 << n) - 1,
        drew_on=[0] * n, turns=20, deal_index=0, totals=[0] * n)


def move(bot: HeuristicAgent, state: GameState) -> str:
    """The bot's move, by its observation; its engine-state route must choose the same."""
    observation = {"observation": ObservationEncoder(state.num_players).encode(state, 0),
                   "action_mask": mask_array(state.legal_mask())}
    action = bot.act(observation)
    assert state_action(state, bot.table) == action
    return card_name(action)


def heuristic(num_players: int, **kwargs) -> HeuristicAgent:
    return agents.make("heuristic", num_players=num_players, **kwargs)


@pytest.mark.parametrize("num_players", [5, 6, 7])
def test_at_a_big_table_with_a_short_stock_the_heuristic_sheds_its_jack(num_players):
    state = position(num_players, JACK_OR_LOW, "5C", stock=5)
    assert move(heuristic(num_players), state) == "JH"
    # the same position, the switch off: the Jack is kept as the escape card
    assert move(agents.make("heuristic?big_table=false", num_players=num_players),
                state) == "3C"


@pytest.mark.parametrize("num_players", [5, 6, 7])
def test_at_a_big_table_the_jack_is_kept_while_the_stock_is_long(num_players):
    state = position(num_players, JACK_OR_LOW, "5C", stock=SHORT_STOCK[0])
    assert short_stock(SHORT_STOCK[0]) == 0.0
    assert move(heuristic(num_players), state) == "3C"


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_below_five_players_a_short_stock_keeps_the_jack_as_it_always_did(num_players):
    state = position(num_players, JACK_OR_LOW, "5C", stock=5)
    assert move(heuristic(num_players), state) == "3C"
    assert move(heuristic(num_players, big_table=False), state) == "3C"


def test_with_the_stock_short_points_outweigh_keeping_a_suit_to_follow():
    """No Jack to keep: 9H sheds more points, 5D keeps 10D to follow diamonds; from the
    stock of three cards the points win (the old play kept the suit)."""
    hand = ("8C", "AC", "5D", "10D", "9H", "3S")
    state = position(7, hand, "5H", stock=3)
    assert short_stock(3) == 1.0
    assert move(heuristic(7), state) == "9H"
    assert move(heuristic(7, big_table=False), state) == "5D"


def test_the_short_stock_multiplies_the_bots_own_weight_of_points():
    """The pressure scales ``Params.shed``, whatever it is: half the default weight of
    points, doubled at a stock of three, still keeps the suit to follow; twice the default
    weight sheds the 9 from a stock of six, where the pressure is 0.4 (the old play and the
    default weights keep the suit there)."""
    hand = ("8C", "AC", "5D", "10D", "9H", "3S")
    half, double = Params(shed=0.5), Params(shed=2.0)
    assert move(HeuristicAgent(7, params=half), position(7, hand, "5H", stock=3)) == "5D"
    assert move(HeuristicAgent(7, params=double), position(7, hand, "5H", stock=6)) == "9H"
    assert move(HeuristicAgent(7, params=double, big_table=False),
                position(7, hand, "5H", stock=6)) == "5D"
    assert move(heuristic(7), position(7, hand, "5H", stock=6)) == "5D"


@pytest.mark.parametrize("variant", sorted(HELD_OUT))
def test_the_held_out_variants_play_with_the_big_tables_play_off(variant):
    """The evaluation set does not change: the variants' weights have the switch off, and
    the tight one (which keeps its Jack harder) would shed it with the switch on."""
    assert HELD_OUT[variant].big_table is False
    state = position(7, JACK_OR_LOW, "5C", stock=5)
    bot = agents.make("held_out", variant=variant, num_players=7)
    switched_on = Table(7, bot.rules, replace(HELD_OUT[variant], big_table=True))
    if variant == "heuristic_tight":
        assert move(bot, state) == "3C"
        assert card_name(state_action(state, switched_on)) == "JH"
    with pytest.raises(TypeError, match="held_out takes a variant, not big_table"):
        agents.make("held_out", variant=variant, num_players=7, big_table=True)


def test_the_switch_is_a_keyword_of_the_spec_and_only_true_or_false():
    assert DEFAULT_PARAMS.big_table is True
    assert heuristic(6).table.params == DEFAULT_PARAMS
    assert agents.make("heuristic?big_table=false", num_players=6).table.params == Params(
        big_table=False)
    weights = Params(jack_keep=20.0)
    assert HeuristicAgent(6, params=weights, big_table=False).table.params == Params(
        jack_keep=20.0, big_table=False)
    with pytest.raises(ValueError, match="big_table='maybe': must be true or false"):
        agents.make("heuristic?big_table=maybe", num_players=6)
    with pytest.raises(TypeError, match=r"did you mean big_table\?"):
        agents.make("heuristic?big_tabel=false", num_players=6)
