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
from agents.typed_rollouts import TypePolicies
from pis_env.cards import NUM_CARDS
from pis_env.observation import Layout
from pis_env.rules import Rules

#: Rollouts per decision of the default bot (its timing: docs/results.md).
DEFAULT_ROLLOUTS = 4096
MODES = ("belief", "hints", "uniform", "particles")
#: Where the default bot's determinizations come from: the particle filter, which beat the
#: learned belief at equal budget (docs/results.md, "The particle filter's search").
DEFAULT_DETERMINIZE = "particles"
#: The observation layout ``determinize="particles"`` asks for: ``pis_yedili_v1``'s.
PARTICLES_LAYOUT = 1
#: Who plays the moves of a rollout after the searched action (``rollout_policy``).
ROLLOUT_POLICIES = ("heuristic", "network", "mixed", "types")
#: The opponent types of the type search (``rollout_policy="types"``): the model set's
#: batched bots and uniform (``agents.belief.opponent_models``' ``"panel"`` preset without
#: its network types, which cost the filter and the rollouts over 3x the time budget).
TYPES_MODEL = "panel?networks=0"
#: Which seats a rollout network plays (``BatchedRollouts``): every seat, or seat 0 only.
NETWORK_SEATS = ("all", "searcher")
#: What the search plays when the rollouts do not clearly prefer a move (``fallback``).
FALLBACKS = ("heuristic", "mean")
#: Points a won deal is worth in a rollout's score, on top of the charge differential.
#: A one-deal table is won or lost: at 1,000 the charges only break ties between moves
#: that win equally often (at 100, the default until 2026-12-04, a move that lost the
#: deal more often but cheaply could outscore one that won; +3.7 points of deals won
#: against the heuristic at two players, docs/results.md, "A deal is won, not scored").
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

    ``rollouts``: rollouts per decision (at least one per legal action);
    ``determinize``: ``"particles"`` (default), ``"belief"``, ``"hints"`` or
    ``"uniform"``; ``confidence`` / ``win_bonus``: as ``agents.mc``; ``belief_path``:
    another belief model file; ``particles`` / ``opponent_model`` / ``moves``: the
    particle filter of ``determinize="particles"`` (``agents.belief.ParticleBelief``);
    ``params``: the rollout heuristic's weights; ``rules`` or the RULES.md variant options
    as keywords: the table's variant; ``horizon``: rollout cap in decisions (default none,
    400 with ``reshuffle``); ``rollout_policy``: who plays the rollouts,
    ``"heuristic"`` (default: every seat), ``"network"`` (every seat plays the PPO policy
    file ``rollout_path``, default ``models/ppo_{n}p.zip``, its argmax over the legal
    actions) or ``"mixed"`` (the searching seat the network, the others the heuristic);
    a policy file for another table size is a ``ValueError``; ``match_aware``: at a match
    table score rollouts by the match (default) rather than by the deal;
    ``rollout_policy="types"`` (``determinize="particles"`` only): in each determinization
    every opponent is played by the type of the opponent model it was drawn with from
    that world's type posterior (``ParticleBelief.sample(..., types=True)``, the
    batched players of ``agents.typed_rollouts``; a type without one, by the heuristic),
    the searching seat by the heuristic; its ``opponent_model`` defaults to
    :data:`TYPES_MODEL`, the panel's types (``search?rollout_policy=types``);
    ``type_temperature``: draws those types from the world's posterior raised to 1/T
    (1: as it is; 0: its most probable type);
    ``fallback``: ``"mean"`` (the default: the best mean score, whatever the heuristic
    would play; only an exact tie for best, as in a decided match, goes to the
    heuristic's move; ``confidence`` unused) or ``"heuristic"`` (the heuristic's move
    unless another beats it by ``confidence`` standard errors: the default until
    2026-12-02, which took the heuristic to be right wherever the rollouts could not
    tell).

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

    def __init__(self, num_players: int = 2, num_deals: int = 1, seed: int | None = None,
                 rollouts: int = DEFAULT_ROLLOUTS, determinize: str = DEFAULT_DETERMINIZE,
                 confidence: float = 1.0, win_bonus: float = DEFAULT_WIN_BONUS,
                 belief_path: str | None = None, params: Params | None = None,
                 rules: Rules | Mapping | None = None, horizon: int | None = None,
                 rollout_policy: str = "heuristic", rollout_path: str | None = None,
                 particles: int | None = None, opponent_model=None, moves: int | None = None,
                 match_aware: bool = True, fallback: str = "mean",
                 carry_posterior: bool = False, type_temperature: float = 1.0, **options):
        if determinize == "particles":
            # Asks for the v1 observation (its exact public events) where the table offers
            # every seat its own layout (the tournament, the browser table); reads v0 too.
            self.layout_version = PARTICLES_LAYOUT
        super().__init__(num_players, num_deals, seed)
        if determinize == "particles":
            self._readable_sizes.setdefault(Layout.of(num_players, num_deals, 0).size, 0)
        if isinstance(rollouts, bool) or not isinstance(rollouts, int) or rollouts < 1:
            raise ValueError(f"rollouts={rollouts!r}: must be an int >= 1")
        if determinize not in MODES:
            raise ValueError(f"determinize={determinize!r}: one of {', '.join(MODES)}")
        if rollout_policy not in ROLLOUT_POLICIES:
            raise ValueError(f"rollout_policy={rollout_policy!r}: one of "
                             f"{', '.join(ROLLOUT_POLICIES)}")
        if belief_path is not None and determinize != "belief":
            raise ValueError("belief_path is the learned belief of determinize='belief'; "
                             f"determinize={determinize!r} does not read it")
        if fallback not in FALLBACKS:
            raise ValueError(f"fallback={fallback!r}: one of {', '.join(FALLBACKS)}")
        if rollout_policy == "types" and determinize != "particles":
            raise ValueError("rollout_policy='types' plays the particle filter's types: "
                             f"determinize='particles', not {determinize!r}")
        if not 0.0 <= float(type_temperature) <= 1e6:
            raise ValueError(f"type_temperature={type_temperature!r}: must be in 0..1e6")
        if type_temperature != 1.0 and rollout_policy != "types":
            raise ValueError("type_temperature sharpens the types the rollouts of "
                             "rollout_policy='types' play; other rollouts draw no type")
        if rollout_path is not None and rollout_policy in ("heuristic", "types"):
            raise ValueError("rollout_path is the network of rollout_policy='network' or "
                             "'mixed'; the heuristic rollouts take no policy file")
        self.rollouts = rollouts
        self.type_temperature = float(type_temperature)
        self.determinize = determinize
        self.confidence = float(confidence)
        self.fallback = fallback
        #: Asks a tournament to carry what it learnt of its opponents between the
        #: rotations of a deck (``agents.tournament.worker.carry_opponents``).
        self.carry_posterior = bool(carry_posterior)
        self.win_bonus = float(win_bonus)
        #: Score rollouts by the match (``agents.match_value``) at a match table.
        self.match_aware = bool(match_aware)
        self.rules = table_rules(rules, num_players, num_deals, **options)
        self.table = Table(num_players, self.rules, params or DEFAULT_PARAMS)
        if horizon is None and self.rules.empty_stock == "reshuffle":
            horizon = DEFAULT_HORIZON
        self._search_rules = self.rules.replace(num_deals=1, max_turns=horizon,
                                                illegal_action="raise", reward="points")
        self.model = load_model(num_players, belief_path) if determinize == "belief" else None
        self.filter: ParticleBelief | None = None
        if opponent_model is None and rollout_policy == "types":
            opponent_model = TYPES_MODEL
        filter_options = {k: v for k, v in (("particles", particles), ("moves", moves),
                                            ("opponent_model", opponent_model))
                          if v is not None}
        if determinize == "particles":
            self.filter = ParticleBelief(num_players, self.rules, seed=seed,
                                         num_deals=num_deals, **filter_options)
            self.tracker = self.filter.tracker
        else:
            if filter_options:
                raise ValueError(f"{', '.join(filter_options)}: options of "
                                 "determinize='particles'")
            self.tracker = DealTracker(num_players, self.rules.empty_stock == "reshuffle")
        self.rollout_policy = rollout_policy
        self.rollout_path = rollout_path
        self._network = None
        self._types: TypePolicies | None = None
        if rollout_policy == "types":
            assert self.filter is not None
            self._types = TypePolicies(self.filter.types, self._search_rules, seed)
        elif rollout_policy != "heuristic":
            self.rollout_path = rollout_path or f"models/ppo_{num_players}p.zip"
            self._network = rollout_network(self.rollout_path, num_players)
        self._engine: BatchedRollouts | None = None
        self.last_rollouts = 0
        self.last_values: dict[int, float] = {}

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
        action's mean rollout score), without taking it: call ``played`` next with the
        action the seat actually took. Expert iteration labels the positions a network
        reaches this way, the bot watching every observation of the network's seat."""
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
                "searcher" if self.rollout_policy == "mixed" else "all", self._types)
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
        # "mean": the best mean, the heuristic's move only where it ties for best (a
        # decided match, where every move is worth the same); "heuristic": kept unless
        # another move beats it by `confidence` standard errors
        confidence = 0.0 if self.fallback == "mean" else self.confidence
        return choose_action(actions, scores, decoded_action(decoded, legal, self.table),
                             confidence)

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
    from agents.ppo import PolicyLoadError, load_policy, resolve_path

    if not resolve_path(path).exists():
        raise ValueError(f"rollout_path={path!r}: no such policy file (the shipped rollout "
                         "networks are models/ppo_2p.zip and models/ppo_4p.zip; pass "
                         "rollout_path= for another table size)")
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


__all__ = ["DEFAULT_ROLLOUTS", "FALLBACKS", "MODES", "PARTICLES_LAYOUT", "ROLLOUT_POLICIES",
           "BatchedRollouts", "SearchAgent", "TypePolicies", "rollout_network"]
