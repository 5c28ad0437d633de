"""The Monte Carlo bot (``agents.mc``): its belief tracker piece by piece, and what
``act`` hands the search and reads back.

A tracker that quietly stops carrying its particles leaves ``mc`` legal and nearly as
strong (it falls back to plain determinization), so nothing else notices: these tests
pin what it keeps, what it remembers of the bot's own draws, when it starts over, and
that against the player it models its particles live through the opponents' moves.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from agents.heuristic import DEFAULT_PARAMS, Table, state_action
from agents.mc import BeliefTracker, MonteCarloAgent, choose_action
from pis_env.aec import mask_array
from pis_env.cards import cards_of, mask_of
from pis_env.engine import DRAW, NOMINATE_BASE, PASS, GameState
from pis_env.observation import ObservationEncoder, decode_observation
from pis_env.rules import Rules


def _tracker(size: int = 4, attempts: int = 8, **options) -> BeliefTracker:
    rules = Rules.from_options(num_players=options.pop("num_players", 2), **options)
    return BeliefTracker(size, Table(rules.num_players, rules, DEFAULT_PARAMS), attempts, None)


def _seen(discard: int, stock_size: int, num_players: int = 2):
    """What ``_same_deal`` reads of a position."""
    return SimpleNamespace(discard=discard, stock_size=stock_size, num_players=num_players)


@pytest.mark.parametrize("before,after,same", [
    ((0b011, 30), (0b111, 30), True),    # a card played: the discard grows, the stock stays
    ((0b011, 30), (0b011, 29), True),    # a card drawn
    ((0b011, 30), (0b011, 30), True),    # a pass
    ((0b011, 30), (0b001, 29), False),   # a card left the discard: another deal
    ((0b011, 30), (0b111, 31), False),   # the stock grew: another deal
    ((0b011, 30), (0b011, 30, 3), False),  # another table size
])
def test_a_new_deal_is_told_from_the_discard_and_the_stock(before, after, same):
    tracker = _tracker()
    assert tracker._same_deal((_seen(*before),), _seen(*after)) is same


def test_with_reshuffles_only_the_table_size_starts_over():
    """The pile goes back into the stock mid-deal: the discard and the stock say nothing."""
    tracker = _tracker(empty_stock="reshuffle")
    assert tracker._same_deal((_seen(0b011, 30),), _seen(0b100, 40)) is True
    assert tracker._same_deal((_seen(0b011, 30),), _seen(0b011, 30, 3)) is False


@pytest.mark.parametrize("action,pending,before,after", [
    (13, 0, 0b0011, 0b0001),              # a diamond played: the diamond hint goes
    (3 * 13 + 5, 0, 0b1111, 0b0111),      # a spade played
    (DRAW, 0, 0b0001, 0b0101),            # a draw on hearts (the active suit)
    (DRAW, 2, 0b0001, 0b0001),            # a penalty draw says nothing of the suit
    (PASS, 0, 0b0001, 0b0001),            # a pass changes nothing
    (NOMINATE_BASE + 3, 0, 0b0001, 0b0001),
])
def test_the_bots_own_draws_on_a_suit_are_remembered(action, pending, before, after):
    tracker = _tracker()
    tracker.own_drew_on = before
    position = SimpleNamespace(hand=0, active_suit=2, pending_sevens=pending)
    tracker.record(position, [], action)
    assert tracker.own_drew_on == after
    assert tracker._prev == (position, [], 0, action)


def _observation(game: GameState, seat: int = 0) -> dict:
    encoder = ObservationEncoder(game.num_players)
    return {"observation": encoder.encode(game, seat),
            "action_mask": mask_array(game.legal_mask())}


def test_the_tracked_position_reads_the_table_and_the_bots_own_hints():
    rules = Rules.from_options(num_players=2, seven_penalty="double")
    tracker = BeliefTracker(4, Table(2, rules, DEFAULT_PARAMS), 8, 3.0)
    tracker.own_drew_on = 0b0100
    decoded = decode_observation(_observation(GameState(rules, seed=1))["observation"], 2)
    position = tracker.position(decoded, rules)
    assert position.rules.seven_penalty == "double"
    assert position.void_weight == 3.0
    assert position.void_hints[0] == 0b0100


class _Spy:
    """A tracker's ``_advance`` replaced: records its arguments, returns ``result``."""

    def __init__(self, result):
        self.result = result
        self.calls = []

    def __call__(self, particle, action, drawn, position):
        self.calls.append((particle, action, drawn, position))
        return self.result(particle) if callable(self.result) else self.result


class _Sampler:
    """A position whose ``sample`` hands out numbered stand-ins and counts them."""

    def __init__(self, hand: int = 0):
        self.hand = hand
        self.samples = 0

    def sample(self, rng):
        self.samples += 1
        return SimpleNamespace(name=f"sample {self.samples}", rng=None,
                               copy=lambda rng, n=self.samples: f"copy of {n}")


def test_the_cards_just_drawn_are_handed_to_every_particle():
    tracker = _tracker(size=2)
    old = _Sampler(hand=mask_of([1, 2]))
    tracker._prev = (old, ["p0", "p1"], old.hand, DRAW)
    tracker._advance = spy = _Spy(lambda particle: f"advanced {particle}")
    new = _Sampler(hand=mask_of([1, 2, 30, 40]))
    kept = tracker.particles(new, np.random.default_rng(0))
    assert kept == ["advanced p0", "advanced p1"]
    assert [(p, a, d, pos) for p, a, d, pos in spy.calls] == [
        ("p0", DRAW, [30, 40], new), ("p1", DRAW, [30, 40], new)]
    assert tracker.survived == 2 and old.samples == 0 and new.samples == 0


def test_a_play_hands_no_drawn_cards_on():
    tracker = _tracker(size=1)
    old = _Sampler(hand=mask_of([1, 2]))
    tracker._prev = (old, ["p0"], old.hand, 1)
    tracker._advance = spy = _Spy("kept")
    tracker.particles(_Sampler(hand=mask_of([2])), np.random.default_rng(0))
    assert spy.calls[0][2] == []


def test_lost_particles_are_topped_up_from_the_previous_decision_within_the_attempts():
    tracker = _tracker(size=3, attempts=5)
    old, new = _Sampler(), _Sampler()
    tracker._prev = (old, ["p0", "p1", "p2"], 0, PASS)
    tracker._advance = spy = _Spy(None)  # nothing survives, no fresh sample either
    kept = tracker.particles(new, np.random.default_rng(0))
    assert tracker.survived == 0
    assert old.samples == 5  # the attempts, no more
    assert [c[0].name for c in spy.calls[3:]] == [f"sample {k}" for k in range(1, 6)]
    assert all(c[1:] == (PASS, [], new) for c in spy.calls)
    # then plain samples of the observation itself
    assert new.samples == 3 and [p.name for p in kept] == ["sample 1", "sample 2", "sample 3"]


def test_a_full_set_of_survivors_needs_no_top_up():
    tracker = _tracker(size=2, attempts=5)
    old = _Sampler()
    tracker._prev = (old, ["p0", "p1"], 0, PASS)
    tracker._advance = _Spy(lambda particle: particle)
    assert tracker.particles(_Sampler(), np.random.default_rng(0)) == ["p0", "p1"]
    assert old.samples == 0


def test_the_top_up_stops_once_the_set_is_full():
    tracker = _tracker(size=3, attempts=10)
    old = _Sampler()
    tracker._prev = (old, ["p0"], 0, PASS)
    tracker._advance = _Spy(lambda particle: particle)
    kept = tracker.particles(_Sampler(), np.random.default_rng(0))
    assert old.samples == 2 and len(kept) == 3


def test_few_survivors_are_copied_up_to_the_size():
    tracker = _tracker(size=5, attempts=0)
    old = _Sampler()
    tracker._prev = (old, ["p0", "p1"], 0, PASS)
    survivors = [SimpleNamespace(rng=f"rng {k}", copy=lambda rng: f"copy with {rng}")
                 for k in range(2)]
    tracker._advance = _Spy(lambda particle: survivors[int(particle[1])])
    kept = tracker.particles(_Sampler(), np.random.default_rng(0))
    assert kept[:2] == survivors
    assert kept[2:] == ["copy with rng 0", "copy with rng 1", "copy with rng 0"]


def _advance_once(rules: Rules, seed: int, opponents_play=state_action):
    """A particle at the bot's first decision (the true deal itself) advanced by the
    bot's first action to its next decision, opponents playing ``opponents_play``; and
    how many moves the opponents made in between."""
    n = rules.num_players
    table = Table(n, rules, DEFAULT_PARAMS)
    game = GameState(rules, seed=seed)
    while game.current != 0:
        game.apply(state_action(game, table))
    tracker = BeliefTracker(1, table, 0, None)
    particle = game.copy()
    action = game.legal_actions()[0]
    hand = game.hands[0]
    game.apply(action)
    moves = 0
    while not game.deal_over and game.current != 0:
        game.apply(opponents_play(game, table))
        moves += 1
    decoded = decode_observation(_observation(game)["observation"], n)
    position = tracker.position(decoded, tracker.table.rules)
    drawn = cards_of(position.hand & ~hand) if action == DRAW else []
    return game, tracker._advance(particle, action, drawn, position), moves


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("num_players", [2, 4])
def test_the_true_deal_survives_its_own_advance(seed, num_players):
    """The true deal is always consistent: advanced by the moves that were played, it is
    the table's position again, with its clock and history cleared for the search."""
    rules = Rules.from_options(num_players=num_players)
    game, state, _ = _advance_once(rules, seed)
    if game.deal_over:
        return
    assert state is not None
    assert state.hands == game.hands and state.top == game.top
    assert state.turns == 0 and list(state.history) == []


def test_a_particle_whose_opponents_play_otherwise_is_dropped():
    """The opponent at the table plays its last legal move, the tracker's model the
    heuristic's: where the two differ the advanced particle does not show the table."""
    rules = Rules.from_options(num_players=2)
    dropped = 0
    for seed in range(12):
        game, state, _ = _advance_once(rules, seed, lambda g, t: g.legal_actions()[-1])
        dropped += state is None
    assert dropped >= 3, dropped


@pytest.mark.parametrize("seed", range(3))
def test_a_drawn_card_a_particle_dealt_to_an_opponent_is_swapped_for_the_stocks_bottom(seed):
    """The bot draws card ``c``; a particle that had dealt ``c`` to the second opponent
    gives that opponent the stock's bottom card instead and puts ``c`` on top, so the
    particle draws what the bot drew. The other hands stay as they were."""
    rules = Rules.from_options(num_players=3)
    table = Table(3, rules, DEFAULT_PARAMS)
    game = GameState(rules, seed=seed)
    while game.current != 0 or DRAW not in game.legal_actions() or len(game.stock) < 3:
        game.apply(state_action(game, table))
    drawn = game.stock[-1]
    particle = game.copy()
    swapped = next(c for c in cards_of(particle.hands[2]))
    particle.hands[2] = (particle.hands[2] & ~(1 << swapped)) | (1 << drawn)
    particle.stock[-1] = swapped
    bottom = particle.stock[0]
    before = list(particle.hands)
    game.apply(DRAW)
    assert game.current == 0  # the bot may play what it drew: no opponent moves
    tracker = BeliefTracker(1, table, 0, None)
    position = tracker.position(decode_observation(_observation(game)["observation"], 3),
                                rules)
    state = tracker._advance(particle, DRAW, [drawn], position)
    assert state is not None
    assert state.hands[0] == game.hands[0]
    assert state.hands[1] == before[1]
    assert state.hands[2] == (before[2] & ~(1 << drawn)) | (1 << bottom)
    assert sorted(state.stock) == sorted(set(particle.stock) - {bottom})


def test_the_opponents_moves_between_two_decisions_are_capped(monkeypatch):
    """A particle whose opponents play on past the cap is given up, not played out; one
    that reaches the bot's turn at the cap is kept."""
    rules = Rules.from_options(num_players=4)
    checked = 0
    for seed in range(10):
        game, state, moves = _advance_once(rules, seed)
        if game.deal_over or state is None or not moves:
            continue
        monkeypatch.setattr("agents.mc.MAX_OPPONENT_MOVES", moves)
        assert _advance_once(rules, seed)[1] is not None
        monkeypatch.setattr("agents.mc.MAX_OPPONENT_MOVES", moves - 1)
        assert _advance_once(rules, seed)[1] is None
        monkeypatch.undo()
        checked += 1
    assert checked >= 4


def test_against_the_player_it_models_the_particles_live_on():
    """``mc`` against the heuristic it rolls out with: after a draw nearly every particle
    carries on (the drawn cards handed to each), and over all decisions about half."""
    rules = Rules()
    table = Table(2, rules)
    mc = MonteCarloAgent(seed=0, samples=4, rollouts=1)
    after_draw, overall = [], []
    for deal in range(4):
        game = GameState(rules, seed=deal)
        mc.reset()
        while not game.deal_over:
            if game.current == 0:
                previous = mc.tracker._prev
                action = mc.act(_observation(game))
                if previous is not None:
                    overall.append(mc.tracker.survived / 4)
                    if previous[3] == DRAW:
                        after_draw.append(mc.tracker.survived / 4)
            else:
                action = state_action(game, table)
            game.apply(action)
    assert len(after_draw) >= 10
    assert np.mean(after_draw) > 0.75, after_draw
    assert np.mean(overall) > 0.3, overall


class _ScoresSpy:
    """``MonteCarloAgent._scores`` replaced: records what the bot hands the search and
    returns fixed rollout scores (rows: rollouts, columns: the legal actions)."""

    def __init__(self, scores):
        self.scores = np.asarray(scores, float)
        self.calls = []

    def __call__(self, position, particles, legal):
        self.calls.append((position, particles, legal))
        return cards_of(legal), self.scores


def _decision(rules: Rules, legal_count: int | None, seed: int = 0, only=None):
    """A table where seat 0 is to move with exactly ``legal_count`` legal actions (or
    more than one, with ``legal_count=None``; or the legal actions ``only``)."""
    table = Table(rules.num_players, rules, DEFAULT_PARAMS)
    for s in range(seed, seed + 200):
        game = GameState(rules, seed=s)
        while not game.deal_over:
            count = len(game.legal_actions())
            if game.current == 0 and (count == legal_count or
                                      (legal_count is None and count > 1 and only is None)
                                      or game.legal_actions() == only):
                return game
            game.apply(state_action(game, table))
    raise AssertionError("no such decision")


@pytest.mark.parametrize("track", [True, False])
@pytest.mark.parametrize("only", [None, [0]], ids=["any", "card 0"])
def test_a_single_legal_action_is_played_without_a_search(track, only, monkeypatch):
    bot = MonteCarloAgent(seed=0, samples=2, rollouts=1, track=track)
    spy = _ScoresSpy([[0.0]])
    monkeypatch.setattr(bot, "_scores", spy)
    game = _decision(Rules(), None if only else 1, only=only)
    assert bot.act(_observation(game)) == game.legal_actions()[0]
    assert spy.calls == [] and bot.last_values == {}
    assert (bot.tracker._prev is not None) is track


@pytest.mark.parametrize("track", [True, False])
def test_the_search_gets_the_tables_rules_and_the_tracked_particles(track, monkeypatch):
    rules = Rules.from_options(num_players=2, seven_penalty="double")
    bot = MonteCarloAgent(seed=0, samples=3, rollouts=1, rules=rules, track=track,
                          void_weight=3.0)
    game = _decision(rules, None)
    legal = game.legal_actions()
    spy = _ScoresSpy(np.arange(3 * len(legal)).reshape(3, len(legal)))
    monkeypatch.setattr(bot, "_scores", spy)
    bot.act(_observation(game))
    position, particles, legal_mask = spy.calls[0]
    assert cards_of(legal_mask) == legal
    assert position.rules == bot._search_rules and position.rules.seven_penalty == "double"
    assert position.void_weight == 3.0
    if track:
        assert particles is bot.tracker._prev[1] and len(particles) == 3
    else:
        assert particles is None


def test_the_values_are_each_actions_mean_over_the_rollouts(monkeypatch):
    """``last_values`` averages each column (an action) over the rows (the rollouts), and
    the move is ``choose_action``'s on those rows."""
    game = _decision(Rules(), 3)
    legal = game.legal_actions()
    scores = [[0.0, 9.0, 3.0], [0.0, 7.0, 3.0], [6.0, 8.0, 0.0], [6.0, 8.0, 0.0]]
    bot = MonteCarloAgent(seed=0, samples=4, rollouts=1, confidence=0.0)
    monkeypatch.setattr(bot, "_scores", _ScoresSpy(scores))
    assert bot.act(_observation(game)) == legal[1]
    assert bot.last_values == {legal[0]: 3.0, legal[1]: 8.0, legal[2]: 1.5}


def test_an_observation_without_a_legal_action_is_refused():
    game = _decision(Rules(), None)
    observation = _observation(game)
    observation["action_mask"] = np.zeros_like(observation["action_mask"])
    with pytest.raises(ValueError) as error:
        MonteCarloAgent(seed=0).act(observation)
    assert str(error.value) == ("no legal action in this observation: it is not this "
                                "agent's turn")


@pytest.mark.parametrize("scores,confidence,expected", [
    # a tie keeps the heuristic's move, however little confidence is asked for
    ([[1, 3], [3, 1]], -1.0, 7),
    # better on average but within the noise of the paired difference: kept
    ([[10, 9], [10, 12], [10, 9], [10, 12]], 1.0, 7),
    # two rows are enough for a standard error: clearly better, overruled
    ([[0, 5], [0, 6]], 1.5, 3),
    # exactly ``confidence`` standard errors better (mean 2, standard error 1) is not enough
    ([[0, 1], [0, 3]], 2.0, 7),
    # one row has no standard error: only confidence 0 or less overrules
    ([[0, 5]], 0.0, 3),
    ([[0, 5]], 0.5, 7),
    ([[0, 5]], 1.5, 7),
])
def test_the_heuristics_move_is_overruled_only_on_clear_evidence(scores, confidence,
                                                                  expected):
    """Columns: the heuristic's move 7, then the search's best 3 (in that order of the
    actions, so that a tie's argmax is the other move)."""
    scores = np.asarray(scores, float)
    if expected == 7 and scores[:, 1].mean() == scores[:, 0].mean():
        actions = [3, 7]
        scores = scores[:, ::-1]
    else:
        actions = [7, 3]
    assert choose_action(actions, scores, fallback=7, confidence=confidence) == expected


def test_tracking_is_one_object_and_its_shorthand_builds_the_same():
    """``MonteCarloAgent(tracking=Tracking(...))`` and the spec's shorthand keywords give
    the same tracker; both at once are refused."""
    from agents.mc import Tracking

    given = MonteCarloAgent(seed=0, samples=4, tracking=Tracking(False, 32, 7, 2.0))
    short = MonteCarloAgent(seed=0, samples=4, track=0, particles=32, track_attempts=7,
                            void_weight=2.0)
    for bot in (given, short):
        assert (bot.track, bot.void_weight, bot.tracker.size, bot.tracker.attempts,
                bot.tracker.void_weight) == (False, 2.0, 32, 7, 2.0)
    default = MonteCarloAgent(samples=4)
    assert (default.track, default.tracker.size, default.tracker.attempts) == (True, 4, 8)
    with pytest.raises(ValueError) as err:
        MonteCarloAgent(tracking=Tracking(), particles=8)
    assert str(err.value) == ("tracking given as an object and particles as shorthand: "
                              "give one or the other")
