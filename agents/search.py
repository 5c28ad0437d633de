"""The belief-guided search bot: determinizations from a belief over the hidden cards
(``agents.belief``, ``agents.belief.tracker``), heuristic (or network) rollouts on the batched
numba engine.

Why: a search over hidden cards dealt uniformly is worth nothing against the heuristic;
dealt from what the opponents revealed, it can be. At each decision with more
than one legal action the bot

1. updates what it knows of the deal (it sees every observation of its seat, also forced
   moves, and remembers its own actions). By default (``determinize="particles"``) that
   is a particle filter over the deal's hidden history, whose worlds are weighed by an
   opponent model's probability of every move the opponents made
   (``agents.belief.ParticleBelief``; the exact public events of ``pis_yedili_v1``
   tables, which the bot asks for, or those two-player v0 snapshots imply; elsewhere the
   worlds are only kept consistent): its worlds are the determinizations. Otherwise a
   ``DealTracker`` and a belief give the chance that each opponent holds each unseen card
   (``"belief"``: the learned card-location model of ``agents.belief.tracker``, the default
   until the particle filter beat it; ``"hints"``: the ``drew_on_suit`` hints with
   ``agents.mc``'s weight 0.15; ``"uniform"``: neither);
2. deals ``D = rollouts // A`` determinizations (A legal actions): every hand its exact
   size, only unseen cards, never a card an opponent is known not to hold (a hard fact,
   so in every mode), the stock in random order;
3. plays every legal action in every determinization (common random numbers) and the
   rest of the deal with the heuristic at every seat, all ``D x A`` games at once in one
   ``pis_env.batched.BatchedGame`` (one numba call per move for the whole batch);
   ``rollout_policy="network"``: every seat plays a PPO policy file instead (its argmax
   over the legal actions, ``agents.ppo``'s deterministic choice; ``rollout_path``,
   default the shipped ``models/ppo_{n}p.zip``), one batched torch forward pass per move
   over all unfinished rows (``agents.batched_policy.TorchPolicy``, one thread);
   ``"mixed"``: the searching seat's moves are the network's, the other seats' the
   heuristic's; ``"types"`` (with the particle filter): each opponent plays, in each
   determinization, the opponent type that world was weighed with (drawn from the
   world's type posterior; ``agents.typed_rollouts``), the searching seat the heuristic;
4. plays the action with the best mean score (``agents.mc.deal_score``: the charge
   differential plus ``win_bonus`` points per unit of win reward, by default 1,000, so
   that winning the deal comes first and the charges break ties; at a match table,
   ``num_deals > 1``, the rollout's effect on the match instead: its expected match win
   rate from the standing after the deal and a model of the deals left,
   ``agents.match_value``; ``match_aware=False`` keeps the deal score); with
   ``fallback="heuristic"``, the heuristic's own choice unless another beats it by
   ``confidence`` standard errors of the paired difference (``agents.mc.choose_action``).

The budget is counted in rollouts (``rollouts`` per decision, at least one per legal
action), so the bot is deterministic for a seed and the observations it is shown;
``last_rollouts`` says how many the last decision used. Its time per decision at 2 and 4
players: ``python -m benchmarks.search``; an ablation at equal budget (two tournaments on
the same duplicate deals, paired): ``python -m agents.tournament compare A/deals.csv
B/deals.csv``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from agents.base import Agent
from agents.belief.particles import ParticleBelief, position_row
from agents.belief.state_from_obs import DEFAULT_VOID_WEIGHT, ObservedPosition
from agents.belief.tracker import (
    DealTracker,
    hint_belief,
    load_model,
    sample_hidden_batch,
    uniform_belief,
)
from agents.heuristic import DEFAULT_PARAMS, Params, Table, decoded_action, mask_int, table_rules
from agents.match_value import match_scores, settled_charges, standing
from agents.mc import DEFAULT_HORIZON, choose_action, scores_of
from agents.search_options import (
    DEFAULT_DETERMINIZE,
    FALLBACKS,
    MODES,
    ROLLOUT_POLICIES,
    SHORTHAND,
    TYPES_MODEL,
    LearnedBelief,
    NetworkRollouts,
    Particles,
    TypeRollouts,
    from_shorthand,
)
from agents.typed_rollouts import TypePolicies
from pis_env.cards import NUM_CARDS
from pis_env.observation import Layout
from pis_env.rules import Rules

#: Rollouts per decision of the default bot (its timing: docs/results.md).
DEFAULT_ROLLOUTS = 4096
#: The observation layout ``determinize="particles"`` asks for: ``pis_yedili_v1``'s.
PARTICLES_LAYOUT = 1
#: Which seats a rollout network plays (``BatchedRollouts``): every seat, or seat 0 only.
NETWORK_SEATS = ("all", "searcher")
#: Points a won deal is worth in a rollout's score, on top of the charge differential.
#: A one-deal table is won or lost: at 1,000 the charges only break ties between moves
#: that win equally often (at 100, the old default, a move that lost the deal more often
#: but cheaply could outscore one that won: docs/results.md, "A deal is won, not
#: scored").
DEFAULT_WIN_BONUS = 1000.0


class BatchedRollouts:
    """Plays many copies of one observed position to the end of the deal at once.

    ``network``: a batched policy ``(obs [K, L], masks [K, 58]) -> actions [K]`` (a
    ``TorchPolicy``) that plays every seat (``network_seats="all"``) or only seat 0, the
    searching seat (``"searcher"``); the heuristic plays the others."""

    def __init__(self, rules: Rules, params: Params, network=None,
                 network_seats: str = "all", types: TypePolicies | None = None):
        from agents.heuristic.batched import HeuristicPolicy
        from pis_env.batched import BatchedGame
        from pis_env.batched import kernels as K

        if network_seats not in NETWORK_SEATS:
            raise ValueError(f"network_seats={network_seats!r}: one of "
                             f"{', '.join(NETWORK_SEATS)}")
        self.K = K
        self.rules = rules
        self.params = params
        self._game_cls = BatchedGame
        self._policy_cls = HeuristicPolicy
        self._games: dict[int, tuple] = {}
        self.network = network
        self.network_seats = network_seats
        self.types = types

    def _game(self, size: int):
        if size not in self._games:
            game = self._game_cls(size, self.rules, seed=0)
            self._games[size] = (game, self._policy_cls(size, self.rules, params=self.params))
        return self._games[size]

    def run(self, template: np.ndarray, hands: np.ndarray, stocks: np.ndarray,
            actions: list[int], seeds: np.ndarray,
            kinds: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        """Rows ``d * A + i``: determinization ``d`` (opponents' ``hands[d]``, stock
        ``stocks[d]`` next card first) after ``actions[i]``; with ``kinds`` ([D, n] type
        indices, ``types`` given), opponent ``k`` of determinization ``d`` is played by
        type ``kinds[d, k]``'s policy in all its rows. Returns charges [B, n], winners
        [B, n], hand points [B, n] at the end and which rows were truncated."""
        K = self.K
        n = self.rules.num_players
        a_count = len(actions)
        size = len(stocks) * a_count
        game, policy = self._game(size)
        st = game.st
        st[:] = template
        hand_cols = np.repeat(hands, a_count, axis=0)
        st[:, K.HAND + 1:K.HAND + n] = hand_cols
        stock_len = stocks.shape[1]
        if stock_len:
            game.stock[:, :stock_len] = np.repeat(stocks.astype(np.int8), a_count, axis=0)
        st[:, K.SLEN] = stock_len
        K.seed_streams(game.rng, np.repeat(seeds, a_count).astype(np.uint64))
        acts = np.tile(np.asarray(actions, dtype=np.int64), len(stocks))
        game.step(acts, write_obs=False)
        moves = policy.from_game if self.network is None else self._network_moves(policy)
        if kinds is not None:
            if self.types is None:
                raise ValueError("kinds given to rollouts built without type policies")
            if self.network is not None:
                raise ValueError("type rollouts play the heuristic at the searching seat; "
                                 "a rollout network does not combine with them")
            row_kinds = np.repeat(np.asarray(kinds, dtype=np.int64), a_count, axis=0)
            types, params = self.types, policy.params

            def moves(game):
                return types.moves(game, row_kinds, params)
        for _ in range(5000):
            acts = moves(game)
            if (acts < 0).all():
                break
            game.step(acts, write_obs=False)
        hands_end = st[:, K.HAND:K.HAND + n]
        points = sum(K.CHUNK_POINTS[(hands_end >> (13 * s)) & K.CHUNK] for s in range(4))
        truncated = st[:, K.REASON] == K.TRUNCATED
        return game.charges.copy(), game.winners.copy(), points, truncated

    def _network_moves(self, heuristic):
        """``game -> actions``: the network's argmax for the rows it plays (observations
        and masks built for those rows only), the heuristic's for the others, -1 for
        finished rows."""
        K = self.K
        network = self.network
        all_seats = self.network_seats == "all"

        def moves(game):
            st = game.st
            active = st[:, K.LEGAL] != 0
            if all_seats:
                acts = np.full(game.num_games, -1, dtype=np.int64)
            else:
                acts = heuristic.from_game(game)
                active &= st[:, K.CUR] == 0
            rows = np.flatnonzero(active)
            if rows.size:
                acts[rows] = network(game.observe(games=rows), game.action_masks(games=rows))
            return acts

        return moves


class SearchAgent(Agent):
    """Belief-guided determinized search; see the module docstring.

    ``rollouts``: rollouts per decision (at least one per legal action). What the search
    is made of, as objects of ``agents.search_options`` (OpenSpiel's ``MCTSBot`` is given
    its evaluator the same way): ``belief``, where the determinizations come from
    (``Particles(particles, opponent_model, moves)``, the default; ``LearnedBelief(path)``,
    ``HintBelief()``, ``UniformBelief()``); ``rollout``, who plays the rollouts
    (``HeuristicRollouts(horizon)``, the default; ``NetworkRollouts(path, seats)``, a PPO
    policy file, default ``models/ppo_{n}p.zip``, at every seat or the searching seat
    only; ``TypeRollouts(temperature)``, each opponent the type its world was weighed
    with, ``Particles`` only); ``choice``, how the scored actions are chosen
    (``BestMean()``, the default; ``KeepHeuristic(confidence)``). The spec's shorthand
    keywords (``determinize``, ``belief_path``, ``particles``, ``opponent_model``,
    ``moves``, ``rollout_policy``, ``rollout_path``, ``type_temperature``, ``horizon``,
    ``fallback``, ``confidence``) are read into those objects by
    ``agents.search_options.from_shorthand``, so ``search?determinize=hints`` and
    ``SearchAgent(determinize="hints")`` still work; a policy file for another table size
    is a ``ValueError``.

    ``win_bonus``: as ``agents.mc``; ``params``: the rollout heuristic's weights;
    ``rules`` or the RULES.md variant options as keywords: the table's variant;
    ``match_aware``: at a match table score rollouts by the match (default) rather than by
    the deal; ``carry_posterior``: see below.

    What it knows of who the opponents are (the particle filter's type posterior) carries
    from deal to deal and across ``reset``: a match, or games against the same opponent,
    teach it more the longer it plays. ``forget_opponents()``, or
    ``reset(seed, opponents_changed=True)``, clears it when the opponent changes (a
    tournament builds a fresh bot for every game, so nothing carries there unless asked:
    ``carry_posterior=True``, ``search?carry_posterior=1``, carries it between the
    rotations of each deck, ``agents.tournament.worker.carry_opponents``). ``opponent_prior()`` /
    ``set_opponent_prior(prior)`` hand that knowledge, and no card, from one bot to
    another (a browser-table session keeps one per player; see docs/search.md)."""

    name = "search"
    #: The spec's keywords for the three objects (``agents.search_options.from_shorthand``).
    SHORTHAND = SHORTHAND

    def __init__(self, num_players: int = 2, num_deals: int = 1, seed: int | None = None,
                 rollouts: int = DEFAULT_ROLLOUTS, belief=None, rollout=None, choice=None,
                 win_bonus: float = DEFAULT_WIN_BONUS, params: Params | None = None,
                 rules: Rules | Mapping | None = None, match_aware: bool = True,
                 carry_posterior: bool = False, **options):
        if any(k in options for k in SHORTHAND) or None in (belief, rollout, choice):
            shorthand = {k: options[k] for k in SHORTHAND if k in options}
            given = [k for k, v in (("belief", belief), ("rollout", rollout),
                                    ("choice", choice)) if v is not None]
            if shorthand and given:
                raise ValueError(f"{', '.join(given)} given as an object and "
                                 f"{', '.join(shorthand)} as shorthand: give one or the other")
            b, r, c, options = from_shorthand(options)
            belief, rollout, choice = belief or b, rollout or r, choice or c
        if isinstance(rollout, TypeRollouts) and not isinstance(belief, Particles):
            raise ValueError("rollout_policy='types' plays the particle filter's types: "
                             f"determinize='particles', not {belief.name!r}")
        if isinstance(rollout, TypeRollouts) and belief.opponent_model is None:
            belief = Particles(belief.particles, TYPES_MODEL, belief.moves)
        if isinstance(belief, Particles):
            # Asks for the v1 observation (its exact public events) where the table offers
            # every seat its own layout (the tournament, the browser table); reads v0 too.
            self.layout_version = PARTICLES_LAYOUT
        super().__init__(num_players, num_deals, seed)
        if isinstance(belief, Particles):
            self._readable_sizes.setdefault(Layout.of(num_players, num_deals, 0).size, 0)
        if isinstance(rollouts, bool) or not isinstance(rollouts, int) or rollouts < 1:
            raise ValueError(f"rollouts={rollouts!r}: must be an int >= 1")
        self.rollouts = rollouts
        #: Where the determinizations come from, who plays the rollouts, how the scored
        #: actions are chosen (``agents.search_options``).
        self.belief_source, self.rollout, self.choice = belief, rollout, choice
        #: Asks a tournament to carry what it learnt of its opponents between the
        #: rotations of a deck (``agents.tournament.worker.carry_opponents``).
        self.carry_posterior = bool(carry_posterior)
        self.win_bonus = float(win_bonus)
        #: Score rollouts by the match (``agents.match_value``) at a match table.
        self.match_aware = bool(match_aware)
        self.rules = table_rules(rules, num_players, num_deals, **options)
        self.table = Table(num_players, self.rules, params or DEFAULT_PARAMS)
        horizon = rollout.horizon
        if horizon is None and self.rules.empty_stock == "reshuffle":
            horizon = DEFAULT_HORIZON
        self._search_rules = self.rules.replace(num_deals=1, max_turns=horizon,
                                                illegal_action="raise", reward="points")
        self.model = (load_model(num_players, belief.path)
                      if isinstance(belief, LearnedBelief) else None)
        self.filter: ParticleBelief | None = None
        if isinstance(belief, Particles):
            self.filter = ParticleBelief(num_players, self.rules, seed=seed,
                                         num_deals=num_deals, **belief.filter_options())
            self.tracker = self.filter.tracker
        else:
            self.tracker = DealTracker(num_players, self.rules.empty_stock == "reshuffle")
        self._network = None
        self._types: TypePolicies | None = None
        if isinstance(rollout, TypeRollouts):
            assert self.filter is not None
            self._types = TypePolicies(self.filter.types, self._search_rules, seed)
        elif isinstance(rollout, NetworkRollouts):
            if rollout.path is None:
                self.rollout = rollout = NetworkRollouts(f"models/ppo_{num_players}p.zip",
                                                         rollout.seats, rollout.horizon)
            self._network = rollout_network(rollout.path, num_players)
        self._engine: BatchedRollouts | None = None
        self.last_rollouts = 0
        self.last_values: dict[int, float] = {}
        #: The standard error of each ``last_values`` mean (its rollouts' sample standard
        #: deviation / sqrt(count); NaN with a single rollout): how far a label can be
        #: trusted, which the choice itself never reads.
        self.last_stderr: dict[int, float] = {}

    # the shorthand names of the three objects, as the spec strings write them
    @property
    def determinize(self) -> str:
        return self.belief_source.name

    @property
    def rollout_policy(self) -> str:
        return self.rollout.name

    @property
    def rollout_path(self) -> str | None:
        return getattr(self.rollout, "path", None)

    @property
    def type_temperature(self) -> float:
        return getattr(self.rollout, "temperature", 1.0)

    @property
    def fallback(self) -> str:
        return self.choice.name

    @property
    def confidence(self) -> float:
        return float(self.choice.confidence)

    def reset(self, seed: int | None = None, opponents_changed: bool = False) -> None:
        """Forget the deal (a new deal is also detected) and, with ``seed``, reseed. What
        the particle filter learnt of who the opponents are stays, unless
        ``opponents_changed`` (``forget_opponents``)."""
        super().reset(seed)
        if self.filter is not None:
            self.filter.reset(seed)
            if opponents_changed:
                self.filter.forget_opponents()
        else:
            self.tracker.reset()

    def forget_opponents(self) -> None:
        """The opponents changed: forget who the particle filter thought they were."""
        if self.filter is not None:
            self.filter.forget_opponents()

    def opponent_prior(self) -> np.ndarray | None:
        """What is known of who each opponent is ([n, types] log-probabilities by
        relative seat; ``None`` without a particle filter); no card knowledge."""
        return None if self.filter is None else self.filter.opponent_prior()

    def set_opponent_prior(self, prior) -> None:
        """Start the next deal from ``prior`` (``opponent_prior``'s output)."""
        if self.filter is not None and prior is not None:
            self.filter.set_opponent_prior(prior)

    def __repr__(self) -> str:
        return (f"SearchAgent(num_players={self.num_players}, rollouts={self.rollouts}, "
                f"determinize={self.determinize!r}, rollout_policy={self.rollout_policy!r}, "
                f"seed={self.seed})")

    def act(self, observation: dict) -> int:
        action = self.advise(observation)
        self.played(action)
        return action

    def advise(self, observation: dict) -> int:
        """The action the search chooses at this observation (``last_values``: every legal
        action's mean rollout score, ``last_stderr``: its standard error), without taking
        it: call ``played`` next with the action the seat actually took. Expert iteration
        labels the positions a network reaches this way, the bot watching every
        observation of the network's seat."""
        self.check_observation(observation["observation"])
        legal = mask_int(observation["action_mask"])
        if not legal:
            raise ValueError("no legal action in this observation: it is not this agent's turn")
        decoded = self.decode(observation)
        if self.filter is not None:
            self.filter.observe(decoded)
        else:
            self.tracker.observe(decoded)
        self.last_rollouts = 0
        self.last_values = {}
        self.last_stderr = {}
        if legal & (legal - 1) == 0:
            return legal.bit_length() - 1
        return self._search(decoded, legal)

    def played(self, action: int) -> None:
        """The action the seat took at the observation last given to ``advise``."""
        if self.filter is not None:
            self.filter.record(action)
        else:
            self.tracker.record(action)

    def belief(self, decoded: Mapping) -> np.ndarray:
        """The probabilities [n-1, 52] the determinizations are dealt from."""
        if self.model is not None:  # determinize == "belief"
            return self.model(decoded, self.tracker)
        if self.filter is not None:
            return self.filter.belief(decoded)
        if self.determinize == "hints":
            return hint_belief(decoded, weight=DEFAULT_VOID_WEIGHT)
        return uniform_belief(decoded)

    def _search(self, decoded: Mapping, legal: int) -> int:
        actions = [a for a in range(58) if (legal >> a) & 1]
        count = max(1, self.rollouts // len(actions))
        rng = self.rng
        position = ObservedPosition(decoded, self._search_rules, void_weight=None)
        unseen = np.zeros(NUM_CARDS, dtype=bool)
        unseen[position.unseen] = True
        hands, stocks, kinds = self._worlds(decoded, unseen, count, rng)
        seeds = rng.integers(1, 2**62, size=count)
        if self._engine is None:
            self._engine = BatchedRollouts(
                self._search_rules, self.table.params, self._network,
                getattr(self.rollout, "seats", "all"), self._types)
        template = self._template(position)
        torch_used = self._network is not None or (self._types is not None
                                                  and self._types.networks)
        with _torch_threads(1 if torch_used else None):
            charges, winners, points, truncated = self._engine.run(
                template, hands, stocks, actions, seeds, kinds)
        match = standing(decoded, self.num_deals) if self.match_aware else None
        if match is None:
            scores = scores_of(charges, winners, points, truncated, self.rules.reward,
                               self.win_bonus)
        else:
            scores = match_scores(settled_charges(charges, winners, points, truncated),
                                  match[1], match[0], self.num_deals)
        scores = scores.reshape(count, len(actions))
        self.last_rollouts = scores.size
        self.last_values = {a: float(v) for a, v in zip(actions, scores.mean(axis=0))}
        stderr = (scores.std(axis=0, ddof=1) / np.sqrt(count) if count > 1
                  else np.full(len(actions), np.nan))
        self.last_stderr = {a: float(v) for a, v in zip(actions, stderr)}
        # BestMean: the best mean, the heuristic's move only where it ties for best (a
        # decided match, where every move is worth the same); KeepHeuristic: kept unless
        # another move beats it by `confidence` standard errors
        return choose_action(actions, scores, decoded_action(decoded, legal, self.table),
                             self.choice.confidence)

    def _worlds(self, decoded: Mapping, unseen: np.ndarray, count: int,
                rng: np.random.Generator) -> tuple:
        """``count`` determinizations: the opponents' hand masks [count, n-1], the stocks
        [count, S] (next card first) and, for type rollouts, the opponents' types
        [count, n] (else ``None``)."""
        if self._types is not None and self.filter is not None:
            return self.filter.sample(count, rng, types=True,
                                      type_temperature=self.type_temperature)
        if self.filter is not None:
            return (*self.filter.sample(count, rng), None)
        belief = self.belief(decoded)
        forbidden = self.tracker.void[1:] if self.tracker.void.any() else None
        return (*sample_hidden_batch(belief, decoded["hand_sizes"], unseen, rng, count,
                                     forbidden), None)

    def _template(self, position: ObservedPosition) -> np.ndarray:
        """The batched engine's state row of the observed position (seat 0 to move)."""
        return position_row(position, self.tracker.own_drew_on)


def rollout_network(path: str, num_players: int):
    """The batched argmax policy of a PPO policy file for the rollouts of a
    ``num_players`` table (single-deal observations, as the rollouts play one deal)."""
    from agents.batched_policy import TorchPolicy
    from agents.ppo import PolicyLoadError, load_policy, resolve_path, shipped_sizes

    if not resolve_path(path).exists():
        raise ValueError(f"rollout_path={path!r}: no such policy file (the shipped rollout "
                         "networks are models/ppo_{n}p.zip at "
                         f"{shipped_sizes()} players; pass rollout_path= for another "
                         "table size)")
    try:
        policy = load_policy(path, num_players, 1)
    except PolicyLoadError as e:
        raise ValueError(f"rollout_path={path!r} cannot play this table's rollouts: {e}") \
            from e
    return TorchPolicy.from_numpy_policy(policy, deterministic=True, name=f"ppo:{path}")


class _torch_threads:
    """Runs torch with ``n`` threads inside the block (``None``: leaves it alone): the
    rollouts' forward passes are small, and torch's thread pool on a busy machine makes
    them 10-100x slower (``TorchPolicy``'s docstring)."""

    def __init__(self, n: int | None):
        self.n = n
        self.before: int | None = None

    def __enter__(self):
        if self.n is not None:
            import torch

            self.before = torch.get_num_threads()
            if self.before != self.n:
                torch.set_num_threads(self.n)
        return self

    def __exit__(self, *exc):
        if self.before is not None and self.before != self.n:
            import torch

            torch.set_num_threads(self.before)
        return False


__all__ = ["DEFAULT_DETERMINIZE", "DEFAULT_ROLLOUTS", "FALLBACKS", "MODES", "PARTICLES_LAYOUT",
           "ROLLOUT_POLICIES", "SHORTHAND", "TYPES_MODEL", "BatchedRollouts", "SearchAgent",
           "TypePolicies", "rollout_network"]
