"""The gymnasium single-agent view (docs/environment.md): one seat learns, the others are played by
given opponents. Registered as ``gymnasium.make("PisYedili-v0", ...)``.

It exposes ``action_masks()`` for sb3-contrib's MaskablePPO. Illegal actions end the
episode as with ``illegal_action="terminate"``, so SB3's ``check_env`` (which steps
unmasked random actions) passes. The learner always receives its end-of-deal reward, also
when an opponent's move ends the deal: the reward returned by ``step`` is everything the
AEC env credited to the learner since its previous action.

**Seeding.** ``reset(seed=s)`` makes everything that follows reproducible: the deal, the
learner's seat and the opponents' play. Every opponent whose ``reset`` takes a ``seed``
(the agent protocol of ``agents.base``, and the default random opponent) is reseeded at
every reset from a stream started by the last seeded reset; opponents that draw random
numbers without offering ``reset(seed=...)`` are not reproducible. gymnasium's
``check_env`` (which compares two runs from one seed) passes.

**Illegal opponent moves.** An opponent that returns an illegal action forfeits the deal,
as under ``illegal_action="terminate"`` (it is charged, the learner is not). That is a bug
in the opponent, so it is not silent: with ``opponent_illegal="warn"`` (the default) a
``RuntimeWarning`` names the opponent the first time it happens, with ``"raise"`` the
action raises ``pis_env.IllegalActionError`` instead. ``info["opponent_illegal_actions"]``
counts the opponents' illegal actions of the episode.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from .aec import RENDER_MODES, check_render_mode, raw_env
from .engine import NUM_ACTIONS, GameState, IllegalActionError

#: Values of ``SingleAgentEnv(opponent_illegal=...)``.
OPPONENT_ILLEGAL = ("warn", "raise")


class UniformRandomPolicy:
    """A legal action uniformly at random: the default opponent."""

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: dict) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[self.rng.integers(legal.size)])


@functools.cache
def _reset_takes_seed(cls: Any) -> bool:
    try:
        params = inspect.signature(cls.reset).parameters
    except (TypeError, ValueError):
        return False
    return "seed" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def reset_opponent(opponent: object, seed: int | None) -> None:
    """``opponent.reset(seed=seed)`` when its ``reset`` takes a seed (the agent protocol,
    ``agents.base.Agent.reset``), a plain ``reset()`` when it takes none, nothing when it has
    no ``reset``. Duck-typed: ``pis_env`` does not import ``agents``."""
    reset = getattr(opponent, "reset", None)
    if reset is None:
        return
    cls: Any = type(opponent)  # (typeshed's Hashable protocol refuses type objects)
    if _reset_takes_seed(cls):
        reset(seed=seed)
    else:
        reset()


def _as_policy(opponent) -> Callable[[dict], int]:
    if isinstance(opponent, (str, Mapping)):
        # Names and {name: weight} mixes are resolved where the bots live: pis_env is the
        # layer below agents and does not import them.
        raise TypeError(
            f"opponents={opponent!r}: the single-agent view takes agent objects, e.g. "
            "opponents=agents.make('heuristic', num_players=n); bot names and {name: weight} "
            "mixes are for gymnasium.make_vec, whose batched engine plays them")
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
            (docs/bots.md) or are callables of the observation dict. Default: uniform random.
        opponent_sampler: instead of ``opponents``, a callable ``(np_random) -> opponents``
            called at every reset (a league).
        learner_seat: a seat index, or ``None`` to draw the seat at every reset.
        opponent_illegal: what an opponent's illegal action does besides forfeiting the
            deal: ``"warn"`` (a ``RuntimeWarning`` the first time for each opponent) or
            ``"raise"`` (``pis_env.IllegalActionError``; the action is not played).
        render_mode: ``None``, ``"rgb_array"`` (the table from the learner's seat as an
            ``uint8[H, W, 3]`` frame: what ``RecordVideo`` and SB3's ``make_vec_env`` ask
            for), ``"ansi"`` or ``"human"``.
        **options: rules options of ``pis_env.aec`` (``illegal_action`` is forced to
            ``"terminate"``) and ``render_view`` (``render``).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 1}
    #: The AEC env it wraps (``pis_yedili_v1.SingleAgentEnv`` wraps the v1 one).
    aec_class: type[raw_env] = raw_env

    def __init__(
        self,
        opponents: Any = None,
        opponent_sampler: Callable[[np.random.Generator], Any] | None = None,
        learner_seat: int | None = 0,
        render_mode: str | None = None,
        opponent_illegal: str = "warn",
        **options,
    ):
        if opponent_illegal not in OPPONENT_ILLEGAL:
            raise ValueError(f"opponent_illegal={opponent_illegal!r}: allowed values are "
                             f"{', '.join(map(repr, OPPONENT_ILLEGAL))}")
        self.opponent_illegal = opponent_illegal
        options["illegal_action"] = "terminate"
        # "human" prints the learner's table after reset and every step; the AEC env's own
        # "human" would print every opponent's move from that opponent's seat.
        self.aec = self.aec_class(render_mode="ansi" if render_mode == "human" else render_mode,
                                  **options)
        self.render_mode = check_render_mode(render_mode)
        self.num_players = self.aec.rules.num_players
        if learner_seat is not None:
            if isinstance(learner_seat, (bool, np.bool_)) or not isinstance(
                    learner_seat, (int, np.integer)) or not 0 <= learner_seat < self.num_players:
                raise ValueError(f"learner_seat={learner_seat!r}: must be a seat index in "
                                 f"0..{self.num_players - 1}, or None")
            learner_seat = int(learner_seat)
        self.learner_seat = learner_seat
        self.opponent_sampler = opponent_sampler
        self._set_opponents(opponents if opponents is not None else UniformRandomPolicy())
        agent0 = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(agent0)["observation"]
        self.action_space = gym.spaces.Discrete(NUM_ACTIONS)
        self.learner = agent0
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._opponent_seeds: np.random.Generator | None = None
        self._warned: set[int] = set()
        self._illegal_count = 0

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
        if seed is not None:
            self._opponent_seeds = np.random.default_rng([seed, 0x0990])
        elif self._opponent_seeds is None:  # first reset, unseeded: still one stream
            self._opponent_seeds = np.random.default_rng(self.np_random.integers(2**63))
        for opponent in {id(o): o for o in self.opponents}.values():
            reset_opponent(opponent, int(self._opponent_seeds.integers(2**63)))
        self._illegal_count = 0
        seat = self.learner_seat
        if seat is None:
            seat = int(self.np_random.integers(self.num_players))
        self.learner = self.aec.possible_agents[seat]
        self._seat = seat
        aec_seed = seed
        if aec_seed is None and not self.aec.has_game:
            aec_seed = int(self.np_random.integers(2**63 - 1))
        self.aec.reset(seed=aec_seed, options=options)
        self._play_opponents()
        obs, _, _, _, info = self._result()
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(self, action):
        self.aec.step(action)
        self._play_opponents()
        result = self._result()
        if self.render_mode == "human":
            self.render()
        return result

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (bool[58]); all False once the episode is over."""
        return self._mask.astype(bool)

    @property
    def legal_mask(self) -> np.ndarray:
        """The learner's legal actions as the env's int8[58] mask (read-only: a view of
        the wrapper's own array; ``action_masks()`` returns a bool copy)."""
        view = self._mask.view()
        view.flags.writeable = False
        return view

    @property
    def seat(self) -> int:
        """The learner's seat in the current episode (drawn at reset when
        ``learner_seat`` is None)."""
        return self._seat

    @property
    def game(self) -> GameState:
        """The engine state of the match being played (``raw_env``'s ``GameState``); a
        ``RuntimeError`` before the first ``reset()``."""
        return self.aec.game

    def render(self) -> np.ndarray | str | None:
        """The table from the learner's seat, only what it may see (``render_view``:
        ``"current"``, the default, is the learner's seat; ``"full"`` shows every hand, an
        agent name that seat's view; ``render_mode``:
        ``"rgb_array"`` an ``uint8[H, W, 3]`` frame, ``"ansi"`` text, ``"human"`` printed);
        before the first ``reset`` there is no table to draw (a ``RuntimeError``)."""
        if not self.aec.has_game:
            return self.aec.render_seat(None)  # its warning or error
        view = self.aec.render_view  # "current" is the learner's seat here
        if view == "full":
            picture = self.aec.render_seat(self._seat, reveal=True)
        else:
            picture = self.aec.render_seat(self._seat if view == "current"
                                           else self.aec.possible_agents.index(view))
        if self.render_mode == "human":
            print(picture)
            return None
        return picture

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
            observed = aec.observe(agent)
            action = self._policies[index](observed)
            if not _is_legal(observed["action_mask"], action):
                self._illegal_opponent(index, agent, action, observed["action_mask"])
            aec.step(action)

    def _illegal_opponent(self, index: int, agent: str, action, mask) -> None:
        """Count (and warn about, or raise on) an opponent's illegal action; the caller
        then plays it, so the opponent forfeits the deal."""
        opponent = self.opponents[index]
        self._illegal_count += 1
        legal = np.flatnonzero(mask).tolist()
        text = (f"opponent {opponent!r} at {agent} returned the illegal action {action!r} "
                f"(legal: {legal})")
        if self.opponent_illegal == "raise":
            raise IllegalActionError(text)
        if id(opponent) not in self._warned:
            self._warned.add(id(opponent))
            warnings.warn(f"{text}: it forfeits the deal; info['opponent_illegal_actions'] "
                          "counts these (warned once per opponent)", RuntimeWarning,
                          stacklevel=4)

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
        info["opponent_illegal_actions"] = self._illegal_count
        return observed["observation"], reward, terminated, truncated, info


def _is_legal(mask: np.ndarray, action) -> bool:
    """Whether ``action`` is an integer id whose mask entry is 1 (what the engine plays)."""
    if isinstance(action, np.ndarray) and action.shape == ():
        action = action.item()  # a 0-d array, as a policy's predict() returns
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        return False
    return bool(0 <= action < NUM_ACTIONS and mask[action])
