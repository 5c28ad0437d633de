"""``LearnerBatch``: the batched engine seen from the learner's seat in ``num_envs`` games.

The one place that steps :class:`pis_env.batched.env.BatchedEnv` for training: it resolves
the opponents (``"random"`` inside the numba kernel, the numba ports of ``greedy`` and
``heuristic``, ``ppo:PATH`` policy files as one torch forward pass, other agents row by row),
draws them per match from a mix, turns the learner's illegal or out-of-range actions into
forfeits, appends the policy features (the mask, the privileged critic's hidden cards),
keeps the episode returns and lengths and reports every finished match as arrays
(:class:`MatchResults`). Two thin adapters sit on it: the stable-baselines3 ``VecEnv``
(``train.vector.sb3_vec_env.BatchedVecEnv``, a dict per finished game) and the gymnasium
``VectorEnv`` (``train.vector.gym_vector_env.PisYediliVectorEnv``, gymnasium's dict of arrays, for
RLlib and CleanRL-style loops). So both play the same games the same way, and this module
imports neither stable-baselines3 nor Ray (torch only when a ``ppo:`` opponent is built).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from agents.batched_policy import TorchPolicy
from pis_env.batched import kernels as K
from pis_env.batched.env import SKIP, BatchedEnv, layout_of
from pis_env.privileged import privileged_rows, privileged_size
from pis_env.rules import Rules
from train.common.league import win_share

NUM_ACTIONS = K.NUM_ACTIONS
BUILTIN = ("random",)
#: The policy features a learner may see: its observation, optionally with the mask appended.
FEATURES = (("obs",), ("obs", "mask"))

#: A batched opponent: ``policy(obs [K, L] float32, masks int8 [K, 58]) -> actions [K]``.
Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]


# ---------------------------------------------------------------------- opponents
class AgentPolicy:
    """Any agent with ``act(observation_dict)`` (``agents.make(...)``: heuristic, mc, ...)
    as a batched policy, row by row. The agent must be stateless across decisions of
    different games (the heuristic, greedy and random bots are)."""

    def __init__(self, agent, name: str | None = None):
        self.agent = agent
        self.name = name or getattr(agent, "name", type(agent).__name__)
        #: the layout the agent reads (``agents.base.Agent.layout_version``): the batched
        #: engine shows it that one
        self.layout_version = getattr(agent, "layout_version", None)

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        act = self.agent.act
        return np.array([act({"observation": o, "action_mask": m})
                         for o, m in zip(obs, masks)], dtype=np.int64)

    def __repr__(self) -> str:
        return f"AgentPolicy({self.name!r})"


def name_of(opponent) -> str:
    """The name a match result reports for an opponent: the string, or a callable's
    ``name`` (a function's ``__name__``)."""
    if isinstance(opponent, str):
        return opponent
    return str(getattr(opponent, "name", None) or getattr(opponent, "__name__", None)
               or repr(opponent))


_BIT = np.arange(52, dtype=np.int64)


def privileged_rows_of_batch(st: np.ndarray, stock: np.ndarray, seats: np.ndarray,
                             n: int) -> np.ndarray:
    """float32 [K, privileged_size(n)]: the hidden cards of K games (``st``/``stock`` rows
    of ``BatchedGame``) seen from ``seats``: ``pis_env.privileged.privileged_rows`` of the
    opponents' hands clockwise from the seat's left and the stock in draw order."""
    rows = np.arange(st.shape[0])
    hands = np.stack([st[rows, K.HAND + (seats + k) % n] for k in range(1, n)], axis=1)
    spos, slen = st[:, K.SPOS], st[:, K.SLEN]
    order = np.take_along_axis(stock, np.minimum(spos[:, None] + _BIT, 51), axis=1)
    return privileged_rows(hands, order, slen - spos)


# ---------------------------------------------------------------------- results
class MatchResults(NamedTuple):
    """The matches that ended in one step, one row per finished game (``index``).

    ``charges`` / ``opponents`` / ``win`` are seen from the learner: its own score first,
    then the seats clockwise from its left (match totals for multi-deal matches, the deal's
    charges otherwise); they are what a league records and are meaningless where
    ``truncated``. ``illegal_action`` is the learner's action where it ``forfeited`` (an
    illegal or out-of-range id ended the match).
    ``match_score`` is ``None`` for one-deal matches."""

    index: np.ndarray            # int [E]
    terminal_obs: np.ndarray     # float32 [E, size]: the final position, mask part zero
    truncated: np.ndarray        # bool [E]
    seat: np.ndarray             # int [E]
    end_reason: np.ndarray       # str [E]: K.REASON_NAMES
    penalty: np.ndarray          # int [E]: the learner's charge in the last deal
    winner: np.ndarray           # bool [E]: the learner won the last deal
    match_score: np.ndarray | None
    forfeited: np.ndarray        # bool [E]
    illegal_action: np.ndarray   # int [E], valid where forfeited
    opponents: np.ndarray        # str [E, n - 1]
    charges: np.ndarray          # int [E, n]
    win: np.ndarray              # bool [E]: the learner has the lowest score
    episode_return: np.ndarray   # float [E], win bonus included
    episode_length: np.ndarray   # int [E]: the learner's decisions


class StepResult(NamedTuple):
    """What :meth:`LearnerBatch.step` returns; new arrays, the caller may keep them."""

    obs: np.ndarray        # float32 [B, size]: the next decision (a new match where done)
    rewards: np.ndarray    # float32 [B], win bonus included
    dones: np.ndarray      # bool [B]: the match ended (terminated or truncated)
    truncated: np.ndarray  # bool [B]
    ended: MatchResults


def _mix_items(mix: Mapping | Sequence[tuple[Any, float]] | None) -> list[tuple[Any, Any]]:
    """An opponent mix as ``(opponent, weight)`` pairs."""
    return list(mix.items()) if isinstance(mix, Mapping) else list(mix or [])


# ---------------------------------------------------------------------- the core
@dataclass(frozen=True)
class Learner:
    """The learner's seat of a batched table: where it sits (``seat``: a seat, or ``None``
    / ``"random"``, drawn for every match), what it sees (``features``, ``privileged``,
    ``layout_version``), which moves it is asked for (``skip_forced``) and what a won
    match adds to its reward (``win_bonus``). :class:`LearnerBatch` documents each.

    Why one object: the three vector envs over the batched engine (SB3's, gymnasium's,
    RLlib's) pass these six settings through to :class:`LearnerBatch` unchanged; as one
    object they travel as one argument. The same names as keywords
    (``learner_seat=``, ``features=``, ...; :data:`Learner.SHORTHAND`) are read into it."""

    #: The keyword of each field, as the vector envs and ``make_vec`` take them.
    SHORTHAND: ClassVar[dict[str, str]] = {
        "learner_seat": "seat", "features": "features", "skip_forced": "skip_forced",
        "win_bonus": "win_bonus", "privileged": "privileged",
        "layout_version": "layout_version"}
    seat: int | str | None = 0
    features: Sequence[str] = ("obs",)
    skip_forced: bool = False
    win_bonus: float = 0.0
    privileged: bool = False
    layout_version: int = 0

    @classmethod
    def resolve(cls, learner: Learner | None,
                options: Mapping[str, Any]) -> tuple[Learner, dict[str, Any]]:
        """``(learner, rest)``: ``learner``, or one read from the shorthand keywords of
        ``options``; ``rest`` the other options (the rules'). Both at once is a
        ``ValueError``."""
        rest = dict(options)
        given = {field: rest.pop(key) for key, field in cls.SHORTHAND.items() if key in rest}
        if learner is not None and given:
            raise ValueError(f"learner given as an object and "
                             f"{', '.join(k for k in cls.SHORTHAND if k in options)} as "
                             "keywords: give one or the other")
        return (learner if learner is not None else cls(**given)), rest


class LearnerBatch:
    """``num_envs`` games of :class:`BatchedEnv`, one learner seat each (module docstring).

    ``LearnerBatch(num_envs, rules=None, *, opponent="random", opponent_mix=None,
    mix_per="seat", learner=Learner(), seed=None, bot_factory=None, **rules_options)``,
    the :class:`Learner`'s fields also as keywords (``learner_seat=0, features=("obs",),
    skip_forced=False, win_bonus=0.0, privileged=False, layout_version=0``)

    * ``rules``: a ``Rules``, a dict of options, or ``None`` (options as keywords).
    * ``opponent``: ``"random"``, ``"greedy"``, ``"heuristic"``, ``"ppo:PATH"`` (a
      :class:`TorchPolicy`), another agent name (``agents.make`` and :class:`AgentPolicy`),
      a batched callable, or a list of those, one per seat (the learner's is ignored).
    * ``opponent_mix``: ``{opponent: weight}`` (keys as ``opponent``; it replaces
      ``opponent`` from the first reset on): every match draws each opponent seat from it
      (``mix_per="game"``: one draw per match for all its seats).
    * ``learner_seat``: a seat, or ``None`` / ``"random"`` (drawn for every match).
    * ``features``: ``("obs",)`` or ``("obs", "mask")`` (the legal mask appended as float32).
    * ``privileged``: append :func:`privileged_rows_of_batch` (the hidden cards, for a
      privileged critic).
    * ``skip_forced``: the kernel plays the learner's forced moves (a single legal action).
    * ``win_bonus``: added at a (not truncated) match end, ``+bonus`` split among the
      lowest totals, ``-bonus`` among the others.
    * ``bot_factory(name) -> agent``: how agent names other than random/greedy are made
      (default ``agents.make_for_table(name, rules)``).
    * ``layout_version``: the learner's observation layout (0: ``PisYedili-v0``,
      1: ``PisYedili-Events-v0``). Every opponent policy is shown the layout it was built for
      (its ``layout_version``: a ``ppo:`` file's, an agent's), so v0 and v1 networks sit
      at one table; the engine keeps the v1 public record when the learner or an opponent
      named here (``opponent``, ``opponent_mix``) reads layout 1. A layout-1 opponent
      added later to a table without it is a ``ValueError``.
    """

    def __init__(self, num_envs: int, rules: Rules | Mapping | None = None, *,
                 opponent: Any = "random", opponent_mix: Mapping | None = None,
                 mix_per: str = "seat", learner: Learner | None = None,
                 seed: int | None = None, bot_factory: Callable[[str], Any] | None = None,
                 **options):
        learner, options = Learner.resolve(learner, options)
        learner_seat, features, skip_forced, win_bonus, privileged, layout_version = (
            learner.seat, learner.features, learner.skip_forced, learner.win_bonus,
            learner.privileged, learner.layout_version)
        self.learner = learner
        if rules is None:
            rules = Rules.from_options(**options)
        elif isinstance(rules, Mapping):
            rules = Rules.from_options(**{**dict(rules), **options})
        elif options:
            rules = rules.replace(**options)
        if mix_per not in ("seat", "game"):
            raise ValueError(f"mix_per={mix_per!r}: 'seat' or 'game'")
        self.features = tuple(features)
        if self.features not in FEATURES:
            raise ValueError(f"features={features!r}: ('obs',) or ('obs', 'mask')")
        self.rules = rules
        self.mix_per = mix_per
        self.num_players = n = rules.num_players
        self.multi_deal = rules.num_deals > 1
        self.skip_forced = bool(skip_forced)
        self.win_bonus = float(win_bonus)
        self.privileged = bool(privileged)
        self._bot_factory = bot_factory
        self._bots: dict[str, Any] = {}
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**63))
        self.seed = int(seed)
        self._panel_seed = np.random.default_rng([self.seed, 7])  # the panel's ε draws
        seat = "random" if learner_seat in (None, "random") else learner_seat
        per_seat = list(opponent) if isinstance(opponent, (list, tuple)) else [opponent] * n
        resolved = [self._resolve(o) for o in per_seat]
        mixed = [self._resolve(o) for o, _ in _mix_items(opponent_mix)]
        self.env = BatchedEnv(num_envs, rules, opponent=resolved, learner_seat=seat,
                              seed=self.seed, skip_forced=skip_forced,
                              layout_version=layout_version,
                              public_record=any(layout_of(o, layout_version)
                                                for o in resolved + mixed))
        self.layout_version = self.env.game.layout_version
        self.num_envs = num_envs
        self.obs_size = self.env.obs_size
        self._names: dict[int, str] = {K.RANDOM: "random"}
        for o in per_seat:
            self._names[self._kind(o)] = name_of(o)
        self.size = self.obs_size + (NUM_ACTIONS if "mask" in self.features else 0)
        if self.privileged:
            self.size += privileged_size(n)
        self._ar = np.arange(num_envs)
        self._ep_return = np.zeros(num_envs, dtype=np.float64)
        self._ep_len = np.zeros(num_envs, dtype=np.int64)
        self.mix: dict[str, float] = {}
        if opponent_mix is not None:
            self.set_opponent_mix(opponent_mix)

    # ------------------------------------------------------------------ opponents
    def _resolve(self, opponent):
        """A BatchedEnv opponent: a builtin name or a batched callable."""
        if isinstance(opponent, str):
            if opponent in BUILTIN:
                return opponent
            bot = self._bots.get(opponent)
            if bot is None:
                bot = self._port(opponent) or AgentPolicy(self._make_bot(opponent), opponent)
                self._bots[opponent] = bot
            return bot
        if not callable(opponent):
            raise ValueError(f"an opponent is 'random', 'greedy', an agent name or a "
                             f"callable policy(obs, masks) -> actions, got {opponent!r}")
        return opponent

    def _port(self, name: str):
        """The opponent's batched port (``agents.registry``: the numba ports of the
        heuristic, greedy and the panel's styles, a policy file's one forward pass), or
        ``None`` where it has none or a ``bot_factory`` builds the table's bots (then only
        ``greedy``, which a factory never replaced, keeps its port)."""
        from agents.registry import batched_port, has_port

        if self._bot_factory is not None and name != "greedy":
            return None
        if not has_port(name):
            return None
        return batched_port(name, 1, self.rules, seed=int(self._panel_seed.integers(2**31)))

    def _make_bot(self, name: str):
        if self._bot_factory is not None:
            return self._bot_factory(name)
        import agents

        return agents.make_for_table(name, self.rules.to_dict())

    def _kind(self, opponent) -> int:
        """The kind id of an opponent (registering a new callable in a free slot)."""
        env = self.env
        resolved = self._resolve(opponent)
        if isinstance(resolved, str):
            return BUILTIN.index(resolved)
        for i, known in enumerate(env.policies):
            if known is resolved:
                return K.EXTERNAL + i
        env.check_policy(resolved)
        for i, known in enumerate(env.policies):
            if known is None:
                env.policies[i] = resolved
                return K.EXTERNAL + i
        env.policies.append(resolved)
        return K.EXTERNAL + len(env.policies) - 1

    def set_opponent_mix(self, mix: Mapping | Sequence[tuple[Any, float]] | None) -> None:
        """Opponents of the matches that start from now on: ``{opponent: weight}`` (or
        ``(opponent, weight)`` pairs); ``None`` or empty: keep the current seats' ones.
        Callables no game uses any more are released."""
        items = [(o, float(w)) for o, w in _mix_items(mix) if float(w) > 0]
        if mix and not items:
            raise ValueError("opponent_mix: the weights sum to 0")
        kinds = [self._kind(o) for o, _ in items]
        for (o, _), k in zip(items, kinds):
            self._names[k] = name_of(o)
        self.env.set_opponent_mix(kinds, [w for _, w in items],
                                  per_game=self.mix_per == "game")
        self.mix = {name_of(o): w for o, w in items}
        used = set(kinds) | set(np.unique(self.env.opponent_kinds).tolist())
        for i in range(len(self.env.policies)):
            if K.EXTERNAL + i not in used:
                self.env.policies[i] = None
                self._names.pop(K.EXTERNAL + i, None)

    # ------------------------------------------------------------------ stepping
    def reset(self, seed: int | None = None, *, decks=None, dealers=None) -> np.ndarray:
        """New matches in every game (``decks``/``dealers``: stacked deals, as
        ``BatchedGame.reset``; ``seed``: all the games' streams). The policy input."""
        obs, masks = self.env.reset(seed, decks=decks, dealers=dealers)
        self._ep_return[:] = 0.0
        self._ep_len[:] = 0
        return self.policy_input(obs, masks)

    def step(self, actions: np.ndarray, hold: np.ndarray | None = None) -> StepResult:
        """The learner's actions [B]; an id outside 0..57 or an illegal one forfeits the
        match. ``hold`` (bool [B]): games left as they are (their action is ignored; no
        reward, not done), for a next-step auto-reset that shows a terminal observation
        before the new match."""
        env = self.env
        raw = np.asarray(actions).reshape(self.num_envs).astype(np.int64)
        acts = raw
        ok = (acts >= 0) & (acts < NUM_ACTIONS)
        illegal = ~ok
        illegal[ok] = env.masks[self._ar[ok], acts[ok]] == 0
        acts = np.where(ok, acts, NUM_ACTIONS)  # BatchedEnv refuses ids < 0
        if hold is not None:
            acts[hold] = SKIP
            illegal &= ~hold
        obs, rew, done, info = env.step(acts)
        rewards = rew.copy()
        dones = done.copy()
        self._ep_return += rewards
        self._ep_len += 1 if hold is None else ~hold
        ended = self._results(np.flatnonzero(dones), rewards, info, illegal, raw)
        return StepResult(self.policy_input(obs, env.masks), rewards, dones,
                          info["truncated"].copy(), ended)

    def _results(self, ended, rewards, info, illegal, acts) -> MatchResults:
        n = self.num_players
        env = self.env
        truncated = info["truncated"][ended]
        seats = info["learner_seat"][ended]
        reason = info["reason"][ended]
        rows = np.arange(ended.size)
        order = (seats[:, None] + np.arange(n)) % n  # the learner, then clockwise
        scores = (info["totals"] if self.multi_deal else info["charges"])[ended]
        charges = scores[rows[:, None], order].astype(np.int64)
        win = charges[:, 0] == charges.min(axis=1)
        kinds = env.term_kinds[ended][rows[:, None], order[:, 1:]]
        opponents = np.array([[self._names.get(int(k), "?") for k in row] for row in kinds],
                             dtype=object).reshape(ended.size, n - 1)
        if self.win_bonus:
            for j in np.flatnonzero(~truncated):
                bonus = self.win_bonus * win_share(charges[j].tolist())
                rewards[ended[j]] += bonus
                self._ep_return[ended[j]] += bonus
        forfeit = illegal[ended] & (reason == K.ILLEGAL)
        results = MatchResults(
            index=ended,
            terminal_obs=self._terminal_input(ended, seats),
            truncated=truncated,
            seat=seats.astype(np.int64),
            end_reason=np.array([K.REASON_NAMES[int(r)] for r in reason], dtype=object),
            penalty=info["charges"][ended, seats].astype(np.int64),
            winner=info["winners"][ended, seats].astype(bool),
            match_score=(info["totals"][ended, seats].astype(np.int64)
                         if self.multi_deal else None),
            forfeited=forfeit,
            illegal_action=acts[ended],
            opponents=opponents,
            charges=charges,
            win=win,
            episode_return=self._ep_return[ended].copy(),
            episode_length=self._ep_len[ended].copy(),
        )
        self._ep_return[ended] = 0.0
        self._ep_len[ended] = 0
        return results

    def policy_input(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """float32 [B, size]: the observations with the configured features (a new array)."""
        parts = [obs]
        if "mask" in self.features:
            parts.append(masks)
        if self.privileged:
            env = self.env
            parts.append(privileged_rows_of_batch(env.game.st, env.game.stock,
                                                  env.learner[:, K.L_SEAT], self.num_players))
        if len(parts) == 1:
            return obs.astype(np.float32, copy=True)
        return np.concatenate(parts, axis=1, dtype=np.float32)

    def _terminal_input(self, ended: np.ndarray, seats: np.ndarray) -> np.ndarray:
        env = self.env
        parts = [env.terminal_obs[ended]]
        if "mask" in self.features:
            parts.append(np.zeros((ended.size, NUM_ACTIONS), dtype=np.float32))
        if self.privileged:
            parts.append(privileged_rows_of_batch(env.term_st[ended], env.term_stock[ended],
                                                  seats, self.num_players))
        return np.concatenate(parts, axis=1, dtype=np.float32)

    def action_masks(self) -> np.ndarray:
        """bool [B, 58]: every game's legal actions for the learner (a new array)."""
        return self.env.masks.astype(bool)

    @property
    def decisions(self) -> int:
        """Decisions applied so far in all games (the learner's and the opponents')."""
        return int(self.env.decisions.sum())


__all__ = ["AgentPolicy", "Learner", "LearnerBatch", "MatchResults", "StepResult", "TorchPolicy",
           "name_of", "privileged_rows_of_batch", "privileged_size"]
