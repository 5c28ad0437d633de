"""The Monte Carlo bot: determinized rollouts with the heuristic playing every seat.

For each decision with more than one legal action it rebuilds, from the observation only
(``agents.state_from_obs``), ``samples`` engine positions in which the hidden cards (the
opponents' hands and the stock) are dealt at random from the cards it has not seen, the
deal biased by the ``drew_on_suit`` hints. For each position it plays ``rollouts``
rollouts (the stock order reshuffled each time) after every legal action, to the end of
the deal, with the heuristic bot's policy for every seat (run directly on the engine
state, which is fast). The same positions and stock orders are used for every action
(common random numbers), so differences between actions are not sampling noise between
positions. Each rollout scores the deal from the bot's seat: the rules' reward ("points":
mean charge of the others minus its own charge; "win": winners share +1, the others -1,
with the points as a tie-breaker). It plays the action with the best mean score; ties go to
the heuristic's own choice.

The budget is counted in rollouts, not seconds: ``samples x rollouts`` rollouts per legal
action, so the bot is deterministic given its seed (and the observations it is shown).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from pis_env.cards import cards_of, points_of
from pis_env.rules import Rules

from .base import Agent
from .heuristic import DEFAULT_PARAMS, Params, Table, decoded_action, mask_int, state_action
from .heuristic import table_rules as _table_rules
from .state_from_obs import DEFAULT_VOID_WEIGHT, ObservedPosition

#: Rollout length cap (decisions) for variants whose deals may not end (``reshuffle``).
DEFAULT_HORIZON = 400


def rollout(state, table: Table) -> None:
    """Play ``state`` to the end of the deal with the heuristic at every seat."""
    while not state.deal_over:
        state.apply(state_action(state, table))


def deal_score(state, seat: int, reward: str = "points", win_bonus: float = 0.0) -> float:
    """The finished (or truncated) deal's value to ``seat``, in points: the charge
    differential (mean of the others minus its own) or, with ``reward="win"``, 100 x the
    win reward plus the charge differential / 100 as a tie-breaker. A truncated rollout is
    scored as if the deal had ended on hand points."""
    n = state.num_players
    if state.end_reason == "truncated" or state.charges is None:
        points = [points_of(h) for h in state.hands]
        low = min(points)
        winners = [p == low for p in points]
        charges = [0 if w else p for p, w in zip(points, winners)]
    else:
        charges, winners = state.charges, state.winners
    diff = (sum(charges) - charges[seat]) / (n - 1) - charges[seat]
    if reward == "points" and not win_bonus:
        return float(diff)
    k = sum(winners)
    if k in (0, n):
        win = 0.0
    else:
        win = 1.0 / k if winners[seat] else -1.0 / (n - k)
    if reward == "points":
        return diff + win_bonus * win
    return 100.0 * win + diff / 100.0


class MonteCarloAgent(Agent):
    """Determinized Monte Carlo search over the heuristic; see the module docstring.

    ``samples``: determinizations per decision; ``rollouts``: rollouts per determinization
    and legal action. ``rules`` (a ``Rules`` or a dict of SPEC §4 options) or the options
    as keywords give the table's variant. ``void_weight``: how likely (relative to 1) an
    opponent is dealt a card of a suit it drew on (``None`` or 1 = ignore the hints).
    ``horizon``: rollout cap in decisions (default: none, or 400 with ``reshuffle``)."""

    name = "mc"

    def __init__(self, num_players: int = 2, num_deals: int = 1, seed: int | None = None,
                 samples: int = 24, rollouts: int = 2,
                 rules: Rules | Mapping | None = None, params: Params | None = None,
                 void_weight: float | None = DEFAULT_VOID_WEIGHT, horizon: int | None = None,
                 confidence: float = 1.0, win_bonus: float = 0.0,
                 draw_rule: str | None = None, seven_penalty: str | None = None,
                 after_penalty: str | None = None, nominate: str | None = None,
                 opening: str | None = None, empty_stock: str | None = None,
                 max_turns: int | None = None, reward: str | None = None,
                 illegal_action: str | None = None):
        super().__init__(num_players, num_deals, seed)
        for name, value in (("samples", samples), ("rollouts", rollouts)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r}: must be an int >= 1")
        self.samples = samples
        self.rollouts = rollouts
        self.rules = _table_rules(
            rules, num_players, num_deals, draw_rule=draw_rule, seven_penalty=seven_penalty,
            after_penalty=after_penalty, nominate=nominate, opening=opening,
            empty_stock=empty_stock, max_turns=max_turns, reward=reward,
            illegal_action=illegal_action,
        )
        self.table = Table(num_players, self.rules, params or DEFAULT_PARAMS)
        self.void_weight = void_weight
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

    def __repr__(self) -> str:
        return (f"MonteCarloAgent(num_players={self.num_players}, samples={self.samples}, "
                f"rollouts={self.rollouts}, seed={self.seed})")

    def act(self, observation: dict) -> int:
        legal = mask_int(observation["action_mask"])
        if not legal:
            raise ValueError("no legal action in this observation: it is not this agent's turn")
        if legal & (legal - 1) == 0:
            self.last_values = {}
            return legal.bit_length() - 1
        decoded = self.decode(observation)
        fallback = decoded_action(decoded, legal, self.table)
        actions, scores = self.rollout_scores(decoded, legal)
        means = scores.mean(axis=0)
        self.last_values = {a: float(m) for a, m in zip(actions, means)}
        return choose_action(actions, scores, fallback, self.confidence)

    def evaluate(self, decoded: Mapping, legal: int) -> dict[int, float]:
        """Mean rollout score of each legal action (from ``decode_observation``'s dict)."""
        actions, scores = self.rollout_scores(decoded, legal)
        return {a: float(m) for a, m in zip(actions, scores.mean(axis=0))}

    def rollout_scores(self, decoded: Mapping, legal: int) -> tuple[list[int], np.ndarray]:
        """The legal actions and a (samples x rollouts, actions) array of rollout scores;
        row ``k`` of every column comes from the same hidden deal and stock order."""
        actions = cards_of(legal)
        position = ObservedPosition(decoded, self._search_rules, void_weight=self.void_weight)
        table = self._search_table
        reward = self.rules.reward
        scores = np.empty((self.samples * self.rollouts, len(actions)))
        row = 0
        rng = self.rng
        reshuffle = self.rules.empty_stock == "reshuffle"
        for _ in range(self.samples):
            base = position.sample(rng)
            stock = base.stock
            for r in range(self.rollouts):
                if r:
                    stock = [stock[i] for i in rng.permutation(len(stock)).tolist()]
                seed = int(rng.integers(2**63)) if reshuffle else None
                for i, action in enumerate(actions):
                    state = base.copy(np.random.default_rng(seed) if reshuffle else base.rng)
                    state.stock = stock.copy()
                    state.apply(action)
                    rollout(state, table)
                    scores[row, i] = deal_score(state, 0, reward, self.win_bonus)
                row += 1
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


__all__ = ["DEFAULT_HORIZON", "MonteCarloAgent", "choose_action", "deal_score", "rollout"]
