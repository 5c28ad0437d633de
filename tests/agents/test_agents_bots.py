"""The baseline bots (greedy, heuristic, mc) and the state-from-observation rebuild.

* every bot only plays legal actions through ``pis_env.aec`` for 2-7 players and the rules
  variants (``illegal_action="raise"``: one illegal move fails the test);
* each bot is deterministic given its seed;
* strength on duplicate deals (``agents.tournament``: each deck played twice, seats
  swapped): heuristic beats greedy and greedy beats random, with the 95% Wilson interval
  above 50%;
* ``ObservedPosition`` rebuilds a state whose observation is the original observation;
* a few hand-made positions check the heuristic's strategy rules.

Measurements (a bot's win rate at a budget) go through the tournament's command, e.g.
``python -m agents.tournament --agents "mc?samples=24&rollouts=2,heuristic" --players 2
--deals 500 --workers 2``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import agents
import pis_env
from agents.belief.state_from_obs import ObservedPosition, state_from_observation
from agents.greedy import greedy_action, longest_suit
from agents.heuristic import (
    DEFAULT_PARAMS,
    HeuristicAgent,
    Table,
    choose,
    decoded_action,
    state_action,
)
from agents.mc import MonteCarloAgent, choose_action, deal_score
from agents.tournament import run_tournament
from pis_env.cards import FULL_DECK, mask_of, parse_card
from pis_env.engine import DRAW, NOMINATE, NOMINATE_BASE, OPENING, PASS, PLAY, GameState
from pis_env.observation import ObservationEncoder, decode_observation
from pis_env.rules import Rules

ROOT = Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------- helpers


# --------------------------------------------------------------------------- legality

VARIANTS = [
    {},
    {"draw_rule": "one"},
    {"draw_rule": "until_playable"},
    {"seven_penalty": "double", "after_penalty": "continue"},
    {"nominate": "other", "opening": "first_round"},
    {"empty_stock": "reshuffle", "max_turns": 300},
    {"reward": "win", "num_deals": 3},
]
VARIANT_IDS = [",".join(f"{k}={v}" for k, v in o.items()) or "seed" for o in VARIANTS]


def _play_many(names: list[str], num_players: int, deals: int, options: dict, seed: int,
               bot_kwargs: dict | None = None) -> int:
    """Play ``deals`` episodes with the named bots round the table; returns decisions."""
    env = pis_env.env(num_players=num_players, **options)
    num_deals = options.get("num_deals", 1)
    rules = {k: v for k, v in options.items() if k != "num_deals"}
    bots = {}
    for i in range(num_players):
        name = names[i % len(names)]
        kw = dict(bot_kwargs or {}) if name == "mc" else {}
        if name in ("heuristic", "mc"):
            kw["rules"] = {**rules, "num_players": num_players, "num_deals": num_deals}
        bots[f"player_{i}"] = agents.make(name, num_players=num_players, num_deals=num_deals,
                                          seed=seed + i, **kw)
    decisions = 0
    for d in range(deals):
        env.reset(seed=seed * 100_000 + d)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = bots[name].act(obs)
            assert isinstance(action, int)
            assert obs["action_mask"][action] == 1
            env.step(action)  # illegal_action="raise" by default: an illegal move raises
            decisions += 1
    return decisions


@pytest.mark.parametrize("num_players", range(2, 8))
def test_bots_play_only_legal_actions_at_every_table_size(num_players):
    deals = 260 if num_players == 2 else 120
    _play_many(["heuristic", "greedy", "random"], num_players, deals, {}, seed=num_players)
    _play_many(["greedy", "heuristic"], num_players, deals, {}, seed=50 + num_players)


@pytest.mark.parametrize("options", VARIANTS, ids=VARIANT_IDS)
def test_bots_play_only_legal_actions_in_every_variant(options):
    for n in (2, 3, 5):
        _play_many(["heuristic", "greedy", "random"], n, 50, options, seed=7 * n)
        _play_many(["heuristic", "heuristic", "greedy"], n, 40, options, seed=9 * n)


@pytest.mark.parametrize("options", [{}, {"draw_rule": "one", "seven_penalty": "double"},
                                     {"nominate": "other", "opening": "first_round",
                                      "after_penalty": "continue"},
                                     {"empty_stock": "reshuffle", "max_turns": 200,
                                      "reward": "win"}],
                         ids=["seed", "one,double", "other,first_round,continue",
                              "reshuffle,win"])
def test_mc_plays_only_legal_actions(options):
    tiny = {"samples": 2, "rollouts": 1}
    for n in (2, 4, 7):
        _play_many(["mc", "heuristic", "random"], n, 3, options, seed=n, bot_kwargs=tiny)


# --------------------------------------------------------------------------- determinism


def _action_trace(name: str, seed: int, deals: int = 6, num_players: int = 3, **kwargs):
    env = pis_env.env(num_players=num_players)
    bots = {f"player_{i}": agents.make(name, num_players=num_players, seed=seed + i, **kwargs)
            for i in range(num_players)}
    trace = []
    for d in range(deals):
        env.reset(seed=d)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = bots[agent].act(obs)
            trace.append(action)
            env.step(action)
    return trace


@pytest.mark.parametrize("name,kwargs", [("greedy", {}), ("heuristic", {}),
                                         ("mc", {"samples": 2, "rollouts": 2})])
def test_bots_are_deterministic_given_their_seed(name, kwargs):
    deals = 2 if name == "mc" else 10
    assert _action_trace(name, 3, deals, **kwargs) == _action_trace(name, 3, deals, **kwargs)


def test_mc_belief_particles_always_agree_with_the_observation():
    """The tracked hypotheses show the bot exactly what it sees, and against a heuristic
    opponent some of them survive from one decision to the next."""
    rules = Rules()
    encoder = ObservationEncoder(2)
    table = Table(2, rules)
    from pis_env.aec import mask_array

    survived = []
    mc = MonteCarloAgent(seed=0, samples=4, rollouts=1)
    for d in range(4):
        game = GameState(rules, seed=d)
        mc.reset()
        while not game.deal_over:
            if game.current == 0:
                obs = {"observation": encoder.encode(game, 0),
                       "action_mask": mask_array(game.legal_mask())}
                action = mc.act(obs)
                position, particles, _, recorded = mc.tracker._prev
                assert recorded == action and len(particles) == 4
                for particle in particles:
                    assert position.matches(particle)
                    assert particle.card_count() == 52
                survived.append(mc.tracker.survived)
            else:
                action = state_action(game, table)
            game.apply(action)
    assert max(survived) > 0


def test_mc_seed_changes_its_samples_not_its_legality():
    """One seed, the same samples: the same values and moves. Another seed samples other
    hidden hands (other values at some decisions), and every move is legal whatever the
    seed."""
    def values_and_moves(seed: int):
        bot = MonteCarloAgent(seed=seed, samples=3, rollouts=1)
        out = []
        for obs in observations:
            bot.reset()
            action = bot.act(obs)
            assert obs["action_mask"][action] == 1, (seed, action)
            out.append((action, bot.last_values))
        return out

    observations = [obs for obs in _decisions_of_one_seat(60)
                    if obs["action_mask"].sum() > 1][:20]
    assert len(observations) == 20
    first = values_and_moves(1)
    assert values_and_moves(1) == first
    others = [values_and_moves(seed) for seed in (2, 3)]
    changed = sum(v != w for other in others for (_, v), (_, w) in zip(first, other))
    assert changed > len(observations) // 2, changed


@pytest.mark.parametrize("name,kwargs", [("random", {}), ("greedy", {}), ("heuristic", {}),
                                         ("mc", {"samples": 2, "rollouts": 1})])
def test_bots_refuse_observations_of_another_table(name, kwargs):
    """A bot reads features at the offsets of the table it was built for: an observation
    of another table size (or deal count) is a clear error, never a misread."""
    for options, built in (({"num_players": 4}, {"num_players": 7}),
                           ({"num_players": 3, "num_deals": 2}, {"num_players": 3})):
        env = pis_env.env(**options)
        env.reset(seed=0)
        obs = env.observe(env.agent_selection)
        bot = agents.make(name, **built, **kwargs)
        with pytest.raises(ValueError, match=f"built for {built['num_players']} players"):
            bot.act(obs)
        right = agents.make(name, **options, **kwargs)
        assert obs["action_mask"][right.act(obs)] == 1


def _decisions_of_one_seat(count: int = 40) -> list[dict]:
    """Observations of player_0's decisions in random 2-player deals."""
    env = pis_env.env()
    rng = np.random.default_rng(0)
    out, deal = [], 0
    while len(out) < count:
        env.reset(seed=deal)
        deal += 1
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if agent == "player_0":
                out.append(obs)
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
    return out[:count]


@pytest.mark.parametrize("name,kwargs", [
    ("random", {}), ("mc", {"samples": 2, "rollouts": 1}),
    ("ppo", {"path": str(ROOT / "models" / "ppo_2p.pt"), "deterministic": False}),
])
def test_reset_with_a_seed_restarts_the_bot_from_that_seed(name, kwargs):
    """``reset(seed=s)`` (the one seeding path of the tournament and the gym view) makes a
    used bot play exactly as a fresh bot built with ``seed=s``; a plain ``reset()`` still
    works and does not reseed."""
    observations = _decisions_of_one_seat()

    def trace(bot):
        return [bot.act(obs) for obs in observations]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a weights file that carries no digest
        fresh = agents.make(name, seed=11, **kwargs)
        used = agents.make(name, seed=3, **kwargs)
    first = trace(used)
    used.reset(seed=11)
    assert used.seed == 11 and trace(used) == trace(fresh)
    if name == "random":
        assert first != trace(fresh)  # the seed matters
    used.reset()
    assert used.seed == 11


# --------------------------------------------------------------------------- strength


def _duplicate_win_low(a: str, b: str, deals: int) -> float:
    """The low end of ``a``'s 95% Wilson interval of deal wins against ``b`` over
    ``deals`` two-player decks, each played in both seatings."""
    res = run_tournament([a, b], num_players=2, deals=deals, seed=2024, workers=1,
                         progress=False)
    assert res.stats[a].games == 2 * deals  # no deal is cut short by the default rules
    return res.stats[a].win_low


def test_heuristic_beats_greedy_on_duplicate_deals():
    assert _duplicate_win_low("heuristic", "greedy", 500) > 0.5


def test_greedy_beats_random_on_duplicate_deals():
    assert _duplicate_win_low("greedy", "random", 300) > 0.5


# --------------------------------------------------------------------------- state rebuild

REBUILD_VARIANTS = [
    {},
    {"opening": "first_round"},
    {"seven_penalty": "double", "after_penalty": "continue", "draw_rule": "one"},
    {"empty_stock": "reshuffle", "max_turns": 120},
]


def _rotate(values: list, observer: int) -> list:
    n = len(values)
    return [values[(observer + k) % n] for k in range(n)]


@pytest.mark.parametrize("options", REBUILD_VARIANTS,
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "seed")
@pytest.mark.parametrize("num_players", [2, 3, 5, 7])
def test_rebuilt_state_agrees_with_everything_the_observer_sees(num_players, options):
    rules = Rules(num_players=num_players, **options)
    rng = np.random.default_rng(num_players)
    encoder = ObservationEncoder(num_players)
    table = Table(num_players, rules)
    checked = 0
    for d in range(25):
        game = GameState(rules, seed=d)
        while not game.deal_over:
            observer = game.current
            obs = encoder.encode(game, observer)
            decoded = decode_observation(obs, num_players)
            position = ObservedPosition(decoded, rules)
            for _ in range(2):
                state = position.sample(rng)
                # Conservation: every card exactly once.
                assert state.card_count() == 52
                everything = state.pile_mask
                for h in state.hands:
                    assert not (everything & h)
                    everything |= h
                stock = mask_of(state.stock)
                assert not (everything & stock)
                assert everything | stock == FULL_DECK
                # Every visible field agrees with the true state (seats relative).
                assert state.current == 0
                assert state.hands[0] == game.hands[observer]
                assert state.top == game.top
                assert state.pile_mask == game.pile_mask and state.pile[-1:] == game.pile[-1:]
                assert state.hand_sizes() == _rotate(game.hand_sizes(), observer)
                assert len(state.stock) == len(game.stock)
                assert state.active_suit == game.active_suit
                assert state.pending_sevens == game.pending_sevens
                assert state.phase == game.phase
                assert state.has_drawn == game.has_drawn
                assert state.direction == game.direction
                assert state.drew_on[1:] == _rotate(game.drew_on, observer)[1:]
                if rules.opening == "first_round":
                    assert state.opened == sum(
                        1 << k for k in range(num_players)
                        if (game.opened >> ((observer + k) % num_players)) & 1)
                else:
                    assert bool(state.opened) == bool(game.opened)
                # Same legal moves, and the observer's view of the rebuilt state is the
                # original observation, bit for bit.
                assert state.legal_mask() == game.legal_mask()
                assert np.array_equal(encoder.encode(state, 0), obs)
                assert position.matches(state)
                checked += 1
            moved = state.copy()
            moved.apply(moved.legal_actions()[-1])
            if moved.current == 0 and not moved.deal_over:
                assert not position.matches(moved)
            game.apply(state_action(game, table) if d % 2 else
                       int(rng.choice(game.legal_actions())))
    assert checked > 300


def test_rebuilt_hidden_cards_are_resampled_and_use_draw_hints():
    rules = Rules()
    deck = [parse_card(c) for c in
            ["2C", "3D", "3C", "4D", "4C", "5D", "5C", "6D", "6C", "8D", "8C", "9D", "9C", "10D"]]
    deck += [c for c in range(52) if c not in deck]
    game = GameState(rules, deck=deck, dealer=1)  # player_0 opens with a club
    game.apply(parse_card("2C"))
    # player_1 holds no club, no 2 and no Jack: it draws on clubs and passes.
    assert game.current == 1
    game.apply(DRAW)
    game.apply(PASS)
    observer = game.current
    encoder = ObservationEncoder(2)
    obs = encoder.encode(game, observer)
    decoded = decode_observation(obs, 2)
    assert decoded["drew_on_suit"] == [[0]]
    position = ObservedPosition(decoded, rules)
    rng = np.random.default_rng(0)
    hands = {position.sample(rng).hands[1] for _ in range(20)}
    assert len(hands) > 1  # re-randomised per sample
    clubs = mask_of(range(13))
    unbiased = ObservedPosition(decoded, rules, void_weight=None)
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    biased_clubs = sum((position.sample(rng_a).hands[1] & clubs).bit_count() for _ in range(300))
    plain_clubs = sum((unbiased.sample(rng_b).hands[1] & clubs).bit_count() for _ in range(300))
    assert biased_clubs < 0.6 * plain_clubs


def test_state_from_observation_accepts_observe_dicts():
    env = pis_env.env(num_players=3)
    env.reset(seed=11)
    agent = env.agent_selection
    obs = env.observe(agent)
    state = state_from_observation(obs, 3, rng=4)
    assert state.current == 0 and state.card_count() == 52
    assert np.array_equal(np.flatnonzero(obs["action_mask"]), state.legal_actions())


def test_rebuild_rejects_an_inconsistent_observation():
    decoded = decode_observation(ObservationEncoder(2).encode(GameState(seed=1), 0), 2)
    bad = dict(decoded, stock_size=decoded["stock_size"] + 1)
    with pytest.raises(ValueError, match="52 cards"):
        ObservedPosition(bad)


# --------------------------------------------------------------------------- strategy units


def _choose(hand, legal, top, suit=None, *, pending=0, phase=PLAY, has_drawn=False,
            sizes=(5, 5), stock=20, seen=(), n=2, rules=None):
    hand_mask = mask_of(parse_card(c) for c in hand)
    legal_mask = 0
    for a in legal:
        legal_mask |= 1 << (a if isinstance(a, int) else parse_card(a))
    top_id = -1 if top is None else parse_card(top)
    if suit is None:
        suit = top_id // 13 if top_id >= 0 else 0
    seen_mask = hand_mask | mask_of(parse_card(c) for c in seen)
    if top_id >= 0:
        seen_mask |= 1 << top_id
    table = Table(n, rules or Rules(num_players=n), DEFAULT_PARAMS)
    return choose(hand_mask, legal_mask, suit, pending, phase, has_drawn, 1,
                  list(sizes), stock, seen_mask, [0] * n, table)


def test_greedy_plays_most_points_and_nominates_longest_suit():
    hand = mask_of(parse_card(c) for c in ["JH", "7H", "2H", "3S", "4S", "5S"])
    assert greedy_action([parse_card("2H"), parse_card("7H"), DRAW], hand) == parse_card("7H")
    assert greedy_action([parse_card("JH"), parse_card("7H"), DRAW], hand) == parse_card("JH")
    assert greedy_action(list(range(NOMINATE_BASE, NOMINATE_BASE + 4)), hand) == NOMINATE_BASE + 3
    assert longest_suit(hand, [0, 1, 2]) == 2
    assert greedy_action([DRAW], hand) == DRAW
    assert greedy_action([DRAW, PASS], hand) == DRAW
    assert greedy_action([PASS], hand) == PASS


def test_heuristic_keeps_its_jack_as_the_escape_card():
    # A playable spot card and a Jack: play the spot card.
    assert _choose(["JS", "5H", "9C", "KD"], ["JS", "5H", DRAW], "2H") == parse_card("5H")


def test_heuristic_draws_rather_than_spend_its_only_jack_with_a_big_stock():
    hand = ["JS", "5C", "9C", "KD", "4D"]
    assert _choose(hand, ["JS", DRAW], "2H", stock=30) == DRAW
    # ... but spends it when the opponent is about to go out.
    assert _choose(hand, ["JS", DRAW], "2H", stock=30, sizes=(5, 1)) == parse_card("JS")


def test_heuristic_answers_sevens_with_a_seven():
    assert _choose(["7S", "2S", "KD"], ["7S", DRAW], "7H", pending=1) == parse_card("7S")
    # With two sevens it picks the one of the suit it can follow.
    assert _choose(["7S", "7D", "2D", "3D"], ["7S", "7D", DRAW], "7H",
                   pending=1) == parse_card("7D")


def test_heuristic_goes_out_through_an_ace_and_on_a_seven():
    # A♥ then 7♥: out on a 7 this turn (x3).
    assert _choose(["AH", "7H"], ["AH", "7H", DRAW], "2H") == parse_card("AH")
    # Ace phase, last card playable: out.
    assert _choose(["7H"], ["7H", PASS], "AH", phase=3) == parse_card("7H")


def test_heuristic_plans_to_finish_on_a_jack_or_seven():
    # Two cards, the Jack and a playable card: play the card, keep the Jack for the finish.
    assert _choose(["JC", "9H"], ["JC", "9H", DRAW], "2H") == parse_card("9H")
    assert _choose(["JC", "7H", "9H"], ["JC", "7H", "9H", DRAW], "2H") != parse_card("JC")
    # 7♥ and 9♥: the 7 first (the opponent draws), then 9♥ goes out on it.
    assert _choose(["7H", "9H"], ["7H", "9H", DRAW], "2H") == parse_card("7H")


def test_heuristic_aims_an_eight_at_a_player_about_to_go_out():
    # Three players; the next one holds one card: skip them with the 8 rather than the 9.
    assert _choose(["8H", "9H", "KC", "4D"], ["8H", "9H", DRAW], "2H",
                   sizes=(4, 1, 6), n=3) == parse_card("8H")


def test_heuristic_nominates_its_strongest_suit():
    legal = list(range(NOMINATE_BASE, NOMINATE_BASE + 4))
    assert _choose(["KS", "QS", "9S", "2H"], legal, "JH", phase=NOMINATE) == NOMINATE_BASE + 3


def test_heuristic_opening_avoids_wasting_special_clubs():
    assert _choose(["JC", "7C", "9C", "KD"], ["JC", "7C", "9C"], None,
                   phase=OPENING) == parse_card("9C")


def test_heuristic_and_state_policy_agree():
    """The agent (reading observations) and the engine-level policy are the same bot."""
    rules = Rules(num_players=3)
    encoder = ObservationEncoder(3)
    bot = HeuristicAgent(num_players=3)
    table = Table(3, rules)
    from pis_env.aec import mask_array

    for d in range(15):
        game = GameState(rules, seed=d)
        while not game.deal_over:
            obs = {"observation": encoder.encode(game, game.current),
                   "action_mask": mask_array(game.legal_mask())}
            action = state_action(game, table)
            assert bot.act(obs) == action
            decoded = decode_observation(obs["observation"], 3)
            assert decoded_action(decoded, game.legal_mask(), table) == action
            game.apply(action)


def test_agents_make_accepts_rules_options_and_rejects_unknown_ones():
    bot = agents.make("heuristic", num_players=3, nominate="other", seed=1)
    assert bot.rules.nominate == "other" and bot.rules.num_players == 3
    bot = agents.make("mc", num_players=2, rules={"draw_rule": "one"}, samples=2, rollouts=1)
    assert bot.rules.draw_rule == "one"
    with pytest.raises(TypeError, match="unknown option 'colour' for heuristic: "):
        agents.make("heuristic", colour="red")
    with pytest.raises(ValueError, match="allowed"):
        agents.make("heuristic", draw_rule="sometimes")
    with pytest.raises(ValueError, match="samples"):
        agents.make("mc", samples=0)
    with pytest.raises(ValueError, match="num_players"):
        agents.make("heuristic", num_players=2, rules={"num_players": 4})


def test_deal_score_is_the_charge_differential():
    game = GameState(Rules(num_players=3), seed=0)
    while not game.deal_over:
        game.apply(game.legal_actions()[0])
    c = game.charges
    assert deal_score(game, 0) == pytest.approx((c[1] + c[2]) / 2 - c[0])
    assert sum(deal_score(game, i) for i in range(3)) == pytest.approx(0)


def test_deal_score_win_bonus_and_win_reward():
    game = GameState(Rules(), seed=3)
    while not game.deal_over:
        game.apply(game.legal_actions()[0])
    winner = game.winners.index(True)
    loser = 1 - winner
    diff = game.charges[loser] - game.charges[winner]
    assert not game.winners[loser] and diff > 0
    assert deal_score(game, winner, "points", win_bonus=50) == pytest.approx(diff + 50)
    assert deal_score(game, loser, "points", win_bonus=50) == pytest.approx(-diff - 50)
    assert deal_score(game, winner, "win") == pytest.approx(100 + diff / 100)


def test_mc_overrules_the_heuristic_only_on_clear_evidence():
    rng = np.random.default_rng(0)
    base = rng.normal(0, 30, size=64)
    noisy = np.column_stack([base, base + rng.normal(0.5, 20, size=64)])
    clear = np.column_stack([base, base + 15 + rng.normal(0, 5, size=64)])
    assert choose_action([3, 7], noisy, fallback=3, confidence=2.0) == 3
    assert choose_action([3, 7], clear, fallback=3, confidence=2.0) == 7
    assert choose_action([3, 7], clear, fallback=7, confidence=2.0) == 7
    # Without a gate the best mean wins.
    worse = np.column_stack([base, base - 1.0])
    assert choose_action([3, 7], worse, fallback=7, confidence=0.0) == 3


def test_deal_score_of_a_truncated_deal_counts_the_hands_as_if_it_had_ended():
    """A deal cut at ``max_turns`` ends with no charges: a rollout's score then treats the
    hand points as charges, the lowest hand going out (computed here from the hands)."""
    import random

    from pis_env.cards import points_of

    game = GameState(Rules(num_players=3, max_turns=6), seed=1)
    rnd = random.Random(0)
    while not game.deal_over:
        game.apply(rnd.choice(game.legal_actions()))
    assert game.end_reason == "truncated"
    points = [points_of(h) for h in game.hands]
    low = min(points)
    charges = [0 if p == low else p for p in points]
    assert sum(p == low for p in points) == 1
    for seat in range(3):
        others = [c for i, c in enumerate(charges) if i != seat]
        diff = sum(others) / 2 - charges[seat]
        win = 1.0 if points[seat] == low else -0.5
        assert deal_score(game, seat) == pytest.approx(diff)
        assert deal_score(game, seat, "points", win_bonus=10) == pytest.approx(diff + 10 * win)
        assert deal_score(game, seat, "win") == pytest.approx(100 * win + diff / 100)
