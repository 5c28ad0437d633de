"""Policy-based inference: a particle filter over the hidden history of the deal.

Why: a belief that scores (opponent, card) pairs from hand-made features reads what the
opponents did only through those features. Weighing whole hidden worlds by how likely
each opponent's actual moves were in them (Rebstock et al. 2019, "Policy Based
Inference in Trick-Taking Card Games") reads every move through a model of the player
who made it. In a shedding game a world must also say which cards each opponent drew
when, so the population is a particle filter over hidden histories.

``ParticleBelief(num_players, rules)`` follows one seat. Call ``observe(decoded)`` with
every observation of that seat (``decode_observation``'s dict) and ``record(action)``
with the action it took; ``belief()`` gives the chance that each opponent holds each
unseen card, ``sample(count, rng)`` deals determinizations for a search, ``ess`` the
effective sample size ``(sum w)^2 / sum w^2`` of the population.

What it does with each observation:

* **v1 tables** (``pis_yedili_v1``: the observation carries the public events since the
  seat's last action). At a deal's start (its ``deal`` event) every world is dealt anew:
  the seat's own seven cards, the opponents' seven from the other 45, uniformly, the
  stock in random order. Then every event of the window is applied to every world in
  order, by the batched engine (``agents.belief.worlds``). The seat's own draws are
  the cards it now sees in its hand: each world puts them at the front of its stock. An
  opponent's draws take that world's next stock cards: its hidden draws are dealt as
  they happen. Before each **opponent decision** (every play, nomination, pass, single
  draw or penalty) each world's weight is multiplied by the opponent model's probability
  of the move actually made, on that opponent's position in that world (its hand there,
  the public state: exactly what it saw). When the effective sample size falls below
  ``ess_threshold * particles`` the population is resampled (systematic) and
  rejuvenated: ``moves`` Metropolis-Hastings sweeps, each proposing per world an
  exchange of two never-public cards between two holders (an opponent's hand and the
  stock or another hand) and accepting it with the likelihood ratio of the recorded
  decisions the exchange changes.
* **Two-player v0 tables**: the window's events are rebuilt from the two snapshots and
  the seat's action where they say them exactly (``agents.belief.v0_events``: about
  98% of the windows of random play), then replayed as at a v1 table.
* **v0 tables** of three or more players, the other v0 windows, v1 windows that lost
  events (``events_dropped``), and any observation the worlds do not reproduce exactly
  (a check after every update): the worlds are **projected** onto the observation.
  Each keeps the cards its opponents hold that are still unseen, a hand that is now too
  big returns random cards to the stock, one that is too small draws unseen cards at
  random, hard voids (``DealTracker``) respected. The recorded decisions are dropped
  (the next resampling has nothing to weigh).

What is exact and what is not:

* Exact: every world agrees with every public fact of the deal (every hand size, every
  card seen, the stock size, the positions each opponent faced, hard voids, which the
  engine's legal masks enforce); the weights are the Bayesian posterior of the worlds
  under a uniform deal and the opponent model, up to the finite population. The
  rejuvenation moves leave that posterior invariant (an exchange of two hidden card
  names has the same prior probability and a symmetric proposal).
* Approximate: the population is finite; a world that contradicts a move (an opponent
  plays a card the world did not give it, an opening draw while the world gave it a
  club, the seat draws a card the world had given to an opponent) is **repaired**, not
  dropped: the card is renamed with one of that holder's hidden cards
  (``worlds.repair_for_action``), and the repair's proposal correction is omitted (the
  repaired world keeps its weight, times the model's probability of the move in the
  repaired world). Without it every world dies at the first surprise. The weight of a
  repaired world's earlier decisions is not recomputed until a rejuvenation move touches
  them. Projections forget the likelihood of the moves before them. The belief and the
  determinizations are mixed with ``smoothing`` of the uniform deal (hard voids kept),
  so no card is ever ruled out by the population's finiteness or a wrong model alone.
* The opponent model is a model: against an opponent unlike it the weights mislead,
  which the default (:data:`agents.belief.opponent_models.DEFAULT_MODEL`, half
  uniform) bounds.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from agents.belief import v0_events
from agents.belief import worlds as W
from agents.belief.opponent_models import MixtureModel
from agents.belief.opponent_models import opponent_model as make_opponent_model
from agents.belief.tracker import DealTracker, sample_hidden_batch, scale_belief
from pis_env.batched import kernels as K
from pis_env.batched.core import rules_vector
from pis_env.cards import NUM_CARDS
from pis_env.engine import DRAW, NOMINATE_BASE, PASS, PHASE_NAMES
from pis_env.rules import Rules

#: Limits of the user-controlled sizes (checked before any work).
MAX_PARTICLES = 8192
MAX_MOVES = 32
#: Recorded opponent decisions per deal beyond which rejuvenation looks at the latest only.
MAX_DECISIONS = 2048
_CARDS = np.arange(NUM_CARDS)
_BITS = np.left_shift(np.int64(1), _CARDS.astype(np.int64))


def _lse(z: np.ndarray) -> np.ndarray:
    """log-sum-exp over the last axis (-inf where every entry is -inf)."""
    top = z.max(axis=-1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(z - safe[..., None]).sum(axis=-1)) + safe


def mask_of(cards) -> int:
    m = 0
    for c in cards:
        m |= 1 << int(c)
    return m


def position_row(position, own_drew_on: int) -> np.ndarray:
    """The batched engine's state row of an observed position (``ObservedPosition``;
    seat 0, the observer, to move; hands other than its own empty; no stock)."""
    t = position._template
    n = position.num_players
    row = np.zeros(K.NF, dtype=np.int64)
    row[K.CUR] = 0
    row[K.PHASE] = t.phase
    row[K.TOP] = t.top
    row[K.SUIT] = t.active_suit
    row[K.PEND] = t.pending_sevens
    row[K.DRAWN] = int(t.has_drawn)
    row[K.DIR] = t.direction
    row[K.DEALER] = n - 1
    row[K.OPENED] = t.opened
    row[K.PILE] = position.discard
    row[K.LEGAL] = t.legal_mask()
    row[K.HAND] = position.hand
    row[K.DREW:K.DREW + n] = [own_drew_on] + position.void_hints[1:]
    return row


class ParticleBelief:
    """A particle filter over the deal's hidden history; see the module docstring.

    ``particles`` worlds (8..8192, default 256); ``opponent_model`` a spec string or
    model (``agents.belief.opponent_models``; default half heuristic, half uniform);
    ``ess_threshold`` resample below this share of ``particles`` (default 0.5);
    ``moves`` MH sweeps after each resampling (default 4); ``smoothing`` the share of
    the uniform deal mixed into ``belief`` and ``sample`` (default 0.02); ``rules`` or
    RULES.md's options as keywords: the table's variant; ``seed``: the filter is
    deterministic for a seed and the observations it is shown."""

    def __init__(self, num_players: int = 2, rules: Rules | Mapping | None = None, *,
                 particles: int = 256, opponent_model=None, ess_threshold: float = 0.5,
                 moves: int = 4, smoothing: float = 0.02, seed: int | None = None,
                 num_deals: int = 1, **options):
        from agents.heuristic import table_rules

        for name, value, lo, hi in (("particles", particles, 8, MAX_PARTICLES),
                                    ("moves", moves, 0, MAX_MOVES)):
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise ValueError(f"{name}={value!r}: must be an int in {lo}..{hi}")
        if not 0.0 < float(ess_threshold) <= 1.0:
            raise ValueError(f"ess_threshold={ess_threshold!r}: must be in (0, 1]")
        if not 0.0 <= float(smoothing) <= 0.5:
            raise ValueError(f"smoothing={smoothing!r}: must be in [0, 0.5]")
        self.num_players = num_players
        self.rules = table_rules(rules, num_players, num_deals, **options)
        self.cfg = rules_vector(self.rules.replace(num_deals=1, illegal_action="raise"))
        self.cfg[K.C_MAX_TURNS] = 0  # worlds end when the deal does, never by a cap
        self.cfg[K.C_TERMINATE] = 0
        self.particles = particles
        self.model = make_opponent_model(opponent_model, num_players)
        # A mixture is over who each opponent is, not per move: its parts are the types.
        parts = self.model.parts if isinstance(self.model, MixtureModel) else [(1.0, self.model)]
        self.types = [m for _, m in parts]
        self.type_logprior = np.log(np.array([w for w, _ in parts]))
        self.ess_threshold = float(ess_threshold)
        self.moves = moves
        self.smoothing = float(smoothing)
        self.tracker = DealTracker(num_players, self.rules.empty_stock == "reshuffle")
        n = num_players
        self._scratch = tuple(np.zeros((particles, n), dtype=k)
                              for k in (np.int64, np.int64, np.float64))
        self._repaired = np.zeros(particles, dtype=np.int64)
        self.reset(seed)

    # ------------------------------------------------------------------ state
    def reset(self, seed: int | None = None) -> None:
        """Forget the deal; with ``seed``, restart the random generator from it. What the
        deal said about who each opponent is stays: the type posterior so far becomes the
        next deal's prior (``seat_logprior``), as it does when a new deal is observed
        without a reset. ``forget_opponents()`` clears it, for a new opponent."""
        if seed is not None or not hasattr(self, "rng"):
            self.seed = seed
            self.rng = np.random.default_rng(seed)
        if getattr(self, "st", None) is not None and self.used:
            self.seat_logprior = np.log(np.maximum(self.type_posterior(), 1e-6))
        elif not hasattr(self, "seat_logprior"):
            self.seat_logprior = np.tile(self.type_logprior, (self.num_players, 1))
        self.tracker.reset()
        self._action: int | None = None  # the seat's action since its last observation
        self.st: np.ndarray | None = None
        self.stock = np.zeros((self.particles, NUM_CARDS), dtype=np.int8)
        self.streams = np.zeros(self.particles, dtype=np.uint64)
        self.logw = np.zeros(self.particles)
        self.loglik = np.zeros((self.particles, self.num_players, len(self.types)))
        self.public = 0        # cards that were public this deal (pile, the seat's hand)
        self._clear_history()
        self.updates = 0       # observations taken in
        self.projections = 0   # of which projected
        self.repairs = 0       # worlds repaired
        self.resamples = 0
        self.accepted = 0      # rejuvenation moves accepted
        self.proposed = 0

    def forget_opponents(self) -> None:
        """The opponents changed: the type prior of every seat back to the model's own
        weights (``type_logprior``). Call it between deals (after ``reset``): what the
        current deal's worlds were weighed with stays in their weights."""
        self.seat_logprior = np.tile(self.type_logprior, (self.num_players, 1))
        self.loglik[:] = 0.0

    def opponent_prior(self) -> np.ndarray:
        """[n, types] log-probabilities: what is known of who each opponent is, from
        every deal since ``forget_opponents`` (this one's evidence included), the form
        ``set_opponent_prior`` takes. It holds no card of any deal."""
        if self.st is not None and self.used:
            return np.log(np.maximum(self.type_posterior(), 1e-6))
        return self.seat_logprior.copy()

    def set_opponent_prior(self, logprior) -> None:
        """Start from ``logprior`` ([n, types] log-probabilities, normalised per seat;
        ``opponent_prior``'s output) as what is known of who each opponent is. Call it
        before the deal's first observation."""
        z = np.asarray(logprior, dtype=np.float64)
        if z.shape != (self.num_players, len(self.types)):
            raise ValueError(f"an opponent prior of shape {z.shape}: expected "
                             f"{(self.num_players, len(self.types))}")
        self.seat_logprior = z - _lse(z)[:, None]

    def _clear_history(self) -> None:
        self.used = 0
        cap = 64
        self.dec_rows = np.zeros((cap, K.NF), dtype=np.int64)
        self.dec_mover = np.zeros(cap, dtype=np.int64)
        self.dec_action = np.zeros(cap, dtype=np.int64)
        self.dec_hand = np.zeros((self.particles, cap), dtype=np.int64)
        self.dec_logp = np.zeros((self.particles, cap, len(self.types)))

    @property
    def _state(self) -> np.ndarray:
        """The worlds' state rows (only once a deal has been observed)."""
        if self.st is None:
            raise ValueError("the belief has not observed this deal yet: call observe first")
        return self.st

    @property
    def ess(self) -> float:
        """Effective sample size of the weights, ``(sum w)^2 / sum w^2``."""
        w = self._weights()
        return float(1.0 / np.sum(w * w))

    def _weights(self) -> np.ndarray:
        lw = self.logw
        top = lw.max()
        if not np.isfinite(top):
            return np.full(self.particles, 1.0 / self.particles)
        w = np.exp(lw - top)
        return w / w.sum()

    # ------------------------------------------------------------------ updates
    def record(self, action: int) -> None:
        """The action the seat took at its last observation."""
        self.tracker.record(action)
        self._action = int(action)

    def observe(self, decoded: Mapping) -> None:
        """Take in the seat's next observation (``decode_observation``'s dict, v0 or v1)."""
        prev, action = self.tracker.prev, self._action
        new_deal = prev is None or not self.tracker._same_deal(prev, decoded)
        self.tracker.observe(decoded)
        self._action = None
        self.updates += 1
        events = None
        if "events" in decoded:
            if not decoded.get("events_dropped"):
                events = list(decoded["events"])
        elif self.num_players == 2:  # v0: rebuilt where the snapshot says it exactly
            if new_deal:
                events = v0_events.deal_start(decoded)
            elif action is not None and prev is not None:
                events = v0_events.window(prev, action, decoded, self.rules)
        ok = events is not None and self._observe_events(decoded, events)
        if not (ok and self._in_sync(decoded)):
            self._project(decoded)
        self.public |= mask_of(decoded["hand"]) | mask_of(decoded["discard"])

    def _observe_events(self, decoded: Mapping, events: list) -> bool:
        starts = [i for i, e in enumerate(events) if e[1] == "deal"]
        if starts:
            i = starts[-1]
            dealer = events[i][0]
            events = events[i + 1:]
            own = [e for e in events if e[0] == 0]
            if any(kind in ("draw", "penalty") for _, kind, _ in own):
                return False  # the seat drew before its first decision: hand unknown
            hand = mask_of(decoded["hand"]) | mask_of(v for _, kind, v in own
                                                      if kind == "play")
            if hand.bit_count() != 7:
                return False
            self._deal(dealer, hand)
        elif self.st is None:
            return False
        return self._replay(events, decoded)

    def _deal(self, dealer: int, hand: int) -> None:
        """Every world dealt anew at the start of a deal: the seat's hand ``hand``."""
        n, p = self.num_players, self.particles
        unseen = np.ones(NUM_CARDS, dtype=bool)
        unseen[[c for c in range(NUM_CARDS) if hand >> c & 1]] = False
        sizes = [7] * n
        flat = np.full((n - 1, NUM_CARDS), 1.0)
        hands, stocks = sample_hidden_batch(flat, sizes, unseen, self.rng, p)
        st = np.zeros((p, K.NF), dtype=np.int64)
        st[:, K.DEALER] = dealer
        st[:, K.HAND] = hand
        st[:, K.HAND + 1:K.HAND + n] = hands
        st[:, K.SPOS] = 0
        st[:, K.SLEN] = stocks.shape[1]
        st[:, K.TOP] = -1
        st[:, K.PHASE] = K.OPENING
        st[:, K.DIR] = 1
        st[:, K.CUR] = (dealer + 1) % n
        st[:, K.LAST] = (dealer + 1) % n
        self.stock[:] = 0
        self.stock[:, :stocks.shape[1]] = stocks
        if self.st is not None and self.used:
            self.seat_logprior = np.log(np.maximum(self.type_posterior(), 1e-6))
        self.st = st
        W.refresh_legal(self._state, self.cfg)
        self.streams[:] = self.rng.integers(1, 2**63, size=p, dtype=np.uint64)
        self.logw[:] = 0.0
        self.loglik[:] = 0.0
        self.public = hand
        self._clear_history()

    def _replay(self, events, decoded: Mapping) -> bool:
        """Apply a window's events to every world; False when they do not fit."""
        st = self._state
        hand_now = mask_of(decoded["hand"])
        own_played = mask_of(v for seat, kind, v in events if seat == 0 and kind == "play")
        before = int(st[0, K.HAND])
        drawn = (hand_now | own_played) & ~before
        queue = [c for c in range(NUM_CARDS) if drawn >> c & 1]
        self.rng.shuffle(queue)
        for seat, kind, value in events:
            if kind == "deal" or not self._live_at(seat):
                return False
            if kind in ("draw", "penalty"):
                actions = [DRAW] * (value if kind == "draw" else 1)
            elif kind == "play":
                actions = [value]
            elif kind == "nominate":
                actions = [NOMINATE_BASE + value]
            else:
                actions = [PASS]
            if seat == 0:
                if kind in ("draw", "penalty"):
                    if len(queue) < value:
                        return False
                    cards = np.array(queue[:value], dtype=np.int64)
                    del queue[:value]
                    W.place_own_draws(st, self.stock, self.streams, self.cfg, cards,
                                      np.int64(self.public), self._hist(), self._repaired)
                    self._count_repairs()
                    self.public |= mask_of(cards)
                for a in actions:
                    if not self._step(a):
                        return False
            else:
                for a in actions:
                    if not self._live_at(seat) or not self._decide(a):
                        return False
            if kind == "play":
                self.public |= 1 << value
        return not queue

    def _live_at(self, seat: int) -> bool:
        st = self._state
        live = st[:, K.OVER] == 0
        return bool(live.any()) and bool((st[live, K.CUR] == seat).all())

    def _count_repairs(self) -> None:
        rep = self._repaired
        self.repairs += int((rep == 1).sum())
        self.logw[rep == 2] = -np.inf

    def _step(self, action: int) -> bool:
        charges, winners, rewards = self._scratch
        live = self._state[:, K.OVER] == 0
        if not ((self._state[live, K.LEGAL] >> action) & 1).all():
            return False
        W.step_worlds(self._state, self.stock, self.streams, self.cfg, np.int64(action),
                      charges, winners, rewards)
        return True

    def _decide(self, action: int) -> bool:
        """An opponent decision: repair, weigh by the model, record, step."""
        st = self._state
        W.repair_for_action(st, self.stock, self.streams, self.cfg, np.int64(action),
                            np.int64(self.public), self._hist(), self._repaired)
        self._count_repairs()
        mover = int(st[np.argmax(st[:, K.OVER] == 0), K.CUR])
        actions = np.full(self.particles, action, dtype=np.int64)
        logp = self._type_logp(st, actions)
        logp[self._repaired == 2] = -np.inf
        self._record(mover, action, logp)
        prior = self.seat_logprior[mover]
        before = _lse(prior + self.loglik[:, mover])
        self.loglik[:, mover] += logp
        after = _lse(prior + self.loglik[:, mover])
        with np.errstate(invalid="ignore"):
            self.logw += np.where(np.isfinite(after), after - before, -np.inf)
        if not np.isfinite(self.logw).any():
            return False  # no world can explain the move
        live = np.isfinite(self.logw)
        st[~live, K.OVER] = 1  # dead worlds are skipped until resampled away
        if not self._step(action):
            return False
        if self.ess < self.ess_threshold * self.particles or not live.all():
            self._resample()
        return True

    def _hist(self) -> tuple:
        """The recorded decisions as the repair kernels read them."""
        return (self.dec_rows, self.dec_mover, self.dec_action, self.dec_hand,
                np.int64(self.used))

    def _type_logp(self, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """log P(action | row) under each opponent type: [K, types]."""
        out = np.empty((rows.shape[0], len(self.types)))
        with np.errstate(divide="ignore"):
            for j, m in enumerate(self.types):
                out[:, j] = np.log(m.probs(rows, actions, self.cfg))
        return out

    def type_posterior(self) -> np.ndarray:
        """[n, types]: per opponent seat (row 0, the seat itself, unused), the
        probability of each type of the opponent model given the deal so far."""
        w = self._weights()
        z = self.seat_logprior[None] + self.loglik
        z = z - z.max(axis=2, keepdims=True)
        post = np.exp(z)
        post /= post.sum(axis=2, keepdims=True)
        return np.nan_to_num(np.einsum("p,pkj->kj", w, post), nan=1.0 / len(self.types))

    def world_type_posterior(self, idx: np.ndarray) -> np.ndarray:
        """[len(idx), n, types]: in each world of ``idx``, each opponent's type posterior
        given the moves it made in that world (the weights ``logw`` are its sum)."""
        z = self.seat_logprior[None] + self.loglik[np.asarray(idx)]
        z = z - z.max(axis=2, keepdims=True)
        post = np.exp(z)
        return post / post.sum(axis=2, keepdims=True)

    def _record(self, mover: int, action: int, logp: np.ndarray) -> None:
        t = self.used
        if t == MAX_DECISIONS:  # keep the latest half
            half = MAX_DECISIONS // 2
            for name in ("dec_rows", "dec_mover", "dec_action"):
                arr = getattr(self, name)
                arr[:half] = arr[half:t]
            self.dec_hand[:, :half] = self.dec_hand[:, half:t]
            self.dec_logp[:, :half] = self.dec_logp[:, half:t]
            t = self.used = half
        if t == self.dec_mover.shape[0]:
            cap = 2 * t
            self.dec_rows = np.concatenate([self.dec_rows, np.zeros_like(self.dec_rows)])
            self.dec_mover = np.concatenate([self.dec_mover, np.zeros(t, np.int64)])
            self.dec_action = np.concatenate([self.dec_action, np.zeros(t, np.int64)])
            self.dec_hand = np.concatenate([self.dec_hand, np.zeros_like(self.dec_hand)],
                                           axis=1)
            self.dec_logp = np.concatenate([self.dec_logp, np.zeros_like(self.dec_logp)],
                                           axis=1)
            assert self.dec_mover.shape[0] == cap
        live = np.flatnonzero(self._state[:, K.OVER] == 0)
        self.dec_rows[t] = self._state[live[0] if live.size else 0]
        self.dec_mover[t] = mover
        self.dec_action[t] = action
        self.dec_hand[:, t] = self._state[:, K.HAND + mover]
        self.dec_logp[:, t] = logp
        self.used = t + 1

    # ------------------------------------------------------------------ resampling
    def _resample(self) -> None:
        w = self._weights()
        p = self.particles
        positions = (self.rng.random() + np.arange(p)) / p
        idx = np.minimum(np.searchsorted(np.cumsum(w), positions), p - 1)
        self.st = np.ascontiguousarray(self._state[idx])
        self.stock = np.ascontiguousarray(self.stock[idx])
        self.dec_hand = np.ascontiguousarray(self.dec_hand[idx])
        self.dec_logp = np.ascontiguousarray(self.dec_logp[idx])
        self.loglik = np.ascontiguousarray(self.loglik[idx])
        self.logw[:] = 0.0
        self.streams[:] = self.rng.integers(1, 2**63, size=p, dtype=np.uint64)
        W.shuffle_stocks(self._state, self.stock, self.streams)
        self.resamples += 1
        self._rejuvenate()

    def _rejuvenate(self) -> None:
        """``moves`` MH sweeps of card-name exchanges (see the module docstring)."""
        used = self.used
        if not used:
            return
        p = self.particles
        xs = np.empty(p, dtype=np.int64)
        ys = np.empty(p, dtype=np.int64)
        counts = np.empty(p, dtype=np.int64)
        n = self.num_players
        for _ in range(self.moves):
            W.propose_swaps(self._state, self.stock, self.streams, self.cfg,
                            np.int64(self.public), self.dec_mover, self.dec_hand, used,
                            xs, ys, counts)
            total = int(counts.sum())
            proposing = counts > 0
            self.proposed += int(proposing.sum())
            if total:
                rows = np.empty((total, K.NF), dtype=np.int64)
                worlds = np.empty(total, dtype=np.int64)
                times = np.empty(total, dtype=np.int64)
                W.swapped_rows(self.dec_rows, self.dec_mover, self.dec_hand, used, xs, ys,
                               counts, self.cfg, rows, worlds, times)
                new = self._type_logp(rows, self.dec_action[times])
                old = self.dec_logp[worlds, times]
                impossible = np.zeros(p, dtype=bool)
                impossible[worlds[~np.isfinite(new).any(axis=1)]] = True
                with np.errstate(invalid="ignore"):
                    diff = np.where(np.isfinite(new) & np.isfinite(old), new - old, 0.0)
                d_loglik = np.zeros_like(self.loglik)
                np.add.at(d_loglik, (worlds, self.dec_mover[times]), diff)
                prior = self.seat_logprior[None]
                delta = (_lse(prior + self.loglik + d_loglik)
                         - _lse(prior + self.loglik)).sum(axis=1)
                delta[impossible] = -np.inf
            else:
                delta = np.zeros(p)
            with np.errstate(invalid="ignore"):
                accept = proposing & (np.log(self.rng.random(p)) < delta)
            W.apply_swaps(self._state, self.stock, xs, ys, accept, n, self.dec_hand, used)
            if total:
                hit = accept[worlds]
                self.dec_logp[worlds[hit], times[hit]] = new[hit]
                self.loglik[accept] += d_loglik[accept]
            self.accepted += int(accept.sum())
        W.refresh_legal(self._state, self.cfg)

    # ------------------------------------------------------------------ projection
    def _project(self, decoded: Mapping) -> None:
        """Rebuild the worlds at this observation, keeping what they still can."""
        from agents.belief.state_from_obs import ObservedPosition

        self.projections += 1
        if self.st is not None and self.used:  # who the opponents are survives the rebuild
            self.seat_logprior = np.log(np.maximum(self.type_posterior(), 1e-6))
        n, p = self.num_players, self.particles
        position = ObservedPosition(decoded, self.rules.replace(num_deals=1),
                                    void_weight=None)
        row = position_row(position, self.tracker.own_drew_on)
        sizes = list(decoded["hand_sizes"])
        unseen = np.zeros(NUM_CARDS, dtype=bool)
        unseen[position.unseen] = True
        forbidden = self.tracker.void[1:] if self.tracker.void.any() else None
        old = self.st
        keep = None
        if old is not None and self._same_deal_as(decoded):
            idx = self.rng.choice(p, size=p, p=self._weights())
            keep = old[idx, K.HAND + 1:K.HAND + n] & mask_of(position.unseen)
        hands, stocks = self._deal_keeping(keep, sizes, unseen, forbidden)
        st = np.repeat(row[None, :], p, axis=0)
        st[:, K.HAND + 1:K.HAND + n] = hands
        st[:, K.SPOS] = 0
        st[:, K.SLEN] = stocks.shape[1]
        self.stock[:] = 0
        self.stock[:, :stocks.shape[1]] = stocks
        self.st = st
        W.refresh_legal(self._state, self.cfg)
        self.streams[:] = self.rng.integers(1, 2**63, size=p, dtype=np.uint64)
        self.logw[:] = 0.0
        self.loglik[:] = 0.0
        self._clear_history()

    def _same_deal_as(self, decoded: Mapping) -> bool:
        st = self._state
        pile = int(st[0, K.PILE])
        now = mask_of(decoded["discard"])
        return (pile & ~now) == 0 and not self.rules.empty_stock == "reshuffle" \
            and int(st[0, K.SLEN] - st[0, K.SPOS]) >= decoded["stock_size"]

    def _deal_keeping(self, keep, sizes, unseen, forbidden):
        """Hands [P, n-1] and stocks [P, S]: each world's ``keep`` cards (trimmed at
        random to the hand size), the rest of each hand from the unseen cards not kept."""
        n, p = self.num_players, self.particles
        if keep is None:
            flat = np.ones((n - 1, NUM_CARDS))
            return sample_hidden_batch(flat, sizes, unseen, self.rng, p, forbidden)
        hands = np.zeros((p, n - 1), dtype=np.int64)
        stock_size = int(unseen.sum()) - sum(sizes[1:])
        stocks = np.zeros((p, stock_size), dtype=np.int64)
        for b in range(p):
            avail = unseen.copy()
            kept_bits = []
            for k in range(n - 1):
                cards = np.flatnonzero((keep[b, k] >> _CARDS) & 1)
                if forbidden is not None:
                    cards = cards[~forbidden[k, cards]]
                if cards.size > sizes[k + 1]:
                    cards = self.rng.choice(cards, sizes[k + 1], replace=False)
                kept_bits.append(cards)
                avail[cards] = False
            for k in sorted(range(n - 1), key=lambda k: forbidden is None
                            or not forbidden[k].any()):
                need = sizes[k + 1] - kept_bits[k].size
                pool = np.flatnonzero(avail & (~forbidden[k] if forbidden is not None
                                               else True))
                if pool.size < need:
                    pool = np.flatnonzero(avail)
                extra = self.rng.choice(pool, need, replace=False) if need else pool[:0]
                avail[extra] = False
                hands[b, k] = int(_BITS[kept_bits[k]].sum() + _BITS[extra].sum())
            rest = np.flatnonzero(avail)
            stocks[b] = self.rng.permutation(rest)
        return hands, stocks

    def _in_sync(self, decoded: Mapping) -> bool:
        """Whether every live world shows the seat exactly this observation."""
        st = self.st
        if st is None:
            return False
        live = st[:, K.OVER] == 0
        if not live.any():
            return False
        s = st[live]
        n = self.num_players
        top = decoded["top_card"]
        expect = {
            K.CUR: 0, K.HAND: mask_of(decoded["hand"]), K.PILE: mask_of(decoded["discard"]),
            K.TOP: -1 if top is None else top, K.SUIT: decoded["active_suit"],
            K.PEND: decoded["pending_sevens"], K.PHASE: PHASE_NAMES.index(decoded["phase"]),
            K.DRAWN: int(decoded["has_drawn"]), K.DIR: decoded["direction"],
        }
        for field, value in expect.items():
            if not (s[:, field] == value).all():
                return False
        if not (s[:, K.SLEN] - s[:, K.SPOS] == decoded["stock_size"]).all():
            return False
        for k in range(1, n):
            if not (np.bitwise_count(s[:, K.HAND + k]) == decoded["hand_sizes"][k]).all():
                return False
            if not (s[:, K.DREW + k] == mask_of(decoded["drew_on_suit"][k - 1])).all():
                return False
        return True

    # ------------------------------------------------------------------ queries
    def _forbidden(self):
        return self.tracker.void[1:] if self.tracker.void.any() else None

    def belief(self, decoded: Mapping | None = None) -> np.ndarray:
        """Probabilities [n-1, 52] that each opponent holds each card: the weighted
        worlds, mixed with ``smoothing`` of the uniform deal."""
        st = self._state
        n = self.num_players
        bits = np.zeros((self.particles, n - 1, NUM_CARDS))
        W.hand_bits(st[:, K.HAND + 1:K.HAND + n], bits)
        marg = np.einsum("p,pkc->kc", self._weights(), bits)
        if not self.smoothing:
            return marg
        sizes = [int(st[0, K.HAND]).bit_count()] + [
            int(x) for x in np.bitwise_count(st[0, K.HAND + 1:K.HAND + n])]
        stock = int(st[0, K.SLEN] - st[0, K.SPOS])
        unseen = ~((int(st[0, K.PILE]) | int(st[0, K.HAND])) >> _CARDS & 1).astype(bool)
        flat = scale_belief(np.zeros((n - 1, NUM_CARDS)), sizes, stock, unseen,
                            self._forbidden())
        return (1.0 - self.smoothing) * marg + self.smoothing * flat

    def worlds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The population as it stands: hand masks [P, n] (seat 0 the observer), the
        stocks [P, S] (next card first) and the normalised weights [P]."""
        st = self._state
        n = self.num_players
        lo, hi = int(st[0, K.SPOS]), int(st[0, K.SLEN])
        return (st[:, K.HAND:K.HAND + n].copy(), self.stock[:, lo:hi].astype(np.int64),
                self._weights())

    def sample(self, count: int, rng: np.random.Generator, types: bool = False,
               type_temperature: float = 1.0) -> tuple:
        """``count`` determinizations in ``sample_hidden_batch``'s form: opponents' hand
        masks [count, n-1] and stocks [count, S] (next card first, shuffled afresh):
        worlds drawn by weight, a ``smoothing`` share from the uniform deal. With
        ``types``, also [count, n] type indices (of ``self.types``; column 0, the seat
        itself, -1): each opponent's type drawn from the type posterior of the world it
        was dealt from (``world_type_posterior``; a uniform-deal world from the seat's
        ``type_posterior``), so a rollout can play, in each world, the type that world
        was weighed with. ``type_temperature`` T draws from that posterior raised to
        1/T: 1 as it is, below 1 sharper, 0 its most probable type (the lowest index on
        a tie), so a spread posterior does not fill the rollouts with unlikely types."""
        if not 0.0 <= type_temperature <= 1e6:
            raise ValueError(f"type_temperature={type_temperature!r}: must be in 0..1e6")
        st = self._state
        if not 1 <= count <= 1 << 20:
            raise ValueError(f"count={count!r}: must be in 1..{1 << 20}")
        n = self.num_players
        idx = rng.choice(self.particles, size=count, p=self._weights())
        hands = st[idx, K.HAND + 1:K.HAND + n].copy()
        lo, hi = int(st[0, K.SPOS]), int(st[0, K.SLEN])
        stocks = rng.permuted(self.stock[idx, lo:hi].astype(np.int64), axis=1)
        flat = rng.random(count) < self.smoothing
        if flat.any():
            sizes = [int(st[0, K.HAND]).bit_count()] + [
                int(x) for x in np.bitwise_count(st[0, K.HAND + 1:K.HAND + n])]
            unseen = ~((int(st[0, K.PILE]) | int(st[0, K.HAND])) >> _CARDS & 1).astype(bool)
            h, s = sample_hidden_batch(np.ones((n - 1, NUM_CARDS)), sizes, unseen, rng,
                                       int(flat.sum()), self._forbidden())
            hands[flat] = h
            stocks[flat] = s
        if not types:
            return hands, stocks
        post = self.world_type_posterior(idx)
        if flat.any():
            post[flat] = self.type_posterior()[None]
        if type_temperature == 0.0:
            kinds = post.argmax(axis=2)
            kinds[:, 0] = -1
            return hands, stocks, kinds
        if type_temperature != 1.0:
            z = np.log(np.maximum(post, 1e-300)) / type_temperature
            post = np.exp(z - z.max(axis=2, keepdims=True))
        cum = np.cumsum(post, axis=2)
        u = rng.random((count, n, 1)) * cum[:, :, -1:]
        kinds = np.minimum((cum < u).sum(axis=2), len(self.types) - 1)
        kinds[:, 0] = -1
        return hands, stocks, kinds

    def __repr__(self) -> str:
        return (f"ParticleBelief(num_players={self.num_players}, particles={self.particles}, "
                f"opponent_model={self.model!r}, seed={self.seed})")


__all__ = ["MAX_MOVES", "MAX_PARTICLES", "ParticleBelief", "position_row"]
