"""``BatchedGame``: B Pis Yedili matches in arrays, advanced together by numba kernels.

The rules are those of :class:`pis_env.engine.GameState` (every option of RULES.md), the
observations those of :class:`pis_env.observation.ObservationEncoder`, the masks those of
``pis_env.aec.mask_array`` and the rewards those of ``pis_env.aec.deal_rewards``; a
differential test (``tests/pis_env/batched/test_differential.py``) holds them equal step by
step on stacked decks. What differs is only randomness: shuffles, dealers and reshuffles
come from one splitmix64 stream per game, not from ``numpy.random.Generator``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..engine import GameState, IllegalActionError, action_name
from ..observation import SIZE_SCALE, Layout, check_layout_version
from ..rules import Rules
from . import kernels as K
from . import public as P
from .stepping import step_games


def rules_vector(rules: Rules) -> np.ndarray:
    """The ``cfg`` vector the kernels read (see ``kernels.CFG``)."""
    cfg = np.zeros(K.NCFG, dtype=np.int64)
    cfg[K.C_N] = rules.num_players
    cfg[K.C_DRAW] = ("free", "one", "until_playable").index(rules.draw_rule)
    cfg[K.C_DOUBLE] = rules.seven_penalty == "double"
    cfg[K.C_CONTINUE] = rules.after_penalty == "continue"
    cfg[K.C_OTHER] = rules.nominate == "other"
    cfg[K.C_FIRST_ROUND] = rules.opening == "first_round"
    cfg[K.C_RESHUFFLE] = rules.empty_stock == "reshuffle"
    cfg[K.C_DEALS] = rules.num_deals
    cfg[K.C_MAX_TURNS] = rules.max_turns or 0
    cfg[K.C_WIN] = rules.reward == "win"
    cfg[K.C_TERMINATE] = rules.illegal_action == "terminate"
    cfg[K.C_O_STOCK:K.C_O_SCORES + 1] = K.layout_starts(rules.num_players, rules.num_deals)
    return cfg


def size_table(dtype) -> np.ndarray:
    """Value written for a count k in 0..52: ``k / 52`` (float) or ``k`` (uint8)."""
    dtype = np.dtype(dtype)
    if dtype == np.uint8:
        return np.arange(53, dtype=np.uint8)
    if dtype.kind != "f":
        raise ValueError(f"obs_dtype must be float32, float64 or uint8, got {dtype}")
    return (np.arange(53) / 52.0).astype(dtype)


def uint8_scale(num_players: int, num_deals: int = 1) -> np.ndarray:
    """float32 factors that turn a uint8 observation into the float one (up to float32
    rounding): 1 for 0/1 entries, 1/52 for hand and stock sizes, 1/255 for match scores."""
    layout = Layout.of(num_players, num_deals)
    scale = np.ones(layout.size, dtype=np.float32)
    scale[layout.offsets["hand_sizes"]] = 1.0 / SIZE_SCALE
    scale[layout.offsets["stock_size"]] = 1.0 / SIZE_SCALE
    if num_deals > 1:
        scale[layout.offsets["scores"]] = 1.0 / 255.0
    return scale


def _as_index_array(values, length: int, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim == 0:
        arr = np.full(length, int(arr), dtype=np.int64)
    if arr.shape != (length,):
        raise ValueError(f"{name} must have shape ({length},), got {arr.shape}")
    return arr.astype(np.int64, copy=False)


class StepResult(NamedTuple):
    """Per-game results of one :meth:`BatchedGame.step` (views of the game's buffers,
    overwritten by the next step). ``charges``, ``winners`` and ``rewards`` hold the
    results of the deal that ended where ``reason > 0`` (stale elsewhere)."""

    obs: np.ndarray        # [B, L] current player's observation (after any reset/new deal)
    masks: np.ndarray      # [B, 58] int8 legal actions of the current player
    done: np.ndarray       # [B] bool: the match (the episode) ended at this step
    reason: np.ndarray     # [B] int8: a deal ended: 1 going out, 2 empty stock,
                           #   3 illegal, 4 truncated (``kernels.REASON_NAMES``); 0 none
    rewards: np.ndarray    # [B, n] float64 rewards of the ended deal (``deal_rewards``)
    charges: np.ndarray    # [B, n] int64 charges of the ended deal
    winners: np.ndarray    # [B, n] bool winners of the ended deal
    current: np.ndarray    # [B] int64 player to move next


class BatchedGame:
    """``num_games`` independent matches under one ``Rules``, stepped together.

    ``BatchedGame(4096, Rules(num_players=4), seed=0)`` or ``BatchedGame(4096,
    num_players=4)`` (``seed=None``: fresh entropy).
    The state lives in ``st`` (int64 fields, see ``kernels.FIELDS``), ``stock``,
    ``decks`` and ``rng`` (one splitmix64 stream per game); properties give named views.

    * :meth:`reset` deals new matches, from seeds or stacked decks and dealers.
    * :meth:`step` applies one action per game (``-1``: leave that game alone) and writes
      every game's observation (current player's view) and mask into ``obs`` / ``masks``.
    * :meth:`observe` and :meth:`action_masks` build them for any seats or games.

    Observations have the layout and values of ``ObservationEncoder.encode`` in float32
    (``obs_dtype=np.uint8`` writes counts unscaled, see :func:`uint8_scale`);
    ``layout_version=1`` those of ``ObservationEncoderV1`` (``pis_yedili_v1``: the public
    record is kept by ``batched.public``; float observations only).

    ``public_record=True`` keeps that record at layout 0 too, so that :meth:`observe`
    can show layout 1 to some seats (a ``pis_yedili_v1`` bot at a v0 table) while ``obs``
    stays layout 0; a mixed table, each seat shown the layout its bot was built for.
    """

    def __init__(self, num_games: int, rules: Rules | None = None, *,
                 seed: int | Sequence[int] | None = None, obs_dtype=np.float32,
                 layout_version: int = 0, public_record: bool = False, **options):
        if rules is None:
            rules = Rules.from_options(**options)
        elif options:
            rules = rules.replace(**options)
        if not isinstance(num_games, (int, np.integer)) or num_games < 1:
            raise ValueError(f"num_games must be a positive int, got {num_games!r}")
        B = int(num_games)
        n = rules.num_players
        self.rules = rules
        self.num_games = B
        self.num_players = n
        self.cfg = rules_vector(rules)
        self.layout_version = check_layout_version(layout_version)
        self.obs_size = Layout.of(n, rules.num_deals, self.layout_version).size
        self.obs_dtype = np.dtype(obs_dtype)
        self.size_tab = size_table(self.obs_dtype)
        keep = bool(self.layout_version or public_record)
        if keep and self.obs_dtype.kind != "f":
            raise ValueError(f"layout 1 (layout_version={layout_version}, public_record="
                             f"{public_record}) writes float observations: obs_dtype must "
                             f"be float32 or float64, got {self.obs_dtype}")
        #: The layout-1 record (``batched.public``), or None when no seat reads layout 1.
        self.public = P.make_record(B, n, rules.num_deals) if keep else None
        self.st = np.zeros((B, K.NF), dtype=np.int64)
        self.stock = np.zeros((B, K.NUM_CARDS), dtype=np.int8)
        self.decks = np.zeros((B, rules.num_deals, K.NUM_CARDS), dtype=np.int8)
        self.rng = np.zeros(B, dtype=np.uint64)
        self.obs = np.zeros((B, self.obs_size), dtype=self.obs_dtype)
        self.masks = np.zeros((B, K.NUM_ACTIONS), dtype=np.int8)
        self.reason = np.zeros(B, dtype=np.int8)
        self._done = np.zeros(B, dtype=np.uint8)
        self.charges = np.zeros((B, n), dtype=np.int64)
        self._winners = np.zeros((B, n), dtype=np.uint8)
        self.rewards = np.zeros((B, n), dtype=np.float64)
        self._all = np.arange(B, dtype=np.int64)
        self._no_term_seats = np.zeros(0, dtype=np.int64)
        self._no_term_obs = np.zeros((0, self.obs_size), dtype=self.obs_dtype)
        self._no_masks = np.zeros((0, K.NUM_ACTIONS), dtype=np.int8)
        self._shape = (B,)
        #: The arrays above as the one value the stepping kernels take, and where a step
        #: writes its results (with and without observations and masks).
        self.batch = K.Batch(self.st, self.stock, self.decks, self.rng, self.cfg,
                             self.size_tab)
        self._out = K.StepOut(self.reason, self._done, self.charges, self._winners,
                              self.rewards, self.obs, self.masks)
        self._out_no_obs = self._out._replace(obs=self._no_term_obs, masks=self._no_masks)
        self._result = StepResult(self.obs, self.masks, self.done, self.reason, self.rewards,
                                  self.charges, self.winners, self.st[:, K.CUR])
        self.reset(seed=np.random.SeedSequence().entropy if seed is None else seed)

    # ------------------------------------------------------------------ views
    @property
    def done(self) -> np.ndarray:
        """[B] bool: the match ended at the last step."""
        return self._done.view(bool)

    @property
    def winners(self) -> np.ndarray:
        return self._winners.view(bool)

    @property
    def current(self) -> np.ndarray:
        """[B] the player to move (a copy)."""
        return self.st[:, K.CUR].copy()

    @property
    def legal(self) -> np.ndarray:
        """[B] legal action sets as 58-bit ints (``GameState.legal_mask``; 0 when over)."""
        return self.st[:, K.LEGAL].copy()

    @property
    def match_over(self) -> np.ndarray:
        return self.st[:, K.MOVER].astype(bool)

    @property
    def totals(self) -> np.ndarray:
        """[B, n] each player's total charge in the match so far."""
        return self.st[:, K.TOTAL:K.TOTAL + self.num_players].copy()

    def field(self, name: str) -> np.ndarray:
        """A copy of one state field over the batch (``kernels.FIELDS``; per-seat fields
        are [B, n])."""
        col = K.FIELDS[name]
        if name in ("hands", "drew_on", "totals"):
            return self.st[:, col:col + self.num_players].copy()
        return self.st[:, col].copy()

    def hands(self) -> np.ndarray:
        """[B, n] hands as 52-bit masks (bit c set: the player holds card c)."""
        return self.field("hands")

    def stock_cards(self, game: int) -> list[int]:
        """The stock of one game, next card first."""
        return self.stock[game, self.st[game, K.SPOS]:self.st[game, K.SLEN]].tolist()

    def game_state(self, game: int) -> GameState:
        """A reference ``GameState`` in game ``game``'s position (for rendering, the
        non-batched bots, debugging). What the arrays do not keep is filled in: the
        discard pile's order (ascending ids, the top card last), the action history, the
        dealt decks; the clone draws future randomness from a fresh ``default_rng(game)``."""
        b = int(game)
        st = self.st[b]
        n = self.num_players
        pile_mask = int(st[K.PILE])
        top = int(st[K.TOP])
        pile = [c for c in range(K.NUM_CARDS) if (pile_mask >> c) & 1 and c != top]
        reason = int(st[K.REASON])
        return GameState.from_position(
            self.rules,
            hands=st[K.HAND:K.HAND + n].tolist(),
            stock=self.stock_cards(b)[::-1],
            pile=pile + ([top] if top >= 0 else []),
            top=top, active_suit=st[K.SUIT], pending_sevens=st[K.PEND], phase=st[K.PHASE],
            has_drawn=st[K.DRAWN], direction=st[K.DIR], current=st[K.CUR],
            dealer=st[K.DEALER], opened=st[K.OPENED], drew_on=st[K.DREW:K.DREW + n].tolist(),
            turns=st[K.TURNS], deal_index=st[K.DEAL], totals=st[K.TOTAL:K.TOTAL + n].tolist(),
            end_reason=K.REASON_NAMES[reason],
            charges=self.charges[b].tolist() if reason else None,
            winners=self.winners[b].tolist() if reason else None,
            match_over=bool(st[K.MOVER]),
            decks_left=[self.decks[b, k].tolist()
                        for k in range(int(st[K.NEXTDECK]), int(st[K.NSTACK]))],
            rng=np.random.default_rng(b),
        )

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | Sequence[int] | None = None, *, decks=None, dealers=None,
              games=None) -> StepResult:
        """Start new matches in ``games`` (default: all) and write their observations.

        ``seed``: an int (game b's stream is derived from (seed, b)) or one seed per game
        reset; ``None`` continues each game's stream. ``decks``: stacked decks, [K, 52]
        (the first deal of each game) or [K, k, 52] (its first k deals), card ids, K =
        number of games reset; a deck that is not a permutation of 0..51 is a
        ``ValueError``. ``dealers``: an int or [K] seats (``-1`` or ``None``: drawn from
        the game's stream). Returns the :class:`StepResult` views (``done`` all False)."""
        B = self.num_games
        games = self._all if games is None else np.asarray(games, dtype=np.int64).ravel()
        if games.size and (games.min() < 0 or games.max() >= B):
            raise ValueError(f"games must be indices in 0..{B - 1}")
        k_games = games.shape[0]
        if seed is not None:
            if np.ndim(seed) == 0:
                scalar = int(np.asarray(seed))
                seeds = np.random.SeedSequence(scalar).generate_state(B, np.uint64)[games]
            else:
                seeds = np.asarray(seed, dtype=np.uint64)
                if seeds.shape != (k_games,):
                    raise ValueError(f"seed needs one value per game reset ({k_games})")
            sub = np.empty(k_games, dtype=np.uint64)
            K.seed_streams(sub, seeds)
            self.rng[games] = sub
        self.st[games, K.NSTACK] = 0
        if decks is not None:
            arr = np.asarray(decks)
            if arr.ndim == 2:
                arr = arr[:, None, :]
            if arr.ndim != 3 or arr.shape[0] != k_games or arr.shape[2] != K.NUM_CARDS:
                raise ValueError(
                    f"decks must have shape ({k_games}, 52) or ({k_games}, k, 52), "
                    f"got {np.shape(decks)}"
                )
            if arr.shape[1] > self.rules.num_deals:
                raise ValueError(
                    f"got {arr.shape[1]} decks per game for a match of "
                    f"{self.rules.num_deals} deals"
                )
            ok = (np.sort(arr, axis=2) == np.arange(K.NUM_CARDS)).all(axis=2)
            if not ok.all():
                g, d = np.argwhere(~ok)[0]
                raise ValueError(
                    f"deck {d} of game {games[g]} must hold each of the 52 card ids 0..51 "
                    "exactly once"
                )
            self.decks[games, :arr.shape[1]] = arr
            self.st[games, K.NSTACK] = arr.shape[1]
        if dealers is None:
            dealer_arr = np.full(k_games, -1, dtype=np.int64)
        else:
            dealer_arr = _as_index_array(dealers, k_games, "dealers")
            if dealer_arr.max(initial=-1) >= self.num_players or dealer_arr.min(initial=0) < -1:
                raise ValueError(f"dealer must be a seat index 0..{self.num_players - 1}")
        K.reset_games(self.st, self.stock, self.decks, self.rng, self.cfg, games, dealer_arr)
        if self.public is not None:
            P.new_matches(self.public, self.st, games)
        self.reason[games] = 0
        self._done[games] = 0
        current = np.full(k_games, -1, np.int64)
        if games is self._all:
            K.observe_games(self.st, self.cfg, games, current, self.obs, self.size_tab)
            if self.public is not None:
                P.observe_public(self.public, self.st, self.cfg, games, current, self.obs,
                                 self.size_tab)
            K.masks_of(self.st, games, self.masks)
        else:
            self.obs[games] = self.observe(games=games)
            self.masks[games] = self.action_masks(games=games)
        return self.result()

    def result(self) -> StepResult:
        """The :class:`StepResult` views (the same object after every step)."""
        return self._result

    # ------------------------------------------------------------------ step
    def step(self, actions, *, auto_reset: bool = False, write_obs: bool = True,
             terminal_obs: np.ndarray | None = None, terminal_seats=None) -> StepResult:
        """Apply ``actions[b]`` (an action id, or ``-1`` to leave game b alone).

        An illegal action raises ``IllegalActionError`` before anything changes
        (``illegal_action="raise"``) or forfeits that game's match
        (``"terminate"``, as ``GameState.forfeit``). Stepping a finished match (without
        ``auto_reset``) is a ``ValueError``. A deal that ends in an unfinished match is
        followed at once by the next deal (dealer one seat clockwise), as in the AEC env.

        ``auto_reset``: a finished match is replaced by a new one from the game's stream
        (after its final position went into ``terminal_obs[b]``, seen by
        ``terminal_seats[b]`` or, by default, by the player who acted).
        ``write_obs``: also write ``obs`` and ``masks`` for every game (current player).
        Returns :class:`StepResult` views."""
        acts = np.asarray(actions)
        if acts.dtype != np.int64:
            acts = acts.astype(np.int64)
        if acts.shape != self._shape:
            raise ValueError(f"actions must have shape ({self.num_games},), got {acts.shape}")
        if terminal_obs is None:
            term_obs, term_seats = self._no_term_obs, self._no_term_seats
        else:
            term_obs = terminal_obs
            if term_obs.shape != (self.num_games, self.obs_size) or \
                    term_obs.dtype != self.obs_dtype:
                raise ValueError("terminal_obs must be a [B, L] array of obs_dtype")
            term_seats = _as_index_array(-1 if terminal_seats is None else terminal_seats,
                                         self.num_games, "terminal_seats")
        out = self._out if write_obs else self._out_no_obs
        bad = step_games(self.batch, acts, auto_reset, out, term_seats, term_obs,
                         self.public)
        if bad < 0:
            raise ValueError(f"game {-bad - 1}: the match is over; reset it (or use "
                             "auto_reset)")
        if bad > 0:
            raise IllegalActionError(self._illegal_message(bad - 1, int(acts[bad - 1])))
        return self._result

    def _illegal_message(self, b: int, action: int) -> str:
        legal = int(self.st[b, K.LEGAL])
        ids = [a for a in range(K.NUM_ACTIONS) if (legal >> a) & 1]
        name = action_name(action) if 0 <= action < K.NUM_ACTIONS else "?"
        phase = ("opening", "play", "nominate", "ace")[self.st[b, K.PHASE]]
        return (
            f"game {b}: action {action} ({name}) is illegal for player_{self.st[b, K.CUR]} "
            f"in phase {phase}; legal actions: "
            + ", ".join(f"{a} ({action_name(a)})" for a in ids)
        )

    # ------------------------------------------------------------------ observations
    def observe(self, seats=None, games=None, out: np.ndarray | None = None,
                layout_version: int | None = None) -> np.ndarray:
        """Observations of ``games`` (default all) seen by ``seats`` (an int, one per
        game, or ``None``/``-1`` for the current player) as [K, L] (into ``out``), at
        ``layout_version`` (default the game's; layout 1 needs the public record)."""
        games = self._all if games is None else np.asarray(games, dtype=np.int64).ravel()
        k = games.shape[0]
        seat_arr = _as_index_array(-1 if seats is None else seats, k, "seats")
        if seat_arr.max(initial=-1) >= self.num_players:
            raise ValueError(f"seats must be in 0..{self.num_players - 1} (or -1)")
        size = self.layout_size(layout_version)
        if out is None:
            out = np.empty((k, size), dtype=self.obs_dtype)
        elif out.shape != (k, size):
            raise ValueError(f"out must have shape ({k}, {size}), got {out.shape}")
        K.observe_games(self.st, self.cfg, games, seat_arr, out, self.size_tab)
        if self.public is not None:
            P.observe_public(self.public, self.st, self.cfg, games, seat_arr, out,
                             self.size_tab)
        return out

    def layout_size(self, layout_version: int | None = None) -> int:
        """The observation length at ``layout_version`` (default the game's); a
        ``ValueError`` for layout 1 when no public record is kept."""
        if layout_version is None:
            return self.obs_size
        version = check_layout_version(layout_version)
        if version and self.public is None:
            raise ValueError(f"layout {version} (pis_yedili_v{version}) needs the public "
                             f"record, which this layout-{self.layout_version} game does not "
                             f"keep: build it with public_record=True")
        return Layout.of(self.num_players, self.rules.num_deals, version).size

    def action_masks(self, games=None, out: np.ndarray | None = None) -> np.ndarray:
        """int8 [K, 58] legal-action masks of the current players (zeros when over)."""
        games = self._all if games is None else np.asarray(games, dtype=np.int64).ravel()
        if out is None:
            out = np.empty((games.shape[0], K.NUM_ACTIONS), dtype=np.int8)
        K.masks_of(self.st, games, out)
        return out


# ---------------------------------------------------------------------- policies
class RandomPolicy:
    """Uniformly random legal actions for every game of a ``BatchedGame`` (its own
    splitmix64 streams, one per game)."""

    def __init__(self, num_games: int, seed: int = 0):
        self.rng = np.empty(num_games, dtype=np.uint64)
        K.seed_streams(self.rng, np.random.SeedSequence(seed).generate_state(
            num_games, np.uint64))
        self.out = np.empty(num_games, dtype=np.int64)

    def __call__(self, game: BatchedGame) -> np.ndarray:
        """Actions [B] (``-1`` where the match is over); a reused buffer."""
        K.random_actions(game.st, self.rng, self.out)
        return self.out
