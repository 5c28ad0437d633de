"""
# Pis Yedili ("Dirty Seven")

| Import             | `from pis_env import pis_yedili_v0`                    |
|--------------------|--------------------------------------------------------|
| Actions            | Discrete                                               |
| Parallel API       | Yes, turn-based (`pis_yedili_v0.parallel_env()`)       |
| Manual Control     | Yes (`python -m agents.ui.play`)                          |
| Agents             | `agents = ['player_0', ..., 'player_{n-1}']`           |
| Number of agents   | 2–7 (default 2)                                        |
| Action shape       | (1,)                                                   |
| Action values      | Discrete(58)                                           |
| Observation shape  | (L,) with L from the table below (178 for 2 players)   |
| Observation values | [0, 1]                                                 |

Pis Yedili is the Turkish shedding game of the Crazy Eights family: match the top card's
rank or suit, Jacks change the suit, 8 skips, 10 reverses, 7 makes the next player draw
three (sevens chain), an Ace gives an extra play. The first player out wins the deal and
the others are charged the points left in their hands (tripled when going out on a 7,
doubled on a Jack). `RULES.md` states every rule, decision and variant.

### Arguments

``pis_yedili_v0.env(num_players=2, draw_rule="free", seven_penalty="add",
after_penalty="end_turn", nominate="any", opening="opener", empty_stock="end_deal",
num_deals=1, max_turns=None, reward="points", illegal_action="raise", render_mode=None,
render_view="current")``

Every rules option is described in `RULES.md`; a bad key or value is a `ValueError` that
names the allowed ones. `reset(seed=..., options={"deck": [...], "dealer": d})` deals a
stacked deck (52 ids or names; `deck[0]` goes to the player left of the dealer) and/or sets
the dealer; other option keys are ignored. A list of decks stacks the deals of a match.

### Rendering

`render_mode="rgb_array"`: `render()` returns the table as an `uint8[640, 960, 3]` picture
(what gymnasium's and PettingZoo's `RecordVideo` and SB3's `VecVideoRecorder` record;
drawn with Pillow, from the `agents` or `video` extra). `"ansi"` returns it as text,
`"human"` prints that text after every step. `render_view` says whose table it is:
`"current"` (default) the player to move, an agent name such as `"player_0"` that seat
throughout, `"full"` every hand face up (replays, debugging). Except with `"full"`, a
frame shows only what its seat may see: its own hand, the other hands as card backs,
the pile, the stock and discard counts, the active suit, the pending sevens, the
direction, whose turn it is, the suits each player drew on, and the charges at the end.

### Observation Space

`observe(agent)` returns `{"observation": float32[L], "action_mask": int8[58]}`. Seats in
per-player segments are relative: index 0 is the observer, then clockwise.

| Segment          | Length      | Meaning                                                   |
|------------------|-------------|-----------------------------------------------------------|
| `hand`           | 52          | 1 for each card id the observer holds                     |
| `top_card`       | 52          | one-hot top of the pile; zeros before the opening club    |
| `active_suit`    | 4           | one-hot suit to follow (the nominated one after a Jack)   |
| `pending_sevens` | 5           | one-hot length 0–4 of the live chain of sevens            |
| `phase`          | 4           | one-hot `opening`, `play`, `nominate`, `ace`              |
| `has_drawn`      | 1           | the observer, to move, has drawn this turn                |
| `direction`      | 1           | 1 clockwise, 0 anticlockwise                              |
| `hand_sizes`     | n           | cards / 52, observer first                                |
| `stock_size`     | 1           | cards / 52                                                |
| `discard`        | 52          | the cards on the discard pile                             |
| `drew_on_suit`   | 4 (n − 1)   | per opponent: suits active when it drew, not played since |
| `deal`           | num_deals   | (matches only) one-hot index of the current deal          |
| `scores`         | n           | (matches only) total charge t as t / (t + 100), observer first |

`pis_env.decode_observation(vector, num_players, num_deals)` turns a vector back into
these fields; `pis_env.segment_table` lists them.

#### State

`state()` is the whole deal for centralized critics (MAPPO-style), the same whoever asks:
seat 0's observation, then the hidden cards as the privileged critic reads them
(`pis_env.privileged`: every other hand clockwise from seat 0's left, the stock as a set,
its next 4 cards in draw order), then the seat to move (one-hot, n) and whether it has
drawn this turn. `state_space` is its `Box(0, 1, (S,), float32)`, S = L + 52 (n − 1) +
260 + n + 1 (493 for 2 players at the v0 layout).

#### Legal Actions Mask

`action_mask[a]` is 1 when action `a` is legal for the agent to move, all zeros for the
others and after the deal is over.

### Action Space

| Action ID | Action                                                              |
|-----------|---------------------------------------------------------------------|
| 0–51      | play the card with that id (13 × suit + rank; suits ♣ ♦ ♥ ♠, ranks 2…A) |
| 52–55     | nominate ♣ ♦ ♥ ♠ after playing a Jack                               |
| 56        | draw one card; with sevens pending, take the whole penalty          |
| 57        | pass (only after drawing this turn, or to end an Ace's extra play)  |

### Rewards

At the end of every deal, zero-sum. `reward="points"`: `(mean charge of the others − own
charge) / 100`. `reward="win"`: the deal's winners share +1 and the others −1 (0 for all
when everyone ties). `infos[agent]` then holds `penalty` (the deal's charge), `winner`
and, in a match, `match_score`. With `num_deals > 1` the episode is the whole match.
`max_turns` truncates every agent with reward 0. An illegal action raises
`IllegalActionError` (`illegal_action="raise"`, nothing changes) or ends the episode
charging the offender 3 × its hand points + 100 (`"terminate"`).

### Histories

`raw_env.export_history()` is the match so far as JSON (`pis_env.history`, format 1): the
rules, per deal the dealer, the deck, every reshuffle of the stock and the actions, with a
SHA-256 digest. `raw_env.from_history(text)` steps a new env through it to the same
position; a malformed or altered history raises `pis_env.history.HistoryError`.

### Parallel API

`pis_yedili_v0.parallel_env(**options)` is PettingZoo's turn-based conversion
(`pettingzoo.utils.conversions.turn_based_aec_to_parallel`) of `env(**options)`: each
`step(actions)` plays the action of the agent to move (the mask of every other agent is
all zeros, and its action is ignored) and returns every agent's observation;
`infos[agent]["active_agent"]` names who moves next, and `state()` is the env's.

### Version History

* v0: initial release.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from . import history as _history
from .engine import NUM_ACTIONS, GameState, IllegalActionError
from .observation import LAYOUT_VERSION, observation_encoder
from .privileged import privileged_features, privileged_size
from .rules import Rules, RulesOptions
from .scoring import deal_rewards

if TYPE_CHECKING:
    from typing_extensions import Unpack

ENV_NAME = f"pis_yedili_v{LAYOUT_VERSION}"
#: The values of ``render_mode`` besides None (the gymnasium view offers the same).
RENDER_MODES = ("human", "ansi", "rgb_array")


def check_render_mode(render_mode: str | None) -> str | None:
    """``render_mode`` itself, or a ValueError naming the allowed values."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode={render_mode!r}: allowed values are None, "
                         + ", ".join(map(repr, RENDER_MODES)))
    return render_mode


def mask_array(legal: int) -> np.ndarray:
    """A 58-bit legal-action integer as an int8[58] mask."""
    bits = np.unpackbits(np.frombuffer(legal.to_bytes(8, "little"), dtype=np.uint8),
                         count=NUM_ACTIONS, bitorder="little")
    return bits.view(np.int8)


#: What ``observe(agent)`` returns: ``{"observation": float32[L], "action_mask": int8[58]}``.
Observation = dict[str, Any]
#: What ``step`` takes: an action id (a Python or numpy int; None for a finished agent).
ActionType = Any
#: What ``last()`` returns: observation, cumulative reward, terminated, truncated, info.
Last = tuple[Observation, float, bool, bool, dict[str, Any]]


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper[str, Observation, ActionType]):
    """PettingZoo's order-enforcing wrapper (a subclass, same name and checks), with
    ``last()`` asked of the env in one call once it has been reset (the same tuple; the
    wrapper's generic ``__getattr__`` would otherwise forward six attribute reads per
    decision, a sixth of ``env()``'s step), and ``unwrapped`` typed as the ``raw_env``
    it is (so ``env().unwrapped.game`` type-checks in user code)."""

    env: raw_env

    @property
    def unwrapped(self) -> raw_env:
        return self.env

    # ``last()`` always observes unless told not to: typed so, a bot's ``act`` takes its
    # observation as it is (PettingZoo types it ``ObsType | None`` for ``observe=False``).
    @overload
    def last(self, observe: Literal[True] = True) -> Last: ...
    @overload
    def last(self, observe: Literal[False]) -> tuple[None, float, bool, bool, dict[str, Any]]: ...
    @overload
    def last(self, observe: bool = True) -> tuple[Observation | None, float, bool, bool,
                                                  dict[str, Any]]: ...

    def last(self, observe: bool = True):
        if not self._has_reset:
            return super().last(observe)  # PettingZoo's errors before reset()
        return self.env.last(observe)

    def __str__(self) -> str:
        return str(self.env)


def env(render_mode: str | None = None, render_view: str = "current",
        **options: Unpack[RulesOptions]) -> OrderEnforcingWrapper:
    """The environment with PettingZoo's order-enforcing wrapper (the only one: bounds and
    illegal-move checks live in ``raw_env``, where they cost nothing extra)."""
    return OrderEnforcingWrapper(raw_env(render_mode, render_view, **options))


def parallel_env(render_mode: str | None = None, render_view: str = "current",
                 **options: Unpack[RulesOptions]) -> ParallelEnv[str, Observation, ActionType]:
    """The environment as a PettingZoo ``ParallelEnv``: the turn-based conversion of
    ``env(**options)`` (module docstring, "Parallel API"); one game is one agent's move
    at a time, so a step plays the action of the agent to move."""
    return turn_based_aec_to_parallel(env(render_mode, render_view, **options))


class raw_env(AECEnv[str, Observation, ActionType]):
    """The Pis Yedili AEC environment; see the module docstring."""

    #: The observation layout of this env version (``pis_yedili_v1.raw_env`` has 1).
    layout_version = LAYOUT_VERSION
    metadata = {
        "name": ENV_NAME,
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, render_mode: str | None = None, render_view: str = "current",
                 **options: Unpack[RulesOptions]):
        super().__init__()
        self.render_mode = check_render_mode(render_mode)
        self.rules = Rules.from_options(**options)
        n = self.rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents: list[str] = []
        self._agent_index = {a: i for i, a in enumerate(self.possible_agents)}
        self.render_view = render_view
        self._check_render_view(render_view)
        self._encoder = observation_encoder(n, self.rules.num_deals, self.layout_version)
        size = self._encoder.layout.size
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        #: ``state()``'s space: the whole deal, for centralized critics (module docstring).
        self.state_space = spaces.Box(0.0, 1.0, (size + privileged_size(n) + n + 1,),
                                      dtype=np.float32)
        self._rng: np.random.Generator | None = None
        self._game: GameState | None = None
        self._forfeits: dict[int, tuple[int, int]] = {}

    if TYPE_CHECKING:  # AECEnv.last at run time, typed as the wrapper's
        @overload
        def last(self, observe: Literal[True] = True) -> Last: ...
        @overload
        def last(self, observe: Literal[False]) -> tuple[None, float, bool, bool,
                                                         dict[str, Any]]: ...
        @overload
        def last(self, observe: bool = True) -> tuple[Observation | None, float, bool, bool,
                                                      dict[str, Any]]: ...
        def last(self, observe: bool = True) -> Any: ...

    def observation_space(self, agent):
        return self.observation_spaces[self.possible_agents[self._seat(agent)]]

    def action_space(self, agent):
        return self.action_spaces[self.possible_agents[self._seat(agent)]]

    def _seat(self, agent) -> int:
        """The seat of an agent name; a name not at this table is a ValueError naming them."""
        try:
            return self._agent_index[agent]
        except (KeyError, TypeError):
            raise ValueError(
                f"unknown agent {agent!r}: the agents at this table are "
                + ", ".join(self.possible_agents)
            ) from None

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        options = options or {}
        self._begin(GameState(
            self.rules, deck=options.get("deck"), dealer=options.get("dealer"), rng=self._rng
        ))

    @property
    def game(self) -> GameState:
        """The engine state of the match being played (``pis_env.engine.GameState``);
        a ``RuntimeError`` before the first ``reset()``."""
        if self._game is None:
            raise RuntimeError("no game yet: call reset() first")
        return self._game

    @property
    def has_game(self) -> bool:
        """Whether ``reset()`` has dealt a game (``game`` is readable)."""
        return self._game is not None

    def _begin(self, game: GameState) -> None:
        """Start the episode of a new match ``game`` (``reset``, and history replays)."""
        self._game = game
        self._forfeits = {}
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.current]

    def step(self, action):
        if self._game is None:
            raise RuntimeError("step() called before reset()")
        if not self.agents:
            raise RuntimeError(
                "step() after the episode is over (every agent is done): call reset() to "
                "start a new one"
            )
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise ValueError(
                    f"the episode is over for {agent}: step(None) removes it, reset() starts "
                    f"a new episode (got action {action!r})"
                )
            return self._was_dead_step(action)
        game = self.game
        player = self._agent_index[agent]
        if type(action) is not int and isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()  # a 0-d array, as a policy's predict() returns
        try:
            game.apply(action)
        except IllegalActionError:
            if self.rules.illegal_action == "raise":
                raise
            self._forfeits[game.deal_index] = (player, _action_id(action))
            game.forfeit(player)
        self._cumulative_rewards[agent] = 0.0
        self.infos[agent] = {}
        for a in self.agents:
            self.rewards[a] = 0.0
        if game.deal_over:
            self._finish_deal()
        else:
            self.agent_selection = self.possible_agents[game.current]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _finish_deal(self) -> None:
        game = self.game
        agents = self.possible_agents
        if game.end_reason == "truncated":
            for a in agents:
                self.truncations[a] = True
            return
        charges, winners = game.charges, game.winners
        if charges is None or winners is None:  # the engine sets both when a deal ends
            raise RuntimeError("a finished deal without charges")
        for i, reward in enumerate(deal_rewards(charges, winners, self.rules.reward)):
            a = agents[i]
            self.rewards[a] = reward
            info = {"penalty": int(charges[i]), "winner": bool(winners[i])}
            if self.rules.num_deals > 1:
                info["match_score"] = int(game.totals[i])
            if game.deal_index in self._forfeits and self._forfeits[game.deal_index][0] == i:
                info["illegal_action"] = self._forfeits[game.deal_index][1]
            self.infos[a] = info
        if game.match_over:
            for a in agents:
                self.terminations[a] = True
        else:
            game.next_deal()
            self.agent_selection = agents[game.current]

    # ------------------------------------------------------------------ views
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if self._game is None:
            raise RuntimeError("observe() called before reset()")
        player = self._seat(agent)
        game = self.game
        obs = self._encoder.encode(game, player)
        if player == game.current and not game.deal_over:
            mask = mask_array(game.legal_mask())
        else:
            mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def state(self) -> np.ndarray:
        """The whole deal as one float32 vector (``state_space``), the same whichever agent
        is to move or asks: seat 0's observation, every hidden card
        (``pis_env.privileged.privileged_features`` from seat 0), the seat to move
        one-hot and whether it has drawn. What a centralized critic reads."""
        if self._game is None:
            raise RuntimeError("state() called before reset()")
        game = self.game
        n = self.rules.num_players
        turn = np.zeros(n + 1, dtype=np.float32)
        if not game.deal_over:
            turn[game.current] = 1.0
            turn[n] = float(game.has_drawn)
        return np.concatenate([self._encoder.encode(game, 0), privileged_features(game, 0),
                               turn]).astype(np.float32, copy=False)

    def render(self) -> np.ndarray | str | None:
        """The table in ``render_mode``: an ``uint8[H, W, 3]`` frame (``"rgb_array"``), a
        text table (``"ansi"``), or that text printed (``"human"``, also after every step).

        ``render_view`` chooses the seat: ``"current"`` (the player to move: only what
        that seat may see), an agent name (that seat, every frame: a video of one
        player's game), or ``"full"`` (every hand face up: replays and debugging)."""
        if self.render_view == "full":
            return self.render_seat(None, reveal=True)
        if self.render_view == "current":
            return self.render_seat(None)
        return self.render_seat(self._agent_index[self.render_view])

    def render_seat(self, seat: int | None, reveal: bool = False) -> np.ndarray | str | None:
        """``render()`` drawn for ``seat`` (None: the player to move), hidden cards shown
        only with ``reveal`` (the gymnasium view renders its learner's seat with this)."""
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode; set render_mode.")
            return None
        if self._game is None:
            raise RuntimeError("render() called before reset()")
        from .render import render_frame, render_table

        if self.render_mode == "rgb_array":
            return render_frame(self.game, seat, reveal=reveal)
        text = render_table(self.game, seat, reveal=reveal)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def _check_render_view(self, view: str) -> None:
        if view not in ("current", "full") and view not in self._agent_index:
            raise ValueError(f"render_view={view!r}: allowed values are 'current', 'full' "
                             f"and the agent names {', '.join(self.possible_agents)}")

    def close(self):
        pass

    # ------------------------------------------------------------------ histories
    def export_history(self) -> str:
        """The match so far as JSON (``pis_env.history``): rules, and per deal the dealer,
        deck, reshuffles and actions, with the format version and a SHA-256 digest."""
        if self._game is None:
            raise RuntimeError("export_history() called before reset()")
        return json.dumps(_history.record(self.game, self._forfeits, self.metadata["name"]))

    @classmethod
    def from_history(cls, history: str | dict, render_mode: str | None = None,
                     render_view: str = "current") -> raw_env:
        """A new env stepped through an exported history to its last position. A
        malformed or altered history, or one that is not a game of its rules, raises
        ``pis_env.history.HistoryError`` (a ``ValueError``). ``render_mode`` and
        ``render_view`` as for the constructor (``render_view="full"`` shows every hand)."""
        *_, env_ = _history.replay(history, cls)
        env_.render_mode = check_render_mode(render_mode)
        env_._check_render_view(render_view)
        env_.render_view = render_view
        return env_


def _action_id(action) -> int:
    """An illegal action as the plain int that ``info["illegal_action"]`` reports; -1 for
    one that is not an integer at all (a float, a string, None, a bool)."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        return int(action)
    return -1
