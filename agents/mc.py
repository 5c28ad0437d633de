"""The Monte Carlo bot: determinized rollouts with the heuristic playing every seat.

For each decision with more than one legal action it rebuilds, from the observation only
(``agents.belief.state_from_obs``), ``samples`` engine positions in which the hidden cards (the
opponents' hands and the stock) are dealt at random from the cards it has not seen, the
deal biased by the ``drew_on_suit`` hints. For each position it plays ``rollouts``
rollouts (the stock order reshuffled each time) after every legal action, to the end of
the deal, with the heuristic bot's policy for every seat (run directly on the engine
state, which is fast). The same positions and stock orders are used for every action
(common random numbers), so differences between actions are not sampling noise between
positions. Each rollout scores the deal from the bot's seat: with the "points" reward the
charge differential (mean charge of the others minus its own) plus ``win_bonus`` points
per unit of win reward (the winner's +1, the loser's -1 at two players); with the "win"
reward 100 x the win reward, with the charge differential as a tie-breaker. At a match
table (``num_deals > 1``) a rollout is scored by its effect on the match instead: the
expected match win rate from the standing after the deal and a model of the deals left
(``agents.match_value``; ``match_aware=False`` keeps the deal score).

It plays the action with the best mean score, but overrules the heuristic's own choice
only when the paired difference (same positions, same stock orders) is at least
``confidence`` standard errors: rollouts are noisy, and a search that chases noise plays
worse than the policy it searches with (measured at 16 x 2 rollouts: with
``confidence=0`` it won 45.8% of 400 duplicate deals against ``heuristic``, 95% interval
[40.9%, 50.7%]).

The budget is counted in rollouts, not seconds: ``samples x rollouts`` rollouts per legal
action, so the bot is deterministic given its seed (and the observations it is shown).
Decisions with a single legal action are not searched.

Its strength against ``heuristic`` and its time per decision, with the command that
measured them: docs/results.md, "Baseline bots".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from agents.base import Agent
from agents.belief.state_from_obs import DEFAULT_VOID_WEIGHT, ObservedPosition
from agents.heuristic import DEFAULT_PARAMS, Params, Table, decoded_action, mask_int, state_action
from agents.heuristic import table_rules as _table_rules
from agents.match_value import match_scores, standing, state_charges
from pis_env.cards import NUM_CARDS, cards_of, points_of
from pis_env.engine import DRAW
from pis_env.rules import Rules

#: Rollout length cap (decisions) for variants whose deals may not end (``reshuffle``).
DEFAULT_HORIZON = 400
#: The most moves the opponents may make between two of the bot's decisions when the
#: tracker advances a particle: a particle that plays on past it is dropped.
MAX_OPPONENT_MOVES = 300


def rollout(state, table: Table) -> None:
    """Play ``state`` to the end of the deal with the heuristic at every seat."""
    while not state.deal_over:
        state.apply(state_action(state, table))


def scores_of(charges: np.ndarray, winners: np.ndarray, points: np.ndarray,
              truncated: np.ndarray, reward: str, win_bonus: float) -> np.ndarray:
    """The value of finished (or truncated) deals to seat 0 of every row, in points: the
    charge differential (mean of the others minus its own) plus ``win_bonus`` x the win
    reward or, with ``reward="win"``, 100 x the win reward plus the charge differential /
    100 as a tie-breaker. A truncated deal is scored as if it had ended on hand points.
    The one statement of a rollout's score: ``deal_score`` and ``agents.search`` use it."""
    charges = charges.astype(np.float64)
    winners = winners.astype(bool)
    if truncated.any():
        low = points[truncated].min(axis=1, keepdims=True)
        winners[truncated] = points[truncated] == low
        charges[truncated] = np.where(winners[truncated], 0, points[truncated])
    n = charges.shape[1]
    diff = (charges.sum(axis=1) - charges[:, 0]) / (n - 1) - charges[:, 0]
    k = winners.sum(axis=1)
    split = (k > 0) & (k < n)
    win = np.where(winners[:, 0], 1.0 / np.maximum(k, 1), -1.0 / np.maximum(n - k, 1))
    win = np.where(split, win, 0.0)
    if reward == "points":
        return diff + win_bonus * win
    return 100.0 * win + diff / 100.0


def deal_score(state, seat: int, reward: str = "points", win_bonus: float = 0.0) -> float:
    """:func:`scores_of` for one engine state from ``seat``'s side."""
    order = [(seat + i) % state.num_players for i in range(state.num_players)]
    truncated = state.end_reason == "truncated" or state.charges is None
    charges = np.zeros(state.num_players) if truncated else np.asarray(state.charges)[order]
    winners = (np.zeros(state.num_players, bool) if truncated
               else np.asarray(state.winners, bool)[order])
    points = np.array([points_of(state.hands[p]) for p in order])
    return float(scores_of(charges[None], winners[None], points[None],
                           np.array([truncated]), reward, win_bonus)[0])


class BeliefTracker:
    """Keeps hidden-card hypotheses consistent with the whole deal seen so far.

    A plain determinization deals the hidden cards uniformly; but the opponents' past
    moves say a lot about their hands. The tracker keeps ``size`` particles: full engine
    positions (every hand and the stock) consistent with the current observation. At each
    decision it takes the particles of the bot's previous decision, applies the action the
    bot took (moving the cards it then drew to the top of each particle's stock), lets the
    other seats play on with the heuristic until it is the bot's turn again, and keeps the
    particles whose position shows exactly what the new observation shows. It tops them up
    with fresh particles sampled at the previous decision and filtered the same way
    (conditioned on the last round of moves), then with copies of the survivors, and only
    then with plain samples of the current observation. Against opponents that play like
    the heuristic this quickly narrows their hands down; against others few particles
    survive and it falls back to plain determinization. The bot's own ``drew_on`` flags
    (public, but not in its own observation) are remembered too."""

    def __init__(self, size: int, table: Table, attempts: int, void_weight: float | None):
        self.size = size
        self.table = table
        self.attempts = attempts
        self.void_weight = void_weight
        self.reset()

    def reset(self) -> None:
        #: (position, particles, hand, action) of the decision just made
        self._prev: tuple[ObservedPosition, list, int, int] | None = None
        self.own_drew_on = 0
        self.survived = 0

    def _same_deal(self, prev, position: ObservedPosition) -> bool:
        old = prev[0]
        if position.num_players != old.num_players:
            return False
        if self.table.rules.empty_stock == "reshuffle":
            return True
        return (old.discard & ~position.discard) == 0 and position.stock_size <= old.stock_size

    def position(self, decoded: Mapping, rules: Rules) -> ObservedPosition:
        """The observation as an ``ObservedPosition`` (a new deal resets the memory)."""
        if self._prev is not None:
            probe = ObservedPosition(decoded, rules, void_weight=self.void_weight)
            if not self._same_deal(self._prev, probe):
                self.reset()
        return ObservedPosition(decoded, rules, void_weight=self.void_weight,
                                own_drew_on=self.own_drew_on)

    def particles(self, position: ObservedPosition, rng: np.random.Generator) -> list:
        """``size`` positions consistent with the observation (and, as far as they go,
        with the deal's history)."""
        size = self.size
        kept: list = []
        prev = self._prev
        if prev is not None:
            old_position, old_particles, old_hand, action = prev
            drawn = cards_of(position.hand & ~old_hand) if action == DRAW else []
            for particle in old_particles:
                state = self._advance(particle, action, drawn, position)
                if state is not None:
                    kept.append(state)
            self.survived = len(kept)
            tries = 0
            while len(kept) < size and tries < self.attempts:
                tries += 1
                state = self._advance(old_position.sample(rng), action, drawn, position)
                if state is not None:
                    kept.append(state)
        if kept:  # never more than ``size``: survivors of ``size``, topped up to it
            base = len(kept)
            kept += [kept[i % base].copy(kept[i % base].rng) for i in range(size - base)]
        else:
            kept = [position.sample(rng) for _ in range(size)]
        return kept

    def record(self, position: ObservedPosition, particles: list, action: int) -> None:
        """Remember the decision just made (call after choosing ``action``)."""
        self._prev = (position, particles, position.hand, action)
        if action < NUM_CARDS:
            self.own_drew_on &= ~(1 << (action // 13))
        elif action == DRAW and not position.pending_sevens:
            self.own_drew_on |= 1 << position.active_suit

    def _advance(self, particle, action: int, drawn: list[int], position: ObservedPosition):
        state = particle.copy(particle.rng)
        if drawn:
            stock = state.stock
            hands = state.hands
            for card in drawn:
                bit = 1 << card
                if card in stock:
                    stock.remove(card)
                else:
                    for k in range(1, len(hands)):
                        if hands[k] & bit:
                            if not stock:
                                return None
                            hands[k] = (hands[k] & ~bit) | (1 << stock.pop(0))
                            break
                    else:
                        return None
            stock.extend(drawn)
            state._legal = None
        try:
            state.apply(action)
        except ValueError:
            return None
        table = self.table
        steps = 0
        while not state.deal_over and state.current != 0:
            state.apply(state_action(state, table))
            steps += 1
            if steps > MAX_OPPONENT_MOVES:
                return None
        if not position.matches(state):
            return None
        state.turns = 0
        state.history = []
        state.histories = [state.history]
        return state


@dataclass(frozen=True)
class Tracking:
    """What ``MonteCarloAgent`` believes of the hidden cards and how it follows the deal:
    ``track`` -- follow the deal between decisions with ``BeliefTracker`` (also at forced
    moves); ``particles`` -- the tracker's worlds (at least ``samples``); ``attempts`` --
    fresh deals tried to top them up (default twice the particles); ``void_weight`` -- how
    likely (relative to 1) an opponent is dealt a card of a suit it drew on (``None`` or
    1: ignore the hints).

    Why an object: the four options are one idea, and the bot's other options are the
    search's own. The spec keeps them as shorthand (``mc?track=0&particles=64``,
    ``track_attempts``, ``void_weight``), read by :meth:`from_shorthand`."""

    #: The spec's keywords for these fields.
    SHORTHAND: ClassVar[tuple[str, ...]] = ("track", "particles", "track_attempts",
                                            "void_weight")
    track: bool = True
    particles: int | None = None
    attempts: int | None = None
    void_weight: float | None = DEFAULT_VOID_WEIGHT

    @classmethod
    def from_shorthand(cls, options: Mapping[str, Any]) -> Tracking:
        return cls(bool(options.get("track", True)), options.get("particles"),
                   options.get("track_attempts"),
                   options.get("void_weight", DEFAULT_VOID_WEIGHT))


class MonteCarloAgent(Agent):
    """Determinized Monte Carlo search over the heuristic; see the module docstring.

    ``samples``: determinizations per decision; ``rollouts``: rollouts per determinization
    and legal action. ``rules`` (a ``Rules`` or a dict of rules options) or the options
    as keywords (``Rules.keys()``) give the table's variant. ``tracking``: what it
    believes of the hidden cards (:class:`Tracking`; its fields as shorthand keywords:
    ``track``, ``particles``, ``track_attempts``, ``void_weight``).
    ``horizon``: rollout cap in decisions (default: none, or 400 with ``reshuffle``).
    ``confidence`` and ``win_bonus``: see the module docstring; ``match_aware``: at a
    match table score rollouts by the match (default) rather than by the deal."""

    name = "mc"
    #: The spec's keywords for :class:`Tracking`'s fields.
    SHORTHAND = Tracking.SHORTHAND

    def __init__(self, num_players: int = 2, num_deals: int = 1, seed: int | None = None,
                 samples: int = 16, rollouts: int = 2,
                 rules: Rules | Mapping | None = None, params: Params | None = None,
                 horizon: int | None = None, confidence: float = 1.5,
                 win_bonus: float = 100.0, tracking: Tracking | None = None,
                 match_aware: bool = True, **options):
        shorthand = {k: options.pop(k) for k in Tracking.SHORTHAND if k in options}
        if tracking is not None and shorthand:
            raise ValueError(f"tracking given as an object and {', '.join(shorthand)} as "
                             "shorthand: give one or the other")
        tracking = tracking or Tracking.from_shorthand(shorthand)
        super().__init__(num_players, num_deals, seed)
        for name, value in (("samples", samples), ("rollouts", rollouts)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r}: must be an int >= 1")
        self.samples = samples
        self.rollouts = rollouts
        #: Score rollouts by the match (``agents.match_value``) at a match table.
        self.match_aware = bool(match_aware)
        self._match: tuple[int, list[int]] | None = None
        self.rules = _table_rules(rules, num_players, num_deals, **options)
        self.table = Table(num_players, self.rules, params or DEFAULT_PARAMS)
        self.tracking = tracking
        self.void_weight = tracking.void_weight
        self.confidence = float(confidence)
        self.win_bonus = float(win_bonus)
        if horizon is None and self.rules.empty_stock == "reshuffle":
            horizon = DEFAULT_HORIZON
        self.horizon = horizon
        # The search plays one deal at a time with the table's rules; the horizon replaces
        # the table's own turn limit (the search cannot see how many turns were played).
        self._search_rules = self.rules.replace(num_deals=1, max_turns=horizon,
                                                illegal_action="raise")
        self._search_table = Table(num_players, self._search_rules, self.table.params)
        self.last_values: dict[int, float] = {}
        self.track = bool(tracking.track)
        particles = max(samples, tracking.particles or 0)
        attempts = 2 * particles if tracking.attempts is None else tracking.attempts
        self.tracker = BeliefTracker(particles, self._search_table, attempts,
                                     tracking.void_weight)

    def reset(self, seed: int | None = None) -> None:
        """Forget the deal (called between deals; a new deal is also detected) and, with
        ``seed``, restart the search's random generator from it (``Agent.reset``)."""
        super().reset(seed)
        self.tracker.reset()

    def __repr__(self) -> str:
        return (f"MonteCarloAgent(num_players={self.num_players}, samples={self.samples}, "
                f"rollouts={self.rollouts}, seed={self.seed})")

    def act(self, observation: dict) -> int:
        self.check_observation(observation["observation"])
        legal = mask_int(observation["action_mask"])
        if not legal:
            raise ValueError("no legal action in this observation: it is not this agent's turn")
        single = legal & (legal - 1) == 0
        if single and not self.track:
            self.last_values = {}
            return legal.bit_length() - 1
        decoded = self.decode(observation)
        position, particles = self._belief(decoded)
        if single:
            self.last_values = {}
            action = legal.bit_length() - 1
        else:
            fallback = decoded_action(decoded, legal, self.table)
            self._match = standing(decoded, self.num_deals) if self.match_aware else None
            actions, scores = self._scores(position, particles, legal)
            means = scores.mean(axis=0)
            self.last_values = {a: float(m) for a, m in zip(actions, means)}
            action = choose_action(actions, scores, fallback, self.confidence)
        if self.track:
            self.tracker.record(position, particles, action)
        return action

    def _belief(self, decoded: Mapping):
        if self.track:
            position = self.tracker.position(decoded, self._search_rules)
            return position, self.tracker.particles(position, self.rng)
        return ObservedPosition(decoded, self._search_rules, void_weight=self.void_weight), None

    def evaluate(self, decoded: Mapping, legal: int) -> dict[int, float]:
        """Mean rollout score of each legal action (from ``decode_observation``'s dict),
        without touching the bot's memory of the deal."""
        position = ObservedPosition(decoded, self._search_rules, void_weight=self.void_weight)
        self._match = standing(decoded, self.num_deals) if self.match_aware else None
        actions, scores = self._scores(position, None, legal)
        return {a: float(m) for a, m in zip(actions, scores.mean(axis=0))}

    def _scores(self, position: ObservedPosition, particles: list | None,
                legal: int) -> tuple[list[int], np.ndarray]:
        """The legal actions and a (samples x rollouts, actions) array of rollout scores;
        row ``k`` of every column comes from the same hidden deal and stock order."""
        actions = cards_of(legal)
        table = self._search_table
        reward = self.rules.reward
        scores: np.ndarray = np.empty((self.samples * self.rollouts, len(actions)))
        match = self._match
        if match is not None:
            settled = np.empty((*scores.shape, self.num_players), np.int64)
        row = 0
        rng = self.rng
        reshuffle = self.rules.empty_stock == "reshuffle"
        if particles is not None and len(particles) > self.samples:
            pick = rng.choice(len(particles), size=self.samples, replace=False).tolist()
            particles = [particles[i] for i in sorted(pick)]
        for k in range(self.samples):
            if particles is None:
                base = position.sample(rng)
                stock = base.stock
            else:
                base = particles[k % len(particles)]
                stock = [base.stock[i] for i in rng.permutation(len(base.stock)).tolist()]
            for r in range(self.rollouts):
                if r:
                    stock = [stock[i] for i in rng.permutation(len(stock)).tolist()]
                seed = int(rng.integers(2**63)) if reshuffle else None
                for i, action in enumerate(actions):
                    state = base.copy(np.random.default_rng(seed) if reshuffle else base.rng)
                    state.stock = stock.copy()
                    state.apply(action)
                    rollout(state, table)
                    if match is None:
                        scores[row, i] = deal_score(state, 0, reward, self.win_bonus)
                    else:
                        settled[row, i] = state_charges(state)
                row += 1
        if match is not None:
            scores = np.asarray(match_scores(settled.reshape(-1, self.num_players), match[1],
                                             match[0], self.num_deals),
                                np.float64).reshape(scores.shape)
        return actions, scores


def choose_action(actions: list[int], scores: np.ndarray, fallback: int,
                  confidence: float) -> int:
    """The action with the best mean score, unless it does not beat ``fallback`` (the
    heuristic's choice) by ``confidence`` standard errors of the paired difference: the
    search overrules the heuristic only when the rollouts say so clearly."""
    means = scores.mean(axis=0)
    best = int(np.argmax(means))
    if fallback not in actions:
        return actions[best]
    fb = actions.index(fallback)
    if best == fb or means[best] <= means[fb]:
        return fallback
    diff = scores[:, best] - scores[:, fb]
    if len(diff) < 2:
        return actions[best] if confidence <= 0 else fallback
    se = float(diff.std(ddof=1)) / np.sqrt(len(diff))
    return actions[best] if diff.mean() > confidence * se else fallback


__all__ = ["DEFAULT_HORIZON", "MonteCarloAgent", "Tracking", "choose_action", "deal_score",
           "rollout", "scores_of"]
