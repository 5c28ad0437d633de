"""A belief over the hidden cards: for the player to move, the chance that each opponent
holds each card it has not seen, from public information only.

Why: a search that deals the hidden cards uniformly learns nothing from what the
opponents did (uniform determinizations are worth nothing against the
heuristic). The opponents' draws, plays, passes and nominations say a lot about their
hands; this module keeps that public history and turns it into probabilities.

* ``DealTracker`` remembers, from the observer's consecutive observations within a deal
  (a bot sees nothing else: ``act(observation)`` at its own turns) and the actions it
  took, what the opponents revealed: cards drawn, cards played (exactly at two players),
  the positions in which they drew instead of playing (every card that would have been
  legal then was "refused"), nominations after a Jack, and hard voids (an opener who
  drew in the opening holds no club until it draws again). A new deal is detected from
  the observation (cards never leave the pile or the observer's hand otherwise).
* ``pair_features`` turns one position into a feature row per (opponent, unseen card).
* ``BeliefModel``: a small MLP (numpy inference, weights from ``models/belief_2p.pt`` /
  ``belief_4p.pt``, trained by ``python -m train.belief``) scores each row; per card, a
  softmax over its possible holders (every opponent and the stock, with the hand sizes
  as priors), then matrix scaling (Sinkhorn) so that each opponent's row sums to its hand
  size and each card's column to one.
* ``uniform_belief`` and ``hint_belief`` (today's ``drew_on_suit`` hints as in
  ``agents.mc``) are the baselines it is measured against.
* ``sample_hidden`` deals the unseen cards from a belief: exact hand sizes, only unseen
  cards, never a card an opponent cannot hold (hard voids).

Seats are relative, as in the observation: opponent ``k`` (1..n-1) is the ``k``-th player
to the observer's left; belief matrices have one row per opponent (row ``k - 1``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from pis_env.cards import NUM_CARDS
from pis_env.engine import DRAW, NOMINATE_BASE, PASS

JACK, SEVEN = 9, 5
#: Relative weight of a card of a hinted suit
#: (``agents.belief.state_from_obs.DEFAULT_VOID_WEIGHT``).
HINT_WEIGHT = 0.15
_CARDS = np.arange(NUM_CARDS)
_SUIT = _CARDS // 13
_RANK = _CARDS % 13
_POINTS = np.array([20 if r == SEVEN else 25 if r == JACK else 15 if r == 12 else
                    10 if r in (10, 11) else r + 2 for r in _RANK], dtype=np.float32)

FEATURE_NAMES = (
    [f"suit_{s}" for s in range(4)] + [f"rank_{r}" for r in range(13)]
    + ["points", "is_active_suit", "is_top_rank", "is_top_suit",
       "stock", "unseen", "my_hand", "pending", "players",
       "opp_size", "base_rate", "is_next", "is_prev", "opp_drawn", "opp_played",
       "hint", "hint_age", "hint_count", "played_suit", "played_rank",
       "nominated", "nominated_age", "refused", "refused_age", "hard_void",
       "unseen_of_suit", "last_play_suit"]
)
NUM_FEATURES = len(FEATURE_NAMES)


def _mask_bits(cards) -> np.ndarray:
    out = np.zeros(NUM_CARDS, dtype=bool)
    out[list(cards)] = True
    return out


def legal_cards(top: int | None, suit: int, pending: int) -> np.ndarray:
    """The cards a player could play facing ``top`` / active ``suit`` (bool [52])."""
    if pending:
        return _RANK == SEVEN
    if top is None:
        return _SUIT == 0
    if top % 13 == JACK:
        return (_SUIT == suit) & (_RANK != JACK)
    return (_SUIT == suit) | (_RANK == top % 13) | (_RANK == JACK)


class DealTracker:
    """The public history of the current deal, from one seat's consecutive observations.

    Call ``observe(decoded)`` with every observation the seat is shown (also those with a
    single legal action) and ``record(action)`` with the action it then took. Everything
    it keeps is public: counts of cards drawn and played, which cards hit the pile, the
    hand sizes and hints of the observation."""

    def __init__(self, num_players: int, reshuffle: bool = False):
        self.num_players = num_players
        self.reshuffle = reshuffle
        self.reset()

    def reset(self) -> None:
        n = self.num_players
        self.prev: Mapping | None = None
        self.action: int | None = None
        self.drawn = np.zeros(n)                      # cards each seat drew (opponents)
        self.played = np.zeros(n)                     # cards each seat played (2 players)
        self.hint_since = np.full((n, 4), -1.0)       # drawn[k] when the hint appeared
        self.played_suit = np.zeros((n, 4))
        self.played_rank = np.zeros((n, 13))
        self.nominated = np.zeros((n, 4))
        self.nominated_at = np.zeros(n)
        self.last_suit = np.zeros((n, 4))             # suit of each seat's latest play
        self.refused = np.zeros((n, NUM_CARDS), dtype=bool)
        self.refused_at = np.zeros((n, NUM_CARDS))
        self.void = np.zeros((n, NUM_CARDS), dtype=bool)
        self.void_at = np.zeros(n)
        self.own_drew_on = 0

    # ------------------------------------------------------------------ deal boundaries
    def _same_deal(self, prev: Mapping, new: Mapping) -> bool:
        if len(prev["hand_sizes"]) != len(new["hand_sizes"]):
            return False
        if prev.get("deal", 0) != new.get("deal", 0):
            return False
        kept = set(prev["hand"])
        if self.action is not None and self.action < NUM_CARDS:
            kept.discard(self.action)
        if not kept.issubset(new["hand"]):
            return False  # a card left the observer's hand without being played
        if self.reshuffle:
            return True
        return set(prev["discard"]).issubset(new["discard"]) and \
            new["stock_size"] <= prev["stock_size"]

    # ------------------------------------------------------------------ updates
    def observe(self, new: Mapping) -> None:
        """Take in the seat's next observation (``decode_observation``'s dict)."""
        prev = self.prev
        if prev is not None and not self._same_deal(prev, new):
            self.reset()
            prev = None
        n = self.num_players
        if prev is None:
            self._first(new)
        else:
            self._update(prev, new)
        for k in range(1, n):
            hints = new["drew_on_suit"][k - 1]
            for s in range(4):
                if s in hints:
                    if self.hint_since[k, s] < 0:
                        self.hint_since[k, s] = self.drawn[k]
                else:
                    self.hint_since[k, s] = -1.0
            if self.void[k].any() and self.drawn[k] > self.void_at[k]:
                self.void[k] = False  # it drew since: the drawn cards may be anything
        self.prev = new
        self.action = None

    def _first(self, new: Mapping) -> None:
        """The first observation of a deal: what the opening already revealed."""
        n = self.num_players
        sizes = new["hand_sizes"]
        if n == 2 and len(new["discard"]) == 1:
            # The opponent opened (the observer's first turn comes after the opening
            # club). If it drew first, it drew until it held a club and then had to play
            # it: it holds no club now.
            self.drawn[1] = sizes[1] - 6
            self.played[1] = 1
            if self.drawn[1] > 0:
                self.void[1] = _SUIT == 0
                self.void_at[1] = self.drawn[1]
            c = new["discard"][0]
            self.played_suit[1, c // 13] += 1
            self.played_rank[1, c % 13] += 1
        else:
            for k in range(1, n):
                self.drawn[k] = max(0, sizes[k] - 7)

    def _faced(self, prev: Mapping, action: int):
        """The position the next player faced after the observer's ``action``: (top,
        suit, pending), or None when the observer's turn went on."""
        top, suit, pending = prev["top_card"], prev["active_suit"], prev["pending_sevens"]
        if action < NUM_CARDS:
            if action % 13 in (JACK, 12) or (action % 13 == 6 and self.num_players == 2):
                return None  # nomination, the Ace's extra play, or an 8 skipping the lone opponent
            return action, action // 13, pending + 1 if action % 13 == SEVEN else 0
        if NOMINATE_BASE <= action < DRAW:
            return top, action - NOMINATE_BASE, 0
        if action == PASS:
            return top, suit, 0
        if action == DRAW and pending:
            return top, suit, 0
        return None

    def _update(self, prev: Mapping, new: Mapping) -> None:
        n = self.num_players
        action = self.action
        mine = {action} if action is not None and action < NUM_CARDS else set()
        new_cards = set(new["discard"]) - set(prev["discard"]) - mine
        deltas = [new["hand_sizes"][k] - prev["hand_sizes"][k] for k in range(n)]
        drawn_before = self.drawn.copy()
        if n == 2:
            draws = max(0, deltas[1] + len(new_cards))
            self.drawn[1] += draws
            self.played[1] += len(new_cards)
            for c in new_cards:
                self.played_suit[1, c // 13] += 1
                self.played_rank[1, c % 13] += 1
        else:
            for k in range(1, n):
                self.drawn[k] += max(0, deltas[k])
        top = new["top_card"]
        if top is not None and top in new_cards and top % 13 != JACK:
            # The last card played came from the player just before the observer (two
            # before after an 8 at a bigger table).
            back = 2 if top % 13 == 6 and n > 2 else 1
            k = (-back * new["direction"]) % n
            if k:
                self.last_suit[k] = 0.0
                self.last_suit[k, top // 13] = 1.0
        if (top is not None and top % 13 == JACK and top in new_cards
                and new["phase"] != "nominate"):
            k = (-new["direction"]) % n  # the nominator moved just before the observer
            if k:
                self.nominated[k] = 0.0
                self.nominated[k, new["active_suit"]] = 1.0
                self.nominated_at[k] = self.drawn[k]
        faced = self._faced(prev, action) if action is not None else None
        if action is not None and faced is not None:
            self._refusals(prev, action, faced, deltas, bool(new_cards), drawn_before)

    def _refusals(self, prev: Mapping, action: int, faced: tuple, deltas: list[int],
                  played: bool, drawn_before: np.ndarray) -> None:
        """Walk the opponents in turn order from the first to move after the observer:
        while each one only drew (its hand grew by one, or grew while nobody played) the
        position stayed the same for the next, and each "refused" every card it could
        have played there (facing sevens: it took the penalty, so it held no 7). The walk
        stops at the first opponent that may have played."""
        n = self.num_players
        top, suit, pending = faced
        d = prev["direction"]
        step = 1
        if action < NUM_CARDS and action % 13 == 8:
            d = -d  # a 10 turned play round
        elif action < NUM_CARDS and action % 13 == 6:
            step = 2  # an 8 skipped the next player
        k = (step * d) % n
        for _ in range(n - 1):
            if k == 0:
                break
            delta = deltas[k]
            if pending:
                if delta < 3:
                    break  # it answered with a 7
            elif not (delta == 1 or (delta > 0 and not played)):
                break
            refused = legal_cards(top, suit, pending)
            self.refused[k] |= refused
            self.refused_at[k, refused] = drawn_before[k]
            pending = 0
            k = (k + d) % n

    def record(self, action: int) -> None:
        """The action the seat took at its last observation."""
        self.action = int(action)
        prev = self.prev
        if prev is None:
            return
        if action < NUM_CARDS:
            self.own_drew_on &= ~(1 << (action // 13))
        elif action == DRAW and not prev["pending_sevens"]:
            self.own_drew_on |= 1 << prev["active_suit"]


def pair_features(decoded: Mapping, tracker: DealTracker) -> tuple[np.ndarray, np.ndarray]:
    """Feature rows [n-1, 52, F] (float32) for every (opponent, card), and the unseen-card
    mask [52]. Rows of seen cards are zeros."""
    n = len(decoded["hand_sizes"])
    sizes = np.asarray(decoded["hand_sizes"], dtype=np.float32)
    seen = _mask_bits(decoded["hand"]) | _mask_bits(decoded["discard"])
    unseen = ~seen
    u = float(unseen.sum()) or 1.0
    top = decoded["top_card"]
    suit = decoded["active_suit"]
    direction = decoded["direction"]
    f = np.zeros((n - 1, NUM_CARDS, NUM_FEATURES), dtype=np.float32)
    f[:, _CARDS, _SUIT] = 1.0
    f[:, _CARDS, 4 + _RANK] = 1.0
    f[:, :, 17] = _POINTS / 25.0
    f[:, :, 18] = _SUIT == suit
    if top is not None:
        f[:, :, 19] = (_RANK == top % 13)
        f[:, :, 20] = (_SUIT == top // 13)
    f[:, :, 21] = decoded["stock_size"] / 52.0
    f[:, :, 22] = u / 52.0
    f[:, :, 23] = sizes[0] / 52.0
    f[:, :, 24] = decoded["pending_sevens"] > 0
    f[:, :, 25] = (n - 2) / 5.0
    unseen_suit = np.array([(unseen & (_SUIT == s)).sum() for s in range(4)]) / 13.0
    t = tracker
    for k in range(1, n):
        row = f[k - 1]
        row[:, 26] = sizes[k] / 52.0
        row[:, 27] = sizes[k] / u
        row[:, 28] = k == direction % n
        row[:, 29] = k == (-direction) % n
        row[:, 30] = t.drawn[k] / 20.0
        row[:, 31] = t.played[k] / 20.0
        hints = decoded["drew_on_suit"][k - 1]
        hint = np.isin(_SUIT, hints)
        row[:, 32] = hint
        age = np.where(t.hint_since[k] >= 0, t.drawn[k] - t.hint_since[k], 0.0)
        row[:, 33] = age[_SUIT] / 10.0 * hint
        row[:, 34] = len(hints) / 4.0
        row[:, 35] = t.played_suit[k, _SUIT] / 5.0
        row[:, 36] = t.played_rank[k, _RANK] / 2.0
        row[:, 37] = t.nominated[k, _SUIT]
        row[:, 38] = t.nominated[k, _SUIT] * (t.drawn[k] - t.nominated_at[k]) / 10.0
        row[:, 39] = t.refused[k]
        row[:, 40] = t.refused[k] * (t.drawn[k] - t.refused_at[k]) / 10.0
        row[:, 41] = t.void[k]
        row[:, 42] = unseen_suit[_SUIT]
        row[:, 43] = t.last_suit[k, _SUIT]
    f[:, seen] = 0.0
    return f, unseen


# ---------------------------------------------------------------------- beliefs
def scale_belief(logits: np.ndarray, sizes, stock: int, unseen: np.ndarray,
                 forbidden: np.ndarray | None = None, iterations: int = 30) -> np.ndarray:
    """Probabilities [n-1, 52] from per-(opponent, card) log-odds against the stock:
    each card's holders (opponents and stock) sum to one, each opponent's row to its hand
    size (Sinkhorn scaling, starting from a per-card softmax with the sizes as priors).
    ``forbidden`` [n-1, 52] cards an opponent cannot hold get probability 0."""
    sizes = np.asarray(sizes[1:], dtype=np.float64)
    w = np.exp(np.clip(logits.astype(np.float64), -30, 30))
    w *= sizes[:, None]
    w[:, ~unseen] = 0.0
    if forbidden is not None:
        w[forbidden] = 0.0
    ws = np.where(unseen, float(stock), 0.0)
    total = w.sum(axis=0) + ws
    total[total == 0] = 1.0
    p, ps = w / total, ws / total
    for _ in range(iterations):
        rows = p.sum(axis=1)
        p *= np.where(rows > 0, sizes / np.maximum(rows, 1e-12), 0.0)[:, None]
        srow = ps.sum()
        if srow > 0:
            ps *= stock / srow
        col = p.sum(axis=0) + ps
        col[col == 0] = 1.0
        p /= col
        ps /= col
    return p


def uniform_belief(decoded: Mapping, tracker: DealTracker | None = None) -> np.ndarray:
    """Every unseen card equally likely in every hidden place: size_k / unseen."""
    n = len(decoded["hand_sizes"])
    unseen = ~(_mask_bits(decoded["hand"]) | _mask_bits(decoded["discard"]))
    return scale_belief(np.zeros((n - 1, NUM_CARDS)), decoded["hand_sizes"],
                        decoded["stock_size"], unseen, iterations=1)


def hint_belief(decoded: Mapping, tracker: DealTracker | None = None,
                weight: float = HINT_WEIGHT) -> np.ndarray:
    """Today's ``drew_on_suit`` hints: a card of a suit an opponent drew on is ``weight``
    times as likely in its hand (the weighting ``agents.mc`` deals with)."""
    n = len(decoded["hand_sizes"])
    unseen = ~(_mask_bits(decoded["hand"]) | _mask_bits(decoded["discard"]))
    logits = np.zeros((n - 1, NUM_CARDS))
    for k in range(1, n):
        hint = np.isin(_SUIT, decoded["drew_on_suit"][k - 1])
        logits[k - 1, hint] = np.log(weight)
    return scale_belief(logits, decoded["hand_sizes"], decoded["stock_size"], unseen)


class BeliefModel:
    """The trained belief: an MLP over ``pair_features`` rows (numpy inference)."""

    def __init__(self, weights: list[tuple[np.ndarray, np.ndarray]], mean: np.ndarray,
                 std: np.ndarray, meta: dict | None = None):
        self.weights = [(np.asarray(w, np.float32), np.asarray(b, np.float32))
                        for w, b in weights]
        self.mean = np.asarray(mean, np.float32)
        self.std = np.asarray(std, np.float32)
        self.meta = dict(meta or {})

    @classmethod
    def load(cls, path: str | Path) -> BeliefModel:
        from agents.common.weights_file import load_weights_file

        data = load_weights_file(path)
        if data.get("kind") != "belief" or data.get("features") != ",".join(FEATURE_NAMES):
            raise ValueError(f"{path}: not a belief model with this module's features")
        layers = int(data["layers"])
        weights = [(data[f"w{i}"].numpy(), data[f"b{i}"].numpy()) for i in range(layers)]
        meta = {k: v for k, v in data.items() if isinstance(v, (str, int, float))}
        return cls(weights, data["mean"].numpy(), data["std"].numpy(), meta)

    def logits(self, features: np.ndarray) -> np.ndarray:
        """Log-odds (opponent vs stock, before the size prior) for rows [..., F]."""
        shape = features.shape[:-1]
        x = (features.reshape(-1, features.shape[-1]) - self.mean) / self.std
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(self.weights):
            x = x @ w + b
            if i < last:
                x = np.maximum(x, 0.0)
        return x.reshape(shape)

    def __call__(self, decoded: Mapping, tracker: DealTracker) -> np.ndarray:
        """Probabilities [n-1, 52] that each opponent holds each card."""
        feats, unseen = pair_features(decoded, tracker)
        logits = self.logits(feats[:, unseen])
        full = np.zeros((feats.shape[0], NUM_CARDS))
        full[:, unseen] = logits
        forbidden = tracker.void[1:] if tracker.void.any() else None
        return scale_belief(full, decoded["hand_sizes"], decoded["stock_size"], unseen,
                            forbidden)


_MODELS: dict[str, BeliefModel] = {}


def model_path(num_players: int) -> Path:
    """The shipped model for a table: ``belief_2p.pt`` at two players, else
    ``belief_4p.pt`` (its features are per opponent, so it serves 3-7 players); found
    by ``pis_env.shipped``, in a checkout and in an installed wheel alike."""
    from pis_env.shipped import shipped_dir

    return shipped_dir("model") / ("belief_2p.pt" if num_players == 2 else "belief_4p.pt")


def load_model(num_players: int, path: str | Path | None = None) -> BeliefModel:
    """The belief model for a table (cached per file)."""
    from pis_env.shipped import resolve

    path = str(resolve(path, "model") if path else model_path(num_players))
    if path not in _MODELS:
        _MODELS[path] = BeliefModel.load(path)
    return _MODELS[path]


# ---------------------------------------------------------------------- sampling
_BIT_VALUES = np.left_shift(np.int64(1), _CARDS.astype(np.int64))


def sample_hidden_batch(belief: np.ndarray, sizes, unseen: np.ndarray,
                        rng: np.random.Generator, count: int,
                        forbidden: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``count`` deals of the unseen cards at once: hand masks [count, n-1] (int64) of
    opponents 1..n-1 and stocks [count, stock size] (card ids in random order).

    Opponents draw their exact hand sizes one after another, without replacement, each
    card with chance proportional to its belief (Gumbel top-k: the same law as
    successive weighted draws); cards in ``forbidden`` [n-1, 52] are never given to that
    opponent (those seats are dealt first; a row whose constraints cannot be met, which
    sound constraints never cause, falls back to the unseen cards)."""
    m = belief.shape[0]
    avail = np.broadcast_to(unseen, (count, NUM_CARDS)).copy()
    hands = np.zeros((count, m), dtype=np.int64)
    order = list(range(m))
    if forbidden is not None:
        order.sort(key=lambda k: not forbidden[k].any())
    logw = np.log(np.maximum(belief, 1e-6))
    for k in order:
        size = int(sizes[k + 1])
        if not size:
            continue
        ok = avail & ~forbidden[k] if forbidden is not None else avail
        short = ok.sum(axis=1) < size
        if short.any():
            ok[short] = avail[short]
        keys = np.where(ok, logw[k] + rng.gumbel(size=(count, NUM_CARDS)), -np.inf)
        chosen = np.argpartition(-keys, size - 1, axis=1)[:, :size]
        taken = np.zeros_like(avail)
        np.put_along_axis(taken, chosen, True, axis=1)
        avail &= ~taken
        hands[:, k] = (taken * _BIT_VALUES).sum(axis=1)
    stock_size = int(avail[0].sum())
    keys = np.where(avail, rng.random((count, NUM_CARDS)), 2.0)
    stocks = np.argsort(keys, axis=1, kind="stable")[:, :stock_size]
    return hands, stocks


def sample_hidden(belief: np.ndarray, sizes, unseen: np.ndarray, rng: np.random.Generator,
                  forbidden: np.ndarray | None = None) -> tuple[list[int], list[int]]:
    """One deal of :func:`sample_hidden_batch`: (hand masks of opponents 1..n-1, the
    stock as card ids in random order)."""
    hands, stocks = sample_hidden_batch(belief, sizes, unseen, rng, 1, forbidden)
    return [int(h) for h in hands[0]], stocks[0].tolist()


def log_loss(belief: np.ndarray, holders: np.ndarray, unseen: np.ndarray) -> float:
    """Mean over the unseen cards of -log P(the card's true place): opponent ``k`` (row
    ``k-1``) or the stock (``holders == 0``)."""
    p_stock = np.clip(1.0 - belief.sum(axis=0), 0.0, 1.0)
    cards = np.flatnonzero(unseen)
    h = holders[cards]
    p = np.where(h > 0, belief[np.maximum(h - 1, 0), cards], p_stock[cards])
    return float(-np.log(np.maximum(p, 1e-6)).mean())


def expected_correct(belief: np.ndarray, holders: np.ndarray) -> float:
    """The expected number of the opponents' cards a draw from ``belief`` places in the
    right hand (the sum of each held card's probability for its holder)."""
    cards = np.flatnonzero(holders > 0)
    return float(belief[holders[cards] - 1, cards].sum())


__all__ = [
    "BeliefModel", "DealTracker", "FEATURE_NAMES", "NUM_FEATURES", "expected_correct",
    "hint_belief", "legal_cards", "load_model", "log_loss", "model_path", "pair_features",
    "sample_hidden", "sample_hidden_batch", "scale_belief", "uniform_belief",
]
