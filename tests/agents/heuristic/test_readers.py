"""The heuristic's two readers of a position (``decoded_action`` from
``decode_observation``'s dict, ``ObservationReader`` from the vector) on the cases played
games reach rarely: an answer to pending sevens that only the sevens rule decides, and the
match standing, checked against the decoder's own reading; and its planner of going out
in one turn, against a reference written from the rules."""

from __future__ import annotations

import numpy as np

import agents
from agents.heuristic import DEFAULT_PARAMS, Table, state_action
from agents.heuristic.bot import ObservationReader, _go_out_multiplier, decoded_action
from pis_env import pis_yedili_v0
from pis_env.cards import ACE, EIGHT, JACK, SEVEN, mask_of
from pis_env.engine import DRAW, PHASE_NAMES, GameState
from pis_env.observation import ObservationEncoder, decode_observation
from pis_env.rules import Rules


def test_pending_sevens_are_answered_by_the_sevens_rule():
    """With a 7 on the pile and two 7s in hand, the rule keeps the seven whose suit stays
    longer in hand, Jacks aside: 7♣ and 7♦ leave one such card each (A♣; 4♦, with J♦ not
    counted), so the tie goes to the lower id, 7♣ (5). The rule for ordinary plays would
    play 7♦ (18)."""
    hand = [32, 5, 15, 12, 18, 49, 22]
    decoded = {
        "hand": hand, "discard": [31], "top_card": 31, "drew_on_suit": [[]],
        "active_suit": 2, "pending_sevens": 1, "phase": "play", "has_drawn": False,
        "direction": 1, "hand_sizes": [7, 5], "stock_size": 20,
    }
    table = Table(2, Rules(num_players=2), DEFAULT_PARAMS)
    legal = mask_of([5, 18]) | (1 << DRAW)
    assert decoded_action(decoded, legal, table) == 5
    assert decoded_action({**decoded, "pending_sevens": 0}, legal, table) == 18


def test_the_match_standing_is_read_as_the_decoder_reads_it():
    reader = ObservationReader(3, 3)
    heuristic = agents.make("heuristic", num_players=3, num_deals=3)
    seen_deals, totals = set(), set()
    for seed in range(2):
        env = pis_yedili_v0.env(num_players=3, num_deals=3)
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            decoded = decode_observation(observation["observation"], 3, 3)
            assert reader.standing(observation["observation"]) == (decoded["deal"],
                                                                   decoded["scores"])
            seen_deals.add(decoded["deal"])
            totals.update(decoded["scores"])
            env.step(None if terminated or truncated else heuristic.act(observation))
    assert seen_deals == {0, 1, 2} and max(totals) > 50
    one_deal = pis_yedili_v0.env(num_players=3)
    one_deal.reset(seed=0)
    assert ObservationReader(3, 1).standing(one_deal.last()[0]["observation"]) is None


def _expected_facts(decoded) -> tuple:
    """``ObservationReader.read``'s tuple, built from the decoder's dict."""
    voids = [0] + [sum(1 << s for s in row) for row in decoded["drew_on_suit"]]
    top = decoded["top_card"]
    return (mask_of(decoded["hand"]), -1 if top is None else top, decoded["active_suit"],
            decoded["pending_sevens"], PHASE_NAMES.index(decoded["phase"]),
            decoded["has_drawn"], decoded["direction"], decoded["hand_sizes"],
            decoded["stock_size"], mask_of(decoded["discard"]), voids)


def test_the_vector_reader_reads_what_the_decoder_reads():
    """Every fact the heuristic takes from the vector, at every decision of a few deals
    (the first, before the opening, included), at 2 and 4 players."""
    for n in (2, 4):
        reader = ObservationReader(n, 1)
        heuristic = agents.make("heuristic", num_players=n)
        openings = 0
        for seed in range(3):
            env = pis_yedili_v0.env(num_players=n)
            env.reset(seed=seed)
            for _agent in env.agent_iter():
                observation, _, terminated, truncated, _ = env.last()
                vector = observation["observation"]
                decoded = decode_observation(vector, n)
                assert reader.read(vector) == _expected_facts(decoded)
                openings += decoded["top_card"] is None
                env.step(None if terminated or truncated else heuristic.act(observation))
        assert openings >= 3


def _random_play_until(rules: Rules, seed: int, moves: int) -> GameState:
    game = GameState(rules, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        legal = game.legal_actions()
        game.apply(legal[rng.integers(len(legal))])
    return game


def test_the_engine_reader_passes_the_pending_sevens_on():
    """Positions (found by random play) where the sevens rule and the ordinary one answer
    pending sevens differently: the engine-level policy must take the sevens rule, as the
    decoded reader does."""
    rules = Rules(num_players=2)
    table = Table(2, rules, DEFAULT_PARAMS)
    encoder = ObservationEncoder(2)
    for seed, moves in ((44, 7), (50, 27), (79, 85)):
        game = _random_play_until(rules, seed, moves)
        assert game.pending_sevens
        decoded = decode_observation(encoder.encode(game, game.current), 2)
        by_rule = decoded_action(decoded, game.legal_mask(), table)
        assert by_rule != decoded_action({**decoded, "pending_sevens": 0},
                                         game.legal_mask(), table)
        assert state_action(game, table) == by_rule


def _going_out(hand: list[int], top_rank: int, suit: int, ace: bool, two_player: bool,
               plays_left: int = 7) -> int:
    """Reference for ``_go_out_multiplier``, from the rules: the best multiplier (7: 3,
    Jack: 2, else 1) of the last card of a chain of at most seven plays this turn that
    empties ``hand``. After an Ace the player plays again (its suit, an Ace or a Jack);
    at two players an 8 skips the opponent, so the player goes on; on a Jack only the
    nominated suit follows (no Jack on a Jack)."""
    if plays_left == 0:
        return 0

    def playable(card: int) -> bool:
        s, r = divmod(card, 13)
        if ace:
            return s == suit or r in (ACE, JACK)
        if top_rank == JACK:
            return s == suit and r != JACK
        return s == suit or r in (top_rank, JACK)

    options = [c for c in hand if playable(c)]
    if len(hand) == 1:
        if not options:
            return 0
        rank = hand[0] % 13
        return 3 if rank == SEVEN else 2 if rank == JACK else 1
    best = 0
    for card in options:
        s, r = divmod(card, 13)
        rest = [c for c in hand if c != card]
        if r == ACE:
            best = max(best, _going_out(rest, r, s, True, two_player, plays_left - 1))
        elif r == EIGHT and two_player:
            best = max(best, _going_out(rest, r, s, False, two_player, plays_left - 1))
    return best


def test_the_going_out_planner_finds_the_chains_the_rules_allow():
    """Random hands heavy in Aces, 8s, Jacks and 7s, against the reference above."""
    rng = np.random.default_rng(0)
    chain_cards = [13 * s + r for s in range(4) for r in (ACE, EIGHT, JACK, SEVEN)]
    found = 0
    for _ in range(3000):
        size = int(rng.integers(1, 6))
        pool = chain_cards if rng.random() < 0.8 else list(range(52))
        hand = sorted(rng.choice(pool, size=size, replace=False).tolist())
        top_rank, suit = int(rng.integers(13)), int(rng.integers(4))
        ace, two_player = bool(rng.random() < 0.3), bool(rng.random() < 0.5)
        expected = _going_out(hand, top_rank, suit, ace, two_player)
        assert _go_out_multiplier(mask_of(hand), top_rank, suit, ace, two_player) == \
            expected, (hand, top_rank, suit, ace, two_player)
        found += expected > 0
    assert found > 300


def test_the_going_out_planner_looks_seven_plays_deep():
    """At two players, Aces and 8s chain: seven cards go out in seven plays, eight do not
    (the planner's depth)."""
    chain = [12, 25, 38, 51, 6, 19, 32]  # four Aces, three 8s
    seven = sorted(chain[:6] + [45])     # ... then the 8 of spades
    eight = sorted(chain + [45])
    assert _going_out(seven, EIGHT, 0, False, True) == 1
    assert _go_out_multiplier(mask_of(seven), EIGHT, 0, False, True) == 1
    assert _going_out(eight, EIGHT, 0, False, True) == 0
    assert _go_out_multiplier(mask_of(eight), EIGHT, 0, False, True) == 0
