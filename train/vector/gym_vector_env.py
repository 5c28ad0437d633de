"""``PisYediliVectorEnv``: the batched engine as a gymnasium ``VectorEnv``.

What ``gymnasium.make_vec("PisYedili-v0", num_envs=1024, vectorization_mode=
"vector_entry_point", opponents=...)`` returns (``train.vector.entry`` chooses it): the
learner's seat in each of ``num_envs`` games, the other seats played inside the engine by
the numba bots and ``ppo:`` policies, for RLlib's env runners (``gym_env_vectorize_mode=
"vector_entry_point"``) and CleanRL-style ``gymnasium.vector`` loops. The games are
stepped by ``train.vector.learner_batch.LearnerBatch``, the core the SB3 ``BatchedVecEnv`` uses
too: this class only speaks gymnasium's vector API.

* Observations: the single-agent view's flat vector (``observation="flat"``), or
  ``observation="dict"``: ``{"observations": flat, "action_mask": float32 [58]}``, what
  RLlib's action-masking module reads (a float mask, since it takes its log).
* ``action_masks()``: bool [num_envs, 58], the learner's legal actions (all False in a
  game showing its terminal observation).
* Auto-reset is gymnasium's ``NEXT_STEP`` (``metadata["autoreset_mode"]``, what RLlib's
  sampling loop assumes): the step that ends a match returns its final observation; the
  next ``step`` ignores that game's action and returns the new match's first observation
  with reward 0.
* ``infos``: gymnasium's dict of arrays, each key with its ``_key`` mask, set where a match
  ended: ``seat``, ``end_reason``, ``penalty`` and ``winner`` (the learner's charge and
  result in the last deal), ``match_score`` (multi-deal matches), ``illegal_action``
  (where the learner forfeited), and where it was not truncated ``charges`` [n] (the
  scores, the learner's first, then clockwise), ``opponents`` [n - 1] (their names) and
  ``win``. Episode returns and lengths are gymnasium's ``RecordEpisodeStatistics``'s job.
* ``reset(seed=s)`` makes what follows reproducible; ``reset(options={"decks": [B, deals,
  52], "dealers": [B]})`` plays stacked deals.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from pis_env.rules import Rules
from train.vector.keys import MASK_KEY, OBS_KEY  # the keys of observation="dict"
from train.vector.learner_batch import NUM_ACTIONS, Learner, LearnerBatch, MatchResults

OBSERVATIONS = ("flat", "dict")

#: The most games one vector env holds (its arrays are num_envs x a few hundred floats).
MAX_ENVS = 1 << 16


class PisYediliVectorEnv(VectorEnv):
    """``num_envs`` games from the learner's seat (module docstring).

    Args:
        num_envs: the number of games (1..``MAX_ENVS``).
        opponents: ``"random"``, ``"greedy"``, ``"heuristic"``, ``"ppo:PATH"``, another agent
            name, a batched callable ``policy(obs [K, L], masks [K, 58]) -> actions [K]``;
            a sequence of ``n - 1`` of those seated clockwise from the learner's left (as
            ``SingleAgentEnv``; needs a fixed ``learner_seat``); or a mapping ``{opponent:
            weight}`` drawn anew for every seat of every match (``mix_per="game"``: one
            draw per match). ``None``: random.
        observation: ``"flat"`` or ``"dict"``.
        seed: the games' streams until ``reset(seed=)`` restarts them.
        mix_per, bot_factory: as :class:`train.vector.learner_batch.LearnerBatch`.
        learner: the learner's seat, what it sees and its reward
            (:class:`train.vector.learner_batch.Learner`, the description the SB3 and RLlib
            vector envs share), or its fields as keywords: ``learner_seat`` (a seat index,
            or ``None``: drawn for every match; 0 by default), ``features``,
            ``privileged``, ``skip_forced``, ``win_bonus``, ``layout_version`` (0:
            ``PisYedili-v0``, 1: ``PisYedili-Events-v0``).
        **options: rules options (``num_players``, ``num_deals``, ...).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, opponents: Any = None, *,
                 observation: str = "flat", mix_per: str = "seat", seed: int | None = None,
                 learner: Learner | None = None,
                 bot_factory: Callable[[str], Any] | None = None, **options):
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or not (
                1 <= num_envs <= MAX_ENVS):
            raise ValueError(f"num_envs={num_envs!r}: an integer in 1..{MAX_ENVS}")
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation={observation!r}: 'flat' or 'dict'")
        self.observation = observation
        learner, options = Learner.resolve(learner, options)
        rules = Rules.from_options(**options)
        opponent, mix = _seats(opponents, learner.seat, rules.num_players)
        self.core = LearnerBatch(
            int(num_envs), rules, opponent=opponent, opponent_mix=mix, mix_per=mix_per,
            learner=learner, seed=seed, bot_factory=bot_factory)
        self.num_envs = int(num_envs)
        self.num_players = self.core.num_players
        flat = gym.spaces.Box(0.0, 1.0, (self.core.size,), dtype=np.float32)
        if observation == "dict":
            self.single_observation_space = gym.spaces.Dict({
                OBS_KEY: flat,
                MASK_KEY: gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), dtype=np.float32)})
        else:
            self.single_observation_space = flat
        self.single_action_space = gym.spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        #: games showing a terminal observation: their next step starts the new match
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._masks = np.zeros((self.num_envs, NUM_ACTIONS), dtype=bool)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """New matches in every game; ``options``: ``{"decks", "dealers"}`` (stacked deals)."""
        options = dict(options or {})
        unknown = set(options) - {"decks", "dealers"}
        if unknown:
            raise ValueError(f"reset options: 'decks' and 'dealers', got {sorted(unknown)}")
        obs = self.core.reset(seed, decks=options.get("decks"), dealers=options.get("dealers"))
        self._autoreset[:] = False
        self._masks = self.core.action_masks()
        return self._observe(obs), {}

    def step(self, actions):
        actions = np.asarray(actions)
        if actions.shape not in ((self.num_envs,), (self.num_envs, 1)):
            raise ValueError(f"actions: shape ({self.num_envs},), got {actions.shape}")
        held = self._autoreset.copy()
        out = self.core.step(actions.reshape(self.num_envs), hold=held if held.any() else None)
        obs = out.obs
        self._masks = self.core.action_masks()
        ended = out.ended.index
        terminated = out.dones & ~out.truncated
        truncated = out.truncated.copy()
        if ended.size:
            obs[ended] = out.ended.terminal_obs
            self._masks[ended] = False
        self._autoreset = out.dones
        infos = self._infos(out.ended) if ended.size else {}
        return self._observe(obs), out.rewards, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """bool [num_envs, 58]: the learner's legal actions (a new array)."""
        return self._masks.copy()

    def set_opponent_mix(self, mix: Mapping | None) -> None:
        """The opponents of the matches that start from now on (``{opponent: weight}``)."""
        self.core.set_opponent_mix(mix)

    def _observe(self, flat: np.ndarray):
        if self.observation == "dict":
            return {OBS_KEY: flat, MASK_KEY: self._masks.astype(np.float32)}
        return flat

    def _infos(self, ended: MatchResults) -> dict[str, np.ndarray]:
        B, idx = self.num_envs, ended.index
        infos: dict[str, np.ndarray] = {}

        def put(key: str, rows: np.ndarray, values: np.ndarray, fill, dtype) -> None:
            shape = (B,) + values.shape[1:]
            arr = np.full(shape, fill, dtype=dtype)
            arr[rows] = values
            present = np.zeros(B, dtype=bool)
            present[rows] = True
            infos[key], infos["_" + key] = arr, present

        put("seat", idx, ended.seat, 0, np.int64)
        put("end_reason", idx, ended.end_reason, None, object)
        put("penalty", idx, ended.penalty, 0, np.int64)
        put("winner", idx, ended.winner, False, bool)
        if ended.match_score is not None:
            put("match_score", idx, ended.match_score, 0, np.int64)
        if ended.forfeited.any():
            f = ended.forfeited
            put("illegal_action", idx[f], ended.illegal_action[f], 0, np.int64)
        scored = ~ended.truncated
        if scored.any():
            put("charges", idx[scored], ended.charges[scored], 0, np.int64)
            put("opponents", idx[scored], ended.opponents[scored], None, object)
            put("win", idx[scored], ended.win[scored], False, bool)
        return infos


def _seats(opponents, learner_seat, n: int):
    """``LearnerBatch``'s ``(opponent, opponent_mix)`` from ``opponents``."""
    if opponents is None:
        return "random", None
    if isinstance(opponents, Mapping):
        return "random", dict(opponents)
    if isinstance(opponents, (list, tuple)):
        if len(opponents) != n - 1:
            raise ValueError(f"opponents: need {n - 1} for {n} players (clockwise from the "
                             f"learner's left), got {len(opponents)}")
        if learner_seat is None:
            raise ValueError("opponents as a sequence need a fixed learner_seat; with "
                             "learner_seat=None pass one opponent or a {opponent: weight} mix")
        per_seat: list[Any] = ["random"] * n
        for k, o in enumerate(opponents):
            per_seat[(int(learner_seat) + 1 + k) % n] = o
        return per_seat, None
    return opponents, None


__all__ = ["MASK_KEY", "MAX_ENVS", "OBS_KEY", "PisYediliVectorEnv"]
