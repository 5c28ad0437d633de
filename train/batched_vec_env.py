"""``BatchedVecEnv``: the batched engine as a stable-baselines3 ``VecEnv`` for MaskablePPO.

This module imports stable-baselines3 (and torch for :class:`TorchPolicy`, which lives in
``agents.batched_policy`` so that ``agents.search`` shares it; re-exported here): it is training
code (the ``[train]`` extra), one layer above ``pis_env.batched``, which never imports it.
It was ``pis_env.batched.vec_env`` before the layers were made one-way (issue 12).

Each of the ``num_envs`` games is one learner seat against opponents; an episode is a
match (``num_deals`` deals), as in :class:`pis_env.wrappers.SingleAgentEnv`, whose spaces
it has (``Box(0, 1, (L,), float32)``, ``Discrete(58)``; ``L + 58`` with the ``"mask"``
feature). What SB3 and MaskablePPO need:

* ``reset() -> obs``; ``step_async(actions)`` / ``step_wait() -> (obs, rewards float32,
  dones bool, infos)`` with auto-reset: a finished game's ``infos[i]`` holds
  ``"terminal_observation"`` (the learner's view of the final position, in the policy
  input format), ``"TimeLimit.truncated"``, ``"episode"`` ``{"r", "l", "t"}`` (SB3's
  ``ep_info_buffer``), ``"penalty"`` / ``"winner"`` (the learner's charge and result in
  the last deal), ``"match_score"`` (multi-deal matches), ``"seat"``, ``"end_reason"``,
  ``"illegal_action"`` (when the learner forfeited) and ``"league"`` (``{"opponents",
  "charges", "win"}`` as ``train.league.LeagueEnv`` reports it; not for truncated ones);
* ``env_method("action_masks")``: one bool [58] mask per game (what
  ``sb3_contrib``'s ``get_action_masks`` stacks); ``action_masks()``: bool [B, 58];
* ``has_attr``, ``get_attr``, ``set_attr``, ``seed``, ``close``, ``env_is_wrapped``.

Opponents: ``"random"`` runs inside the numba kernel, ``"greedy"`` and ``"heuristic"``
are the numba ports of ``agents`` (one call for all games waiting on them); a callable
``policy(obs [K, L], masks int8 [K, 58]) -> actions [K]`` is called once per round for
all games waiting on it -- :class:`TorchPolicy` (a frozen snapshot of an SB3 policy, a
state dict or a policy file: one torch forward pass, masked argmax or sampling) and
:class:`AgentPolicy` (any ``agents`` bot row by row, e.g. ``"heuristic"``, slower).
``opponent_mix={"greedy": 0.5, snapshot: 0.5}`` draws every opponent seat anew for every
match (``mix_per="game"``: one draw for all seats of a match); the draw happens inside
the kernel when the match starts, so each match is played by its own opponents from its
first move. :func:`make_league_vec_env` builds one from a ``train`` config and league
(``vec_env="train.batched_vec_env:make_league_vec_env"``).

``privileged=True`` appends the hidden cards (``pis_env.privileged.privileged_rows``, the one
encoder of them) for a privileged critic.

``skip_forced=True`` plays the learner's forced moves (a single legal action) inside the
kernel, so every step is a real decision (``train``'s ``skip_forced``); a match that ends
before the learner's first real decision is replaced, as ``LeagueEnv`` does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from agents.batched_policy import TorchPolicy  # re-exported: it was defined here
from pis_env.batched import kernels as K
from pis_env.batched.env import BatchedEnv
from pis_env.privileged import privileged_rows, privileged_size
from pis_env.rules import Rules
from train.league import win_share

NUM_ACTIONS = K.NUM_ACTIONS
BUILTIN = ("random",)

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

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        act = self.agent.act
        return np.array([act({"observation": o, "action_mask": m})
                         for o, m in zip(obs, masks)], dtype=np.int64)

    def __repr__(self) -> str:
        return f"AgentPolicy({self.name!r})"


def _name_of(opponent) -> str:
    if isinstance(opponent, str):
        return opponent
    return str(getattr(opponent, "name", None) or repr(opponent))


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


# ---------------------------------------------------------------------- the VecEnv
class BatchedVecEnv(VecEnv):
    """``num_envs`` games of :class:`BatchedEnv` as an SB3 ``VecEnv`` (module docstring).

    ``BatchedVecEnv(num_envs, rules=None, *, opponent="random", opponent_mix=None,
    mix_per="seat", learner_seat=0, features=("obs",), skip_forced=False,
    win_bonus=0.0, seed=None, bot_factory=None, **rules_options)``

    * ``rules``: a ``Rules``, a dict of options, or ``None`` (options as keywords).
    * ``opponent``: ``"random"``, ``"greedy"``, ``"ppo:PATH"`` (a :class:`TorchPolicy`),
      another agent name (``agents.make`` and :class:`AgentPolicy`), a batched callable,
      or a list of those, one per seat.
    * ``opponent_mix``: ``{opponent: weight}`` (keys as ``opponent``; it replaces
      ``opponent`` from the first reset on): every match draws each opponent seat from it
      (``mix_per="game"``: one draw per match for all its seats).
      :meth:`set_opponent_mix` changes it between steps. Reported names: the string, or
      a callable's ``name``.
    * ``learner_seat``: a seat, or ``None`` / ``"random"`` (drawn for every match).
    * ``features``: the observation returned: ``("obs",)`` or ``("obs", "mask")`` (the
      legal mask appended as float32, ``train``'s ``policy.features``).
    * ``privileged``: append :func:`privileged_rows_of_batch` (the hidden cards, for
      ``train.policy.PrivilegedCriticPolicy``'s critic; ``policy.privileged_critic``).
    * ``win_bonus``: added at a (not truncated) match end, ``+bonus`` split among the
      lowest totals, ``-bonus`` among the others (``train``'s ``win_bonus``).
    * ``bot_factory(name) -> agent``: how agent names other than random/greedy are made
      (default ``agents.make(name, num_players=, num_deals=, rules=)``).
    """

    def __init__(self, num_envs: int, rules: Rules | Mapping | None = None, *,
                 opponent: Any = "random", opponent_mix: Mapping | None = None,
                 mix_per: str = "seat", learner_seat: int | str | None = 0,
                 features: Sequence[str] = ("obs",), skip_forced: bool = False,
                 win_bonus: float = 0.0, privileged: bool = False, seed: int | None = None,
                 bot_factory: Callable[[str], Any] | None = None, **options):
        if rules is None:
            rules = Rules.from_options(**options)
        elif isinstance(rules, Mapping):
            rules = Rules.from_options(**{**dict(rules), **options})
        elif options:
            rules = rules.replace(**options)
        if mix_per not in ("seat", "game"):
            raise ValueError(f"mix_per={mix_per!r}: 'seat' or 'game'")
        self.features = tuple(features)
        if self.features not in (("obs",), ("obs", "mask")):
            raise ValueError(f"features={features!r}: ('obs',) or ('obs', 'mask')")
        self.rules = rules
        self.mix_per = mix_per
        self.num_players = n = rules.num_players
        self.multi_deal = rules.num_deals > 1
        self.skip_forced = bool(skip_forced)
        self.win_bonus = float(win_bonus)
        self.privileged = bool(privileged)
        self._bot_factory = bot_factory
        self._bots: dict[str, AgentPolicy] = {}
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**63))
        self._seed = int(seed)
        self._pending_seed: int | None = None
        seat = "random" if learner_seat in (None, "random") else learner_seat
        per_seat = list(opponent) if isinstance(opponent, (list, tuple)) else [opponent] * n
        self._env = BatchedEnv(num_envs, rules, opponent=[self._resolve(o) for o in per_seat],
                               learner_seat=seat, seed=self._seed, skip_forced=skip_forced)
        env = self._env
        self.obs_size = env.obs_size
        self._names: dict[int, str] = {K.RANDOM: "random"}
        for o in per_seat:
            self._names[self._kind(o)] = _name_of(o)
        size = env.obs_size + (NUM_ACTIONS if "mask" in self.features else 0)
        if self.privileged:
            size += privileged_size(n)
        self.render_mode = None
        self.num_envs = num_envs
        super().__init__(num_envs, gym.spaces.Box(0.0, 1.0, (size,), dtype=np.float32),
                         gym.spaces.Discrete(NUM_ACTIONS))
        self._actions = np.zeros(num_envs, dtype=np.int64)
        self._ar = np.arange(num_envs)
        self._ep_return = np.zeros(num_envs, dtype=np.float64)
        self._ep_len = np.zeros(num_envs, dtype=np.int64)
        self._t0 = time.time()
        self._zero_mask = np.zeros(NUM_ACTIONS, dtype=np.float32)
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
                if opponent.startswith("ppo:") and self._bot_factory is None:
                    # a policy file: batched (one forward pass), argmax as PPOAgent plays
                    bot = TorchPolicy.from_file(opponent[4:], self.num_players,
                                                self.rules.num_deals, deterministic=True,
                                                name=opponent)
                elif opponent == "greedy":
                    from agents.greedy.batched import GreedyPolicy

                    bot = GreedyPolicy()
                elif opponent == "heuristic" and self._bot_factory is None:
                    # the numba port of agents.heuristic: same choices, ~100x faster
                    from agents.heuristic.batched import HeuristicPolicy

                    bot = HeuristicPolicy(1, self.rules)
                else:
                    bot = AgentPolicy(self._make_bot(opponent), opponent)
                self._bots[opponent] = bot
            return bot
        if not callable(opponent):
            raise ValueError(f"an opponent is 'random', 'greedy', an agent name or a "
                             f"callable policy(obs, masks) -> actions, got {opponent!r}")
        return opponent

    def _make_bot(self, name: str):
        if self._bot_factory is not None:
            return self._bot_factory(name)
        import agents

        return agents.make_for_table(name, self.rules.to_dict())

    def _kind(self, opponent) -> int:
        """The kind id of an opponent (registering a new callable in a free slot)."""
        env = self._env
        resolved = self._resolve(opponent)
        if isinstance(resolved, str):
            return BUILTIN.index(resolved)
        for i, known in enumerate(env.policies):
            if known is resolved:
                return K.EXTERNAL + i
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
        items = list(mix.items()) if isinstance(mix, Mapping) else list(mix or [])
        items = [(o, float(w)) for o, w in items if float(w) > 0]
        if mix and not items:
            raise ValueError("opponent_mix: the weights sum to 0")
        kinds = [self._kind(o) for o, _ in items]
        for (o, _), k in zip(items, kinds):
            self._names[k] = _name_of(o)
        self._env.set_opponent_mix(kinds, [w for _, w in items],
                                   per_game=self.mix_per == "game")
        self.mix = {_name_of(o): w for o, w in items}
        used = set(kinds) | set(np.unique(self._env.opponent_kinds).tolist())
        for i in range(len(self._env.policies)):
            if K.EXTERNAL + i not in used:
                self._env.policies[i] = None
                self._names.pop(K.EXTERNAL + i, None)

    # ------------------------------------------------------------------ VecEnv API
    def reset(self, *, decks=None, dealers=None):
        """New matches in every game (``decks``/``dealers``: stacked deals, as
        ``BatchedGame.reset``); the seed given to :meth:`seed` applies here once."""
        seed, self._pending_seed = self._pending_seed, None
        obs, masks = self._env.reset(seed, decks=decks, dealers=dealers)
        self._ep_return[:] = 0.0
        self._ep_len[:] = 0
        self._reset_seeds()
        return self._policy_input(obs, masks)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self):
        env = self._env
        acts = self._actions
        ok = (acts >= 0) & (acts < NUM_ACTIONS)
        illegal = ~ok
        illegal[ok] = env.masks[self._ar[ok], acts[ok]] == 0
        acts = np.where(ok, acts, NUM_ACTIONS)  # BatchedEnv refuses ids < 0
        obs, rew, done, info = env.step(acts)
        rewards = rew.copy()
        dones = done.copy()
        self._ep_return += rewards
        self._ep_len += 1
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        ended = np.flatnonzero(dones)
        if ended.size:
            self._episode_infos(ended, infos, rewards, info, illegal)
        return self._policy_input(obs, env.masks), rewards, dones, infos

    def _episode_infos(self, ended, infos, rewards, info, illegal) -> None:
        n = self.num_players
        env = self._env
        term = info["terminal_obs"]
        truncated = info["truncated"]
        reason = info["reason"]
        charges = info["charges"]
        winners = info["winners"]
        totals = info["totals"]
        seats = info["learner_seat"]
        kinds = env.term_kinds
        now = round(time.time() - self._t0, 6)
        for i in ended.tolist():
            seat = int(seats[i])
            d: dict[str, Any] = {
                "terminal_observation": self._policy_input_row(i, term[i], seat),
                "TimeLimit.truncated": bool(truncated[i]),
                "seat": seat,
                "end_reason": K.REASON_NAMES[int(reason[i])],
                "penalty": int(charges[i, seat]),
                "winner": bool(winners[i, seat]),
            }
            if self.multi_deal:
                d["match_score"] = int(totals[i, seat])
            if illegal[i] and reason[i] == K.ILLEGAL:
                d["illegal_action"] = int(self._actions[i])
            if not truncated[i]:
                order = [(seat + k) % n for k in range(n)]
                scores = totals[i] if self.multi_deal else charges[i]
                ch = [int(scores[s]) for s in order]
                d["league"] = {"opponents": [self._names.get(int(kinds[i, s]), "?")
                                             for s in order[1:]],
                               "charges": ch, "win": ch[0] == min(ch)}
                if self.win_bonus:
                    bonus = self.win_bonus * win_share(ch)
                    rewards[i] += bonus
                    self._ep_return[i] += bonus
            d["episode"] = {"r": float(self._ep_return[i]), "l": int(self._ep_len[i]),
                            "t": now}
            infos[i] = d
        self._ep_return[ended] = 0.0
        self._ep_len[ended] = 0

    def _policy_input(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        parts = [obs]
        if "mask" in self.features:
            parts.append(masks)
        if self.privileged:
            env = self._env
            parts.append(privileged_rows_of_batch(env.game.st, env.game.stock,
                                                  env.learner[:, K.L_SEAT], self.num_players))
        if len(parts) == 1:
            return obs.astype(np.float32, copy=True)
        return np.concatenate(parts, axis=1, dtype=np.float32)

    def _policy_input_row(self, i: int, obs_row: np.ndarray, seat: int) -> np.ndarray:
        parts = [obs_row]
        if "mask" in self.features:
            parts.append(self._zero_mask)
        if self.privileged:
            env = self._env
            parts.append(privileged_rows_of_batch(env.term_st[i:i + 1],
                                                  env.term_stock[i:i + 1], np.array([seat]),
                                                  self.num_players)[0])
        if len(parts) == 1:
            return obs_row.astype(np.float32, copy=True)
        return np.concatenate(parts, dtype=np.float32)

    def action_masks(self) -> np.ndarray:
        """bool [B, 58]: every game's legal actions for the learner (a new array)."""
        return self._env.masks.astype(bool)

    def close(self) -> None:
        pass

    def seed(self, seed: int | None = None) -> list[int | None]:
        """The seed of the next :meth:`reset` (all games; each has its own stream)."""
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**32))
        self._pending_seed = int(seed)
        return [int(seed) + i for i in range(self.num_envs)]

    def get_images(self) -> list[None]:
        return [None] * self.num_envs

    def _count(self, indices) -> int:
        return len(list(self._get_indices(indices)))

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "render_mode" or hasattr(self, attr_name)

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        """The attribute (of the whole batch) once per index."""
        if attr_name == "render_mode":
            return [None] * self._count(indices)
        return [getattr(self, attr_name)] * self._count(indices)

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        """Sets the attribute of the whole batch (all games share it)."""
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs):
        """``"action_masks"``: a list of bool [58] masks, one per index. Any other method
        of this object is called once and its result repeated per index."""
        if method_name == "action_masks":
            masks = self.action_masks()
            if indices is None:
                return list(masks)
            return [masks[i] for i in self._get_indices(indices)]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result] * self._count(indices)

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * self._count(indices)

    # ------------------------------------------------------------------ extras
    @property
    def batched_env(self) -> BatchedEnv:
        """The underlying :class:`BatchedEnv` (opponent kinds, decisions, game state)."""
        return self._env

    @property
    def decisions(self) -> int:
        """Decisions applied so far in all games (the learner's and the opponents')."""
        return int(self._env.decisions.sum())


# ---------------------------------------------------------------------- train/ppo.py
class _LeagueVecEnv(BatchedVecEnv):
    """A ``BatchedVecEnv`` whose opponent mix follows a ``train.league.League``: its
    agent names and ``"self"`` (the snapshot pool, each snapshot weighted by the league's
    priorities, played by a :class:`TorchPolicy`). Refreshed when the pool changes and
    every ``refresh_every`` steps (priorities), and on ``env_method("league_sync", ...)``."""

    def __init__(self, league, *args, refresh_every: int = 16, **kwargs):
        self.league = league
        self.refresh_every = int(refresh_every)
        self._snapshot_policies: dict[str, TorchPolicy] = {}
        self._pool_ids: tuple = ()
        self._since = 0
        super().__init__(*args, **kwargs)
        self.refresh_league()

    def refresh_league(self) -> None:
        league = self.league
        mix: dict[Any, float] = {}
        pool = {s["id"]: s for s in league.snapshots}
        self._snapshot_policies = {k: v for k, v in self._snapshot_policies.items()
                                   if k in pool}
        for name, weight in league.mix.items():
            if name != "self":
                mix[name] = mix.get(name, 0.0) + weight
            elif pool:
                for s, w in zip(league.snapshots, league.snapshot_weights()):
                    policy = self._snapshot_policies.get(s["id"])
                    if policy is None:
                        policy = self._snapshot_policies[s["id"]] = TorchPolicy.from_numpy_policy(
                            s["policy"], deterministic=league.snapshot_deterministic,
                            seed=self._seed + int(s["step"]), name=s["id"])
                    mix[policy] = weight * float(w)
        self._since = 0
        if not mix:  # only "self" and no snapshot yet: train/ppo.py takes one before
            self._pool_ids = ("<empty>",)  # learning; until then keep the opponents
            return
        self.set_opponent_mix(mix)
        self._pool_ids = tuple(pool)

    def league_sync(self, payload: dict | None = None) -> None:
        """``train``'s SubprocVecEnv hook; here the league is the trainer's own object."""
        self.refresh_league()

    def reset(self, **kwargs):
        self.refresh_league()
        return super().reset(**kwargs)

    def step_wait(self):
        self._since += 1
        if (self._since >= self.refresh_every
                or tuple(s["id"] for s in self.league.snapshots) != self._pool_ids):
            self.refresh_league()
        return super().step_wait()


def make_league_vec_env(cfg: dict, league, seed: int) -> BatchedVecEnv:
    """``train/ppo.py``'s VecEnv factory (``vec_env="train.batched_vec_env:
    make_league_vec_env"``): ``cfg["n_envs"]`` batched games with the config's rules,
    policy features (and privileged critic input), learner seat, ``skip_forced`` and
    ``win_bonus``, opponents drawn
    per seat and match from the league (``random``/``greedy`` in the kernel, snapshots
    as one torch pass, other bots row by row), ``info["league"]`` at match ends."""
    seat = cfg["league"].get("learner_seat")
    return _LeagueVecEnv(
        league, int(cfg["n_envs"]), dict(cfg["rules"]),
        features=tuple(cfg["policy"]["features"]),
        learner_seat="random" if seat is None else int(seat),
        skip_forced=bool(cfg.get("skip_forced", False)),
        win_bonus=float(cfg.get("win_bonus", 0.0)),
        privileged=bool(cfg["policy"].get("privileged_critic", False)),
        seed=int(seed),
    )


__all__ = ["AgentPolicy", "BatchedVecEnv", "TorchPolicy", "make_league_vec_env",
           "privileged_rows_of_batch", "privileged_size"]
