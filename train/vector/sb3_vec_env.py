"""``BatchedVecEnv``: the batched engine as a stable-baselines3 ``VecEnv`` for MaskablePPO.

A thin adapter: the games are stepped by ``train.vector.learner_batch.LearnerBatch`` (opponents,
forfeits, features, match results), the same core as the gymnasium ``VectorEnv`` of
``train.vector.gym_vector_env``; this module turns its arrays into SB3's list of info dicts.
This module imports stable-baselines3 (and torch for :class:`TorchPolicy`, which lives in
``agents.batched_policy`` so that ``agents.search`` shares it; re-exported here): it is training
code (the ``[train]`` extra), one layer above ``pis_env.batched``, which never imports it.

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
  "charges", "win"}`` as ``train.common.league.LeagueEnv`` reports it; not for truncated ones);
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
(``vec_env="train.vector.sb3_vec_env:make_league_vec_env"``).

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
from pis_env.batched.env import BatchedEnv
from pis_env.privileged import privileged_size
from pis_env.rules import Rules
from train.vector.learner_batch import (  # re-exported: they were defined here
    NUM_ACTIONS,
    AgentPolicy,
    Learner,
    LearnerBatch,
    MatchResults,
    privileged_rows_of_batch,
)

#: A batched opponent: ``policy(obs [K, L] float32, masks int8 [K, 58]) -> actions [K]``.
Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]


# ---------------------------------------------------------------------- the VecEnv
class BatchedVecEnv(VecEnv):
    """``num_envs`` games of :class:`LearnerBatch` as an SB3 ``VecEnv`` (module docstring).

    ``BatchedVecEnv(num_envs, rules=None, *, opponent="random", opponent_mix=None,
    mix_per="seat", learner=None, seed=None, bot_factory=None, **rules_options)``: the
    arguments of :class:`train.vector.learner_batch.LearnerBatch`, the learner's seat as
    a ``Learner`` or its keywords (``layout_version=1``: the learner sees
    ``PisYedili-Events-v0``'s observation).
    """

    def __init__(self, num_envs: int, rules: Rules | Mapping | None = None, *,
                 opponent: Any = "random", opponent_mix: Mapping | None = None,
                 mix_per: str = "seat", learner: Learner | None = None,
                 seed: int | None = None, bot_factory: Callable[[str], Any] | None = None,
                 **options):
        self._core = LearnerBatch(
            num_envs, rules, opponent=opponent, opponent_mix=opponent_mix, mix_per=mix_per,
            learner=learner, seed=seed, bot_factory=bot_factory, **options)
        self._pending_seed: int | None = None
        self.render_mode = None
        self.num_envs = num_envs
        super().__init__(num_envs,
                         gym.spaces.Box(0.0, 1.0, (self._core.size,), dtype=np.float32),
                         gym.spaces.Discrete(NUM_ACTIONS))
        self._actions = np.zeros(num_envs, dtype=np.int64)
        self._t0 = time.time()

    # ------------------------------------------------------------------ the core's
    def set_opponent_mix(self, mix: Mapping | Sequence[tuple[Any, float]] | None) -> None:
        """Opponents of the matches that start from now on (``LearnerBatch.set_opponent_mix``)."""
        self._core.set_opponent_mix(mix)

    @property
    def core(self) -> LearnerBatch:
        """The :class:`LearnerBatch` this adapter steps."""
        return self._core

    @property
    def batched_env(self) -> BatchedEnv:
        """The underlying :class:`BatchedEnv` (opponent kinds, decisions, game state)."""
        return self._core.env

    @property
    def decisions(self) -> int:
        """Decisions applied so far in all games (the learner's and the opponents')."""
        return self._core.decisions

    obs_size = property(lambda self: self._core.obs_size, doc="The observation's length.")
    num_players = property(lambda self: self._core.num_players)
    rules = property(lambda self: self._core.rules)
    features = property(lambda self: self._core.features)
    privileged = property(lambda self: self._core.privileged)
    skip_forced = property(lambda self: self._core.skip_forced)
    layout_version = property(lambda self: self._core.layout_version,
                              doc="The learner's observation layout (0: v0, 1: v1).")
    mix = property(lambda self: self._core.mix, doc="The current opponent mix, by name.")

    @property
    def win_bonus(self) -> float:
        return self._core.win_bonus

    @win_bonus.setter
    def win_bonus(self, value: float) -> None:
        self._core.win_bonus = float(value)

    # ------------------------------------------------------------------ VecEnv API
    def reset(self, *, decks=None, dealers=None):
        """New matches in every game (``decks``/``dealers``: stacked deals, as
        ``BatchedGame.reset``); the seed given to :meth:`seed` applies here once."""
        seed, self._pending_seed = self._pending_seed, None
        obs = self._core.reset(seed, decks=decks, dealers=dealers)
        self._reset_seeds()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

    def step_wait(self):
        out = self._core.step(self._actions)
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        if out.ended.index.size:
            self._episode_infos(out.ended, infos)
        return out.obs, out.rewards, out.dones, infos

    def _episode_infos(self, ended: MatchResults, infos: list[dict]) -> None:
        now = round(time.time() - self._t0, 6)
        for j, i in enumerate(ended.index.tolist()):
            truncated = bool(ended.truncated[j])
            d: dict[str, Any] = {
                "terminal_observation": ended.terminal_obs[j],
                "TimeLimit.truncated": truncated,
                "seat": int(ended.seat[j]),
                "end_reason": ended.end_reason[j],
                "penalty": int(ended.penalty[j]),
                "winner": bool(ended.winner[j]),
            }
            if ended.match_score is not None:
                d["match_score"] = int(ended.match_score[j])
            if ended.forfeited[j]:
                d["illegal_action"] = int(ended.illegal_action[j])
            if not truncated:
                ch = ended.charges[j].tolist()
                d["league"] = {"opponents": list(ended.opponents[j]), "charges": ch,
                               "win": bool(ended.win[j])}
            d["episode"] = {"r": float(ended.episode_return[j]),
                            "l": int(ended.episode_length[j]), "t": now}
            infos[i] = d

    def action_masks(self) -> np.ndarray:
        """bool [B, 58]: every game's legal actions for the learner (a new array)."""
        return self._core.action_masks()

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


# ---------------------------------------------------------------------- train/sb3/run.py
class _LeagueVecEnv(BatchedVecEnv):
    """A ``BatchedVecEnv`` whose opponent mix follows a ``train.common.league.League``: its
    agent names and ``"self"`` (the snapshot pool, each snapshot weighted by the league's
    priorities, played by a :class:`TorchPolicy`). Refreshed when the pool changes and
    every ``refresh_every`` steps (priorities), and on ``env_method("league_sync", ...)``."""

    def __init__(self, league, *args, refresh_every: int = 16, **kwargs):
        self.league = league
        self.refresh_every = int(refresh_every)
        self._snapshot_policies: dict[str, TorchPolicy] = {}
        self._pool_ids: tuple = ()
        self._since = 0
        # the league's named opponents from the start, so that the engine keeps the v1
        # public record when one of them (a ppo: file) reads layout 1
        named = {k: w for k, w in league.mix.items() if k != "self" and w > 0}
        kwargs.setdefault("opponent_mix", named or None)
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
                            seed=self._core.seed + int(s["step"]), name=s["id"])
                    mix[policy] = weight * float(w)
        self._since = 0
        if not mix:  # only "self" and no snapshot yet: train/sb3/run.py takes one before
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


def make_league_vec_env(cfg: Any, league, seed: int) -> BatchedVecEnv:
    """``train/sb3/run.py``'s VecEnv factory (``vec_env="train.vector.sb3_vec_env:
    make_league_vec_env"``): ``cfg.n_envs`` batched games with the config's rules,
    policy features (and privileged critic input), learner seat, ``skip_forced`` and
    ``win_bonus``, at the layout of ``env_version`` (``pis_yedili_v<N>``), opponents drawn
    per seat and match from the league (``random``/``greedy`` in the kernel, snapshots
    as one torch pass, other bots row by row), ``info["league"]`` at match ends. ``cfg``
    is the run's typed config (``train.sb3.config.TrainConfig``)."""
    seat = cfg.league.learner_seat
    learner = Learner(seat="random" if seat is None else int(seat),
                      features=tuple(cfg.policy.features), skip_forced=bool(cfg.skip_forced),
                      win_bonus=float(cfg.win_bonus),
                      privileged=bool(cfg.policy.privileged_critic),
                      layout_version=int(cfg.env_version))
    return _LeagueVecEnv(league, int(cfg.n_envs), dict(cfg.rules), learner=learner,
                         seed=int(seed))


__all__ = ["AgentPolicy", "BatchedVecEnv", "TorchPolicy", "make_league_vec_env",
           "privileged_rows_of_batch", "privileged_size"]
