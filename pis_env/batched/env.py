"""``BatchedEnv``: one learner seat per game, batched opponents, numpy in and out.

The shape a vectorised training env wraps (an SB3 ``VecEnv``: ``reset`` -> obs,
``step_async/step_wait`` -> ``step``, ``env_method("action_masks")`` -> ``masks``,
``infos[i]["terminal_observation"]`` -> ``infos["terminal_obs"][i]`` where done).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence

import numpy as np

from ..observation import check_layout_version
from ..rules import Rules
from . import kernels as K
from .core import BatchedGame
from .stepping import SKIP, env_advance

#: An external opponent: ``policy(obs [K, L], masks int8 [K, 58]) -> actions [K]``,
#: called once per round for every game waiting on it (one torch forward pass). A policy
#: that reads the engine arrays itself (the numba bots of ``agents``) defines
#: ``state_actions(game, games) -> actions`` instead, and no observation is built for it.
#: A policy with an int attribute ``layout_version`` (a network saved at one layout) is
#: shown that layout, whatever the learner's (:func:`layout_of`).
Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]


def layout_of(policy, table: int) -> int:
    """The observation layout ``policy`` reads: its ``layout_version`` (``None``, or none
    at all: the table's, ``table``), checked."""
    version = getattr(policy, "layout_version", None)
    return table if version is None else check_layout_version(version)


_BUILTIN = {"random": K.RANDOM}


class BatchedEnv:
    """B matches seen from one learner seat each; the other seats are played by batched
    opponents until it is the learner's turn again.

    ``BatchedEnv(num_envs, rules=None, *, opponent="random", learner_seat=0, seed=None,
    skip_forced=False, obs_dtype=np.float32, layout_version=0, **rules_options)``

    * ``layout_version``: the learner's observation layout (1: ``pis_yedili_v1``'s, the
      public record kept by the loop). Each external policy is shown its own layout
      (:func:`layout_of`): a v0 network at a v1 learner's table reads v0 rows, a v1 one at
      a v0 table v1 rows, for which the game keeps the public record (``public_record``:
      whether to keep it; default, when the learner or a policy given here reads layout
      1; a layout-1 policy that joins later a table without it is a ``ValueError``).

    * ``opponent``: ``"random"`` (random legal play inside the numba kernel), or a
      callable ``policy(obs, masks) -> actions`` (batched, e.g. a torch snapshot or a bot
      of ``agents``, such as ``agents.greedy.batched.GreedyPolicy``: one call per round
      for all games waiting on it); or a sequence with one of those per seat (the
      learner's entry is ignored). ``opponent_kinds[b, seat]`` can be changed between
      steps (0 random, ``1 + i`` the callable ``policies[i]``). This package holds the
      rules only: the bots live in ``agents`` and are handed in.
    * ``learner_seat``: a seat index, or ``"random"`` (drawn anew for every match).
    * ``skip_forced``: the kernel plays the learner's forced moves (a single legal
      action), so every step is a real decision; a match that ends before the learner's
      first real decision is replaced.
    * :meth:`set_opponent_mix` draws the opponents of every new match from a weighted mix
      of kinds; ``term_kinds[b]`` keeps those of the match that ended last in game ``b``
      (and ``term_st[b]`` / ``term_stock[b]`` its final engine state).

    ``reset(seed=None, *, decks=None, dealers=None) -> (obs, masks)``: new matches in all
    games (arguments as ``BatchedGame.reset``), played up to the learner's first turn.

    ``step(actions) -> (obs, rewards, dones, infos)`` (an action ``SKIP`` leaves its game
    as it is: no move, reward 0, not done, its obs and mask unchanged):

    * ``obs`` [B, L] the learner's observation at its next decision; ``masks`` (also the
      attribute ``masks`` / method ``action_masks()``) int8 [B, 58] its legal actions;
    * ``rewards`` float32 [B]: the learner's rewards of the deals that ended since its
      previous decision (``deal_rewards`` of its seat; zero-sum with the opponents);
    * ``dones`` bool [B]: the match ended; it has been replaced by a new one and ``obs``
      is the new match's first observation (auto-reset);
    * ``infos``: a dict of [B, ...] arrays, rows valid where ``dones``:
      ``terminal_obs`` (the learner's view of the final position), ``truncated``
      (``max_turns``), ``reason`` (last deal end: 1 going out, 2 empty stock, 3 illegal,
      4 truncated), ``charges`` and ``winners`` [B, n] of the last deal, ``totals``
      ([B, n] the match totals), ``learner_seat`` (of the match that ended).

    An illegal learner action forfeits the match (``illegal_action="terminate"``:
    charged 3 x its hand points + 100), whatever ``rules.illegal_action`` says; so does an
    illegal action of an external opponent. All returned arrays are buffers reused by the
    next call: copy what you keep.
    """

    def __init__(self, num_envs: int, rules: Rules | None = None, *,
                 opponent: str | Policy | Sequence[str | Policy] = "random",
                 learner_seat: int | str = 0, seed: int | None = None,
                 skip_forced: bool = False, obs_dtype=np.float32, layout_version: int = 0,
                 public_record: bool | None = None, **options):
        if seed is None:
            seed = secrets.randbits(128)  # fresh entropy, as SeedSequence() draws it
        layout_version = check_layout_version(layout_version)
        given = list(opponent) if isinstance(opponent, (list, tuple)) else [opponent]
        if public_record is None:
            public_record = any(layout_of(o, layout_version) for o in given)
        self.game = BatchedGame(num_envs, rules, seed=seed, obs_dtype=obs_dtype,
                                layout_version=layout_version, public_record=public_record,
                                **options)
        game = self.game
        B, n = game.num_games, game.num_players
        self.num_envs = B
        self.num_players = n
        self.rules = game.rules
        self.obs_size = game.obs_size
        self.layout_version = layout_version
        self.policies: list[Policy] = []
        self.opponent_kinds = np.zeros((B, n), dtype=np.int64)
        per_seat = given if isinstance(opponent, (list, tuple)) else given * n
        if len(per_seat) != n:
            raise ValueError(f"opponent: one per seat ({n}) or a single one")
        for seat, opp in enumerate(per_seat):
            self.opponent_kinds[:, seat] = self._kind_of(opp)
        if learner_seat == "random":
            self.learner = np.zeros((B, 3), dtype=np.int64)
            self.learner[:, K.L_REDRAW] = 1
        elif isinstance(learner_seat, (int, np.integer)) and 0 <= learner_seat < n:
            self.learner = np.zeros((B, 3), dtype=np.int64)
            self.learner[:, K.L_SEAT] = learner_seat
        else:
            raise ValueError(f"learner_seat must be 0..{n - 1} or 'random', "
                             f"got {learner_seat!r}")
        self.skip_forced = bool(skip_forced)
        self.opp_rng = np.empty(B, dtype=np.uint64)
        self.seat_rng = np.empty(B, dtype=np.uint64)
        self.mix_rng = np.empty(B, dtype=np.uint64)
        self._seed_streams(seed)
        self.mix_cum = np.zeros(0, dtype=np.float64)
        self.mix_table = np.zeros(0, dtype=np.int64)
        self.mix_per_game = False
        self.obs = np.zeros((B, game.obs_size), dtype=game.obs_dtype)
        self.masks = np.zeros((B, K.NUM_ACTIONS), dtype=np.int8)
        self.terminal_obs = np.zeros_like(self.obs)
        self.rewards = np.zeros(B, dtype=np.float32)
        self._reward = np.zeros(B, dtype=np.float64)
        self._carry = np.zeros(B, dtype=np.float64)
        self._done = np.zeros(B, dtype=np.uint8)
        self._reason = np.zeros(B, dtype=np.int8)
        self._wait = np.zeros(B, dtype=np.int64)
        self._ended_seat = np.zeros(B, dtype=np.int64)
        self._ended_totals = np.zeros((B, n), dtype=np.int64)
        self.term_kinds = np.zeros_like(self.opponent_kinds)
        self.term_st = np.zeros_like(game.st)
        self.term_stock = np.zeros_like(game.stock)
        #: decisions applied per game so far (learner's and opponents'), for throughput
        self.decisions = np.zeros(B, dtype=np.int64)
        self._skip = np.full(B, SKIP, dtype=np.int64)

    def _kind_of(self, opponent) -> int:
        if isinstance(opponent, str):
            if opponent not in _BUILTIN:
                raise ValueError(f"opponent {opponent!r}: allowed 'random' or a callable "
                                 "policy(obs, masks) -> actions (the bots of agents, e.g. "
                                 "agents.greedy.batched.GreedyPolicy())")
            return _BUILTIN[opponent]
        if not callable(opponent) and not hasattr(opponent, "state_actions"):
            raise ValueError(f"opponent must be 'random' or a callable policy, got "
                             f"{opponent!r}")
        self.check_policy(opponent)
        for i, known in enumerate(self.policies):
            if known is opponent:
                return K.EXTERNAL + i
        self.policies.append(opponent)
        return K.EXTERNAL + len(self.policies) - 1

    def check_policy(self, policy) -> None:
        """A ``ValueError`` unless this table can show ``policy`` its layout (layout 1
        needs the public record, kept from the start of every match)."""
        version = layout_of(policy, self.layout_version)
        if version and self.game.public is None and not hasattr(policy, "state_actions"):
            raise ValueError(
                f"{policy!r} reads layout {version} (pis_yedili_v{version}), whose public "
                f"record this layout-{self.layout_version} table does not keep (it is kept "
                f"from the start of every match): name it among the opponents when the env "
                f"is built (opponent=, opponent_mix=), or build it with public_record=True")

    def _seed_streams(self, seed) -> None:
        B = self.num_envs
        seeds = np.random.SeedSequence([seed, 1]).generate_state(2 * B, np.uint64)
        K.seed_streams(self.opp_rng, seeds[:B])
        K.seed_streams(self.seat_rng, seeds[B:])
        K.seed_streams(self.mix_rng, np.random.SeedSequence([seed, 2]).generate_state(
            B, np.uint64))

    def set_opponent_mix(self, kinds, weights, per_game: bool = False) -> None:
        """Draw every new match's opponents from ``kinds`` (``opponent_kinds`` values)
        with probabilities proportional to ``weights``: each seat on its own, or one draw
        for all seats when ``per_game``. Applies from the next match on (:meth:`reset`
        draws them for all games). Empty ``kinds``: keep ``opponent_kinds`` as they are."""
        kinds = np.asarray(kinds, dtype=np.int64)
        self.mix_per_game = bool(per_game)
        if kinds.size == 0:
            self.mix_cum = np.zeros(0, dtype=np.float64)
            self.mix_table = np.zeros(0, dtype=np.int64)
            return
        w = np.asarray(weights, dtype=np.float64)
        cum = np.cumsum(w / w.sum())
        cum[-1] = 1.0
        self.mix_cum, self.mix_table = cum, kinds

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, *, decks=None, dealers=None):
        """New matches everywhere; returns ``(obs, masks)`` at the learner's first turn."""
        game = self.game
        if seed is not None:
            self._seed_streams(seed)
        game.reset(seed, decks=decks, dealers=dealers)
        K.draw_learner_seats(self.learner, self.seat_rng, self.num_players)
        if self.mix_cum.size:
            K.draw_all_opponents(self.opponent_kinds, self.num_players, self.mix_cum,
                                 self.mix_table, self.mix_per_game, self.mix_rng)
        self._carry[:] = 0.0
        self._advance(np.full(self.num_envs, -1, dtype=np.int64))
        return self.obs, self.masks

    def step(self, actions):
        """The learner's actions [B]; see the class docstring for what comes back."""
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {acts.shape}")
        if acts.dtype != np.int64:
            acts = acts.astype(np.int64)
        if ((acts < 0) & (acts != SKIP)).any():
            raise ValueError(f"actions must be action ids >= 0 (or SKIP = {SKIP})")
        self._ended_seat[:] = self.learner[:, K.L_SEAT]
        self._advance(acts)
        done = self._done.view(bool)
        self.rewards[:] = self._reward
        infos = {
            "terminal_obs": self.terminal_obs,
            "truncated": done & (self._reason == K.TRUNCATED),
            "reason": self._reason,
            "charges": self.game.charges,
            "winners": self.game.winners,
            "totals": self._ended_totals,
            "learner_seat": self._ended_seat,
        }
        return self.obs, self.rewards, done, infos

    def action_masks(self) -> np.ndarray:
        """int8 [B, 58]: the learner's legal actions (what MaskablePPO reads)."""
        return self.masks

    # ------------------------------------------------------------------ engine loop
    def _advance(self, actions: np.ndarray) -> None:
        game = self.game
        skipped = actions == SKIP  # their deal rewards keep waiting in carry
        self._reward[:] = np.where(skipped, 0.0, self._carry)
        self._carry[~skipped] = 0.0
        self._done[:] = 0
        self._reason[:] = 0
        out = K.StepOut(self._reason, self._done, game.charges, game._winners, game.rewards,
                        self.obs, self.masks)
        seats = K.LearnerSeats(
            self.learner, self.opponent_kinds, self.opp_rng, self.seat_rng, self._reward,
            self._carry, self._wait, self.decisions, self.terminal_obs, self._ended_totals,
            self.term_kinds, self.term_st, self.term_stock, self.mix_cum, self.mix_table,
            self.mix_per_game, self.mix_rng, self.skip_forced)
        pending: np.ndarray | None = actions
        while pending is not None:  # until no game waits on a Python-side opponent
            env_advance(game.batch, out, seats, pending, game.public)
            pending = self._external_actions()

    def _external_actions(self) -> np.ndarray | None:
        """Actions of the Python-side opponents the kernel stopped for (one call of each
        policy for all its waiting games), or ``None`` when no game waits on one."""
        game = self.game
        waiting = np.flatnonzero(self._wait >= K.EXTERNAL)
        if not len(waiting):
            return None
        actions = self._skip.copy()
        kinds = self._wait[waiting]
        for kind in np.unique(kinds):
            games = waiting[kinds == kind]
            policy = self.policies[kind - K.EXTERNAL]
            if hasattr(policy, "state_actions"):
                chosen = policy.state_actions(game, games)
            else:
                obs = game.observe(games=games,
                                   layout_version=layout_of(policy, self.layout_version))
                chosen = policy(obs, game.action_masks(games=games))
            actions[games] = np.asarray(chosen, dtype=np.int64)
        self._wait[:] = 0
        return actions
