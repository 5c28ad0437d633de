"""The gymnasium single-agent view (SPEC §6): one seat learns, the others are played by
given opponents. Registered as ``gymnasium.make("PisYedili-v0", ...)``.

It exposes ``action_masks()`` for sb3-contrib's MaskablePPO. Illegal actions end the
episode as with ``illegal_action="terminate"``, so SB3's ``check_env`` (which steps
unmasked random actions) passes. The learner always receives its end-of-deal reward, also
when an opponent's move ends the deal: the reward returned by ``step`` is everything the
AEC env credited to the learner since its previous action.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from .engine import NUM_ACTIONS
from .env import raw_env


class UniformRandomPolicy:
    """A legal action uniformly at random: the default opponent."""

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[self.rng.integers(legal.size)])


def _as_policy(opponent) -> Callable[[dict], int]:
    if hasattr(opponent, "act"):
        return opponent.act
    if callable(opponent):
        return opponent
    raise TypeError(f"an opponent must have act(observation) or be callable, got {opponent!r}")


class SingleAgentEnv(gym.Env):
    """One learning seat against fixed or sampled opponents.

    Args:
        opponents: one agent (used at every other seat) or a sequence of ``n - 1`` agents,
            seated clockwise from the learner's left. Agents offer ``act(observation)``
            (SPEC §7) or are callables of the observation dict. Default: uniform random.
        opponent_sampler: instead of ``opponents``, a callable ``(np_random) -> opponents``
            called at every reset (a league).
        learner_seat: a seat index, or ``None`` to draw the seat at every reset.
        **options: rules options of ``pis_env.env`` (``illegal_action`` is forced to
            ``"terminate"``), plus ``render_mode``.
    """

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 1}

    def __init__(
        self,
        opponents: Any = None,
        opponent_sampler: Callable[[np.random.Generator], Any] | None = None,
        learner_seat: int | None = 0,
        render_mode: str | None = None,
        **options,
    ):
        options["illegal_action"] = "terminate"
        self.aec = raw_env(render_mode=render_mode, **options)
        self.render_mode = render_mode
        self.num_players = self.aec.rules.num_players
        if learner_seat is not None and not 0 <= learner_seat < self.num_players:
            raise ValueError(f"learner_seat must be in 0..{self.num_players - 1} or None")
        self.learner_seat = learner_seat
        self.opponent_sampler = opponent_sampler
        self._set_opponents(opponents if opponents is not None else UniformRandomPolicy())
        agent0 = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(agent0)["observation"]
        self.action_space = gym.spaces.Discrete(NUM_ACTIONS)
        self.learner = agent0
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)

    def _set_opponents(self, opponents) -> None:
        if isinstance(opponents, Sequence) and not isinstance(opponents, str):
            if len(opponents) != self.num_players - 1:
                raise ValueError(
                    f"need {self.num_players - 1} opponents for {self.num_players} players, "
                    f"got {len(opponents)}"
                )
            self.opponents = list(opponents)
        else:
            self.opponents = [opponents] * (self.num_players - 1)
        self._policies = [_as_policy(o) for o in self.opponents]

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if self.opponent_sampler is not None:
            self._set_opponents(self.opponent_sampler(self.np_random))
        for opponent in {id(o): o for o in self.opponents}.values():
            if hasattr(opponent, "reset"):
                opponent.reset()
        seat = self.learner_seat
        if seat is None:
            seat = int(self.np_random.integers(self.num_players))
        self.learner = self.aec.possible_agents[seat]
        self._seat = seat
        aec_seed = seed
        if aec_seed is None and self.aec.game is None:
            aec_seed = int(self.np_random.integers(2**63 - 1))
        self.aec.reset(seed=aec_seed, options=options)
        self._play_opponents()
        obs, _, _, _, info = self._result()
        return obs, info

    def step(self, action):
        self.aec.step(action)
        self._play_opponents()
        return self._result()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (bool[58]); all False once the episode is over."""
        return self._mask.astype(bool)

    def render(self):
        return self.aec.render()

    # ------------------------------------------------------------------ internals
    def _play_opponents(self) -> None:
        aec = self.aec
        learner = self.learner
        n = self.num_players
        while True:
            agent = aec.agent_selection
            if aec.terminations[learner] or aec.truncations[learner] or agent == learner:
                return
            index = (aec._agent_index[agent] - self._seat - 1) % n
            aec.step(self._policies[index](aec.observe(agent)))

    def _result(self):
        aec = self.aec
        learner = self.learner
        observed = aec.observe(learner)
        self._mask = observed["action_mask"]
        terminated = bool(aec.terminations[learner])
        truncated = bool(aec.truncations[learner])
        reward = float(aec._cumulative_rewards[learner])
        info = dict(aec.infos[learner])
        info["seat"] = self._seat
        return observed["observation"], reward, terminated, truncated, info
