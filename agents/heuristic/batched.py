"""The heuristic bot (``agents.heuristic.HeuristicAgent``) batched: one numba kernel call
decides for every game.

``choose`` of ``agents.heuristic`` is ported line by line to ``@njit(cache=True)`` code on
int64 bit masks, with the same float64 arithmetic in the same order (so equal scores tie
the same way: the lowest action id wins) and the same tie-breaks. The reference bot is
deterministic (it never draws from its RNG), so the batched one makes exactly its choices;
``tests/agents/heuristic/test_batched.py`` holds them equal on thousands of positions.

Two front ends feed the kernel the facts the reference reads from an observation:

* ``HeuristicPolicy(B)(game)``: straight from a ``BatchedGame``'s state arrays (the
  current player's hand, the discard pile, hand sizes and ``drew_on`` by relative seat:
  exactly what that player's observation holds), like ``GreedyPolicy``; ``-1`` where the
  match is over.
* ``HeuristicPolicy(B, rules)(obs, masks)``: from observation rows ([K, L] float or uint8,
  the layout of ``ObservationEncoder``) and int8 mask rows [K, 58], as
  ``agents.heuristic.ObservationReader`` reads them: the form ``BatchedEnv`` /
  ``BatchedVecEnv`` call for an external opponent (``policy(obs, masks) -> actions``).
  The rules (player count, and ``nominate``, the only option the bot looks at) come from
  the constructor, as for ``HeuristicAgent``.

Example::

    from agents.heuristic.batched import HeuristicPolicy
    from pis_env.batched import BatchedEnv, BatchedGame

    game = BatchedGame(1024, num_players=4, seed=0)
    bot = HeuristicPolicy(1024)
    result = game.step(bot(game), auto_reset=True)          # every seat heuristic
    env = BatchedEnv(1024, num_players=4, opponent=HeuristicPolicy(1024, game.rules))
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.heuristic.bot import DEFAULT_PARAMS, with_big_table
from pis_env.batched import kernels as K
from pis_env.batched.core import rules_vector
from pis_env.batched.kernels import lowbit_index, popcount
from pis_env.rules import Rules

FULL_DECK = (np.int64(1) << np.int64(K.NUM_CARDS)) - np.int64(1)
NOT_JACKS = FULL_DECK & ~K.JACKS
ACES = K.RANK_MASKS[K.ACE]
# Cards whose effect is lost on the opening club (agents.heuristic._OPENING_WASTE).
OPENING_WASTE = np.zeros(13, dtype=np.int64)
OPENING_WASTE[[K.JACK, K.SEVEN, K.ACE, K.EIGHT, K.TEN]] = (40, 14, 4, 3, 1)

# Entries of the ``params`` vector (``agents.heuristic.Params`` fields, in this order).
PARAM_NAMES = (
    "shed", "jack_keep", "draw_cost", "pass_cost", "follow", "stuck", "seven_attack",
    "seven_keep", "eight_again", "threat_effect", "ace_follow", "scarce", "void_hint",
    "finisher_jack", "finisher_seven", "finisher_other", "draw_big_stock", "jack_draw",
    "jack_draw_hand", "big_table",
)
(P_SHED, P_JACK_KEEP, P_DRAW_COST, P_PASS_COST, P_FOLLOW, P_STUCK, P_SEVEN_ATTACK,
 P_SEVEN_KEEP, P_EIGHT_AGAIN, P_THREAT, P_ACE_FOLLOW, P_SCARCE, P_VOID_HINT, P_FIN_JACK,
 P_FIN_SEVEN, P_FIN_OTHER, P_BIG_STOCK, P_JACK_DRAW, P_JACK_DRAW_HAND, P_BIG_TABLE) = range(20)
P_DANGER = 20  # three entries: shed weight when the closest opponent holds 1, 2, 3
NPARAMS = 23
STACK = 64     # scratch depth of the go-out search
# agents.heuristic.bot.BIG_TABLE and SHORT_STOCK, written here so that a change of them
# recompiles the cached kernels (test_batched holds them equal).
BIG_TABLE = 5
_FULL_STOCK, _SHORT_STOCK = 8, 3


def params_vector(params=None) -> np.ndarray:
    """The float64 vector the kernel reads from an ``agents.heuristic.Params`` (default:
    ``DEFAULT_PARAMS``). Every integer weight is exact in float64."""
    if params is None:
        params = DEFAULT_PARAMS
    vec = np.zeros(NPARAMS, dtype=np.float64)
    for i, name in enumerate(PARAM_NAMES):
        vec[i] = float(getattr(params, name))
    danger = tuple(params.danger)
    if len(danger) < 3:
        raise ValueError(f"params.danger needs 3 entries, got {danger!r}")
    vec[P_DANGER:P_DANGER + 3] = danger[:3]
    return vec


# ---------------------------------------------------------------------- the decision
@njit(cache=True, inline="always")
def _highbit(x):
    """Index of the highest set bit of a non-zero mask (``int.bit_length() - 1``)."""
    i = -1
    while x:
        i = lowbit_index(x)
        x &= x - 1
    return i


@njit(cache=True, inline="always")
def _threat(size):
    if size <= 1:
        return 1.0
    if size == 2:
        return 0.6
    if size == 3:
        return 0.25
    return 0.0


@njit(cache=True, inline="always")
def _mult_of(card):
    r = card % 13
    return 3 if r == K.SEVEN else 2 if r == K.JACK else 1


@njit(cache=True)
def _go_out_multiplier(hand, top_rank, suit, ace, two_player, stk):
    """``agents.heuristic._go_out_multiplier`` without recursion: the best leaf of the
    same search tree (depth-first over an explicit stack; the maximum does not depend on
    the order). ``stk`` is int64 scratch [STACK, 5]: hand, top rank, suit, ace, depth."""
    best = 0
    top = 0
    stk[0, 0] = hand
    stk[0, 1] = top_rank
    stk[0, 2] = suit
    stk[0, 3] = ace
    stk[0, 4] = 0
    top = 1
    while top > 0:
        top -= 1
        h = stk[top, 0]
        tr = stk[top, 1]
        su = stk[top, 2]
        ac = stk[top, 3]
        depth = stk[top, 4]
        if depth > 6:
            continue
        if ac:
            playable = h & (K.SUIT_MASKS[su] | ACES | K.JACKS)
        elif tr == K.JACK:
            playable = h & K.SUIT_MASKS[su] & NOT_JACKS
        else:
            playable = h & (K.SUIT_MASKS[su] | K.RANK_MASKS[tr] | K.JACKS)
        if playable == 0:
            continue
        if popcount(h) == 1:
            m = _mult_of(lowbit_index(h))
            if m > best:
                best = m
            continue
        rest_p = playable
        while rest_p:
            c = lowbit_index(rest_p)
            rest_p &= rest_p - 1
            r = c % 13
            if r == K.ACE:
                child_ace = 1
            elif r == K.EIGHT and two_player:
                child_ace = 0
            else:
                continue
            if top < STACK:
                stk[top, 0] = h ^ (np.int64(1) << np.int64(c))
                stk[top, 1] = r
                stk[top, 2] = c // 13
                stk[top, 3] = child_ace
                stk[top, 4] = depth + 1
                top += 1
    return best


@njit(cache=True, inline="always")
def _nomination_scores(hand, unseen, void_next, void_hint, out):
    """``agents.heuristic.nomination_scores`` into ``out[0:4]``."""
    for s in range(4):
        mine = hand & K.SUIT_MASKS[s] & NOT_JACKS
        pts = K.points_of(mine)
        score = 10.0 * popcount(mine) + 0.5 * pts
        others = popcount(unseen & K.SUIT_MASKS[s])
        score -= 1.0 * others
        if (void_next >> s) & 1:
            score += void_hint
        out[s] = score


@njit(cache=True, inline="always")
def _pmod(a, n):
    return ((a % n) + n) % n


@njit(cache=True, inline="always")
def _short_stock(stock):
    """``agents.heuristic.bot.short_stock``."""
    return max(0.0, min(1.0, (_FULL_STOCK - stock) / (_FULL_STOCK - _SHORT_STOCK)))


@njit(cache=True)
def choose(hand, legal, top, suit, pending, phase, has_drawn, direction, sizes, stock,
           seen, voids, n, nominate_other, P, stk, nom):
    """``agents.heuristic.choose`` (see there). ``sizes``/``voids`` int64 [n] by relative
    seat, ``direction`` +-1, ``P`` the params vector, ``stk``/``nom`` scratch."""
    cards = legal & FULL_DECK
    can_draw = (legal >> K.DRAW) & 1
    can_pass = (legal >> K.PASS) & 1
    if cards == 0 and ((legal >> K.NOMINATE_BASE) & 0b1111) == 0:
        if can_pass and (not can_draw or has_drawn):
            return K.PASS
        return K.DRAW if can_draw else K.PASS
    if cards != 0 and popcount(cards) == 1 and not can_draw and not can_pass:
        return lowbit_index(cards)

    unseen = FULL_DECK & ~seen & ~hand
    nxt = _pmod(direction, n)
    void_next = voids[nxt]

    if phase == K.NOMINATE:
        _nomination_scores(hand, unseen, void_next, P[P_VOID_HINT], nom)
        best = -1
        best_score = -1e18
        for s in range(4):
            if (legal >> (K.NOMINATE_BASE + s)) & 1 and nom[s] > best_score:
                best = s
                best_score = nom[s]
        return K.NOMINATE_BASE + best

    if phase == K.OPENING:
        best = -1
        best_iscore = -(1 << 60)
        m = cards
        while m:
            c = lowbit_index(m)
            m &= m - 1
            iscore = K.CARD_POINTS[c] - OPENING_WASTE[c % 13]
            if iscore > best_iscore:
                best = c
                best_iscore = iscore
        return best

    hand_size = popcount(hand)

    if pending:
        sevens = cards & K.SEVENS
        if sevens == 0:
            return K.DRAW
        if hand_size == 1:
            return _highbit(sevens)
        best = -1
        best_iscore = -(1 << 60)
        m = sevens
        while m:
            c = lowbit_index(m)
            m &= m - 1
            rest = hand ^ (np.int64(1) << np.int64(c))
            iscore = popcount(rest & K.SUIT_MASKS[c // 13] & NOT_JACKS)
            if iscore > best_iscore:
                best = c
                best_iscore = iscore
        return best

    two_player = n == 2
    ace = phase == K.ACE_PHASE

    # 1. Go out now, or within this turn through Aces / 8s (best multiplier).
    if hand_size <= 5:
        best = -1
        best_mult = 0
        m = cards
        while m:
            c = lowbit_index(m)
            m &= m - 1
            rest = hand ^ (np.int64(1) << np.int64(c))
            r = c % 13
            if rest == 0:
                mult = _mult_of(c)
            elif r == K.ACE:
                mult = _go_out_multiplier(rest, r, c // 13, 1, two_player, stk)
            elif r == K.EIGHT and two_player:
                mult = _go_out_multiplier(rest, r, c // 13, 0, two_player, stk)
            else:
                mult = 0
            if mult > best_mult:
                best = c
                best_mult = mult
        if best >= 0:
            return best

    closest = 7
    if n > 1:
        closest = sizes[1]
        for k in range(2, n):
            if sizes[k] < closest:
                closest = sizes[k]
    # 2. Only Jacks fit and the stock is large: draw and keep the escape card.
    if (P[P_JACK_DRAW] != 0.0 and not ace and not has_drawn and can_draw
            and (cards & NOT_JACKS) == 0 and stock >= P[P_BIG_STOCK]
            and hand_size >= P[P_JACK_DRAW_HAND] and closest >= 3):
        return K.DRAW

    # 3. Score every card play against drawing / passing.
    jack_keep = P[P_JACK_KEEP]
    shed_w = P[P_SHED]
    if P[P_BIG_TABLE] != 0.0 and n >= BIG_TABLE:
        pressure = _short_stock(stock)
        jack_keep *= 1.0 - pressure
        shed_w *= 1.0 + pressure
    if closest <= 3:
        shed_w *= P[P_DANGER + closest - 1] if closest >= 1 else P[P_DANGER]
    if stock <= 4:
        shed_w *= 1.5
    prv = _pmod(-direction, n)
    nxt2 = _pmod(2 * direction, n)
    threat_next = _threat(sizes[nxt])
    unseen_count = popcount(unseen)
    if unseen_count == 0:
        unseen_count = 1
    unseen_sevens = popcount(unseen & K.SEVENS)
    next_size = sizes[nxt]
    p_no_seven = 1.0
    for i in range(min(next_size, unseen_count)):
        p_no_seven *= max(0.0, (unseen_count - unseen_sevens - i) / (unseen_count - i))
    my_sevens = popcount(hand & K.SEVENS)
    my_jacks = popcount(hand & K.JACKS)
    pow_exp = float(max(next_size, 1))

    best = -1
    best_score = -1e18
    m = cards
    while m:
        c = lowbit_index(m)
        m &= m - 1
        r = c % 13
        s = c // 13
        rest = hand ^ (np.int64(1) << np.int64(c))
        score = shed_w * K.CARD_POINTS[c]
        if r == K.JACK:
            _nomination_scores(rest, unseen, void_next, P[P_VOID_HINT], nom)
            if nominate_other:
                nom[suit] = -1e9
            new_suit = 0
            for x in range(1, 4):
                if nom[x] > nom[new_suit]:
                    new_suit = x
            follow = popcount(rest & K.SUIT_MASKS[new_suit] & NOT_JACKS)
            score -= jack_keep
            new_rank = -1
        else:
            new_suit = s
            new_rank = r
            follow = popcount(rest & (K.SUIT_MASKS[s] | K.RANK_MASKS[r]) & NOT_JACKS)
        score += P[P_FOLLOW] * min(follow, 3)
        if follow == 0 and (rest & K.JACKS) == 0:
            score -= P[P_STUCK]
        if r != K.EIGHT or not two_player:
            others = popcount(unseen & K.SUIT_MASKS[new_suit])
            if new_rank >= 0:
                others += popcount(unseen & K.RANK_MASKS[new_rank] & ~K.SUIT_MASKS[new_suit])
            frac = others / unseen_count
            p_cannot = (1.0 - frac) ** pow_exp
            score += P[P_SCARCE] * p_cannot
            if (void_next >> new_suit) & 1:
                score += P[P_VOID_HINT]
        if r == K.SEVEN:
            score += P[P_SEVEN_ATTACK] * p_no_seven * (1.0 + threat_next)
            if my_sevens == 1 and hand_size > 3:
                score -= P[P_SEVEN_KEEP]
        elif r == K.EIGHT:
            if two_player:
                score += P[P_EIGHT_AGAIN]
            else:
                score += P[P_THREAT] * (threat_next - 0.5 * _threat(sizes[nxt2]))
        elif r == K.TEN and not two_player:
            score += P[P_THREAT] * (threat_next - _threat(sizes[prv]))
        elif r == K.ACE:
            if rest & (K.SUIT_MASKS[s] | ACES) & NOT_JACKS:
                score += P[P_ACE_FOLLOW]
        rest_n = popcount(rest)
        if rest_n == 1:
            last = lowbit_index(rest)
            lr = last % 13
            if lr == K.JACK:
                score += P[P_FIN_JACK]
            elif lr == K.SEVEN:
                if last // 13 == new_suit or new_rank == K.SEVEN:
                    score += P[P_FIN_SEVEN]
            elif last // 13 == new_suit or lr == new_rank:
                score += P[P_FIN_OTHER]
        elif rest_n == 2 and my_jacks and r != K.JACK:
            score += 0.25 * P[P_FIN_JACK]
        if score > best_score:
            best = c
            best_score = score

    # 4. The alternatives to playing a card.
    alt = -1
    alt_score = -1e18
    if ace:
        if can_pass:
            alt = K.PASS
            alt_score = 0.0
    else:
        if can_draw and stock > 0:
            cost = P[P_DRAW_COST]
            if stock <= 4:
                cost *= 3.0 if cards == 0 else 2.0
            if closest <= 1:
                cost += 10.0
            if has_drawn:
                cost += 6.0
            only_jacks = cards != 0 and (cards & NOT_JACKS) == 0
            if only_jacks and stock >= P[P_BIG_STOCK] and hand_size >= 3:
                cost -= 10.0
            alt = K.DRAW
            alt_score = -cost
        if can_pass:
            pass_score = -P[P_PASS_COST]
            if pass_score > alt_score:
                alt = K.PASS
                alt_score = pass_score
    if best >= 0 and (alt < 0 or best_score >= alt_score):
        return best
    if alt >= 0:
        return alt
    return lowbit_index(legal)


# ---------------------------------------------------------------------- front ends
@njit(cache=True)
def heuristic_actions_state(st, cfg, P, out):
    """The heuristic's action for every game's current player from the state arrays
    (``-1`` where nothing is legal: the match is over)."""
    n = cfg[K.C_N]
    other = cfg[K.C_OTHER] != 0
    sizes = np.zeros(n, dtype=np.int64)
    voids = np.zeros(n, dtype=np.int64)
    stk = np.zeros((STACK, 5), dtype=np.int64)
    nom = np.zeros(4, dtype=np.float64)
    for b in range(out.shape[0]):
        legal = st[b, K.LEGAL]
        if legal == 0:
            out[b] = -1
            continue
        if legal & (legal - 1) == 0:
            out[b] = lowbit_index(legal)
            continue
        out[b] = row_action(st, b, legal, n, other, P, sizes, voids, stk, nom)


@njit(cache=True, inline="always")
def row_action(st, b, legal, n, other, P, sizes, voids, stk, nom):
    """The heuristic's action for state row ``b``'s current player: how the heuristic reads
    a row (hand sizes and drawn-on suits from the mover's seat on), for every caller that
    plays it on state rows. ``sizes``, ``voids``, ``stk`` and ``nom`` are scratch."""
    cur = st[b, K.CUR]
    seat = cur
    for k in range(n):
        sizes[k] = popcount(st[b, K.HAND + seat])
        voids[k] = st[b, K.DREW + seat] if k else 0
        seat += 1
        if seat == n:
            seat = 0
    hand = st[b, K.HAND + cur]
    direction = 1 if st[b, K.DIR] == 1 else -1
    return choose(hand, legal, st[b, K.TOP], st[b, K.SUIT], st[b, K.PEND], st[b, K.PHASE],
                  st[b, K.DRAWN] != 0, direction, sizes, st[b, K.SLEN] - st[b, K.SPOS],
                  st[b, K.PILE] | hand, voids, n, other, P, stk, nom)


@njit(cache=True, inline="always")
def _row_bits(row, start, length):
    mask = np.int64(0)
    for i in range(length):
        if row[start + i] > 0.5:
            mask |= np.int64(1) << np.int64(i)
    return mask


@njit(cache=True, inline="always")
def _one_hot(row, start, length, default):
    """The last set index of a one-hot segment (as ``ObservationReader`` reads it)."""
    v = default
    for i in range(length):
        if row[start + i] > 0.5:
            v = i
    return v


@njit(cache=True)
def heuristic_actions_obs(obs, masks, cfg, size_scale, P, out):
    """The heuristic's action for every row of observations [K, L] and int8 masks
    [K, 58] (``ObservationReader.read`` then ``choose``) of the table ``cfg``
    (``rules_vector``: player count, ``nominate`` and the segment starts); ``-1`` for an
    all-zero mask. ``size_scale``: 52 for float observations, 1 for uint8 ones."""
    n = cfg[K.C_N]
    other = cfg[K.C_OTHER] != 0
    o_stock = cfg[K.C_O_STOCK]
    o_discard = cfg[K.C_O_DISCARD]
    o_drew = cfg[K.C_O_DREW]
    sizes = np.zeros(n, dtype=np.int64)
    voids = np.zeros(n, dtype=np.int64)
    stk = np.zeros((STACK, 5), dtype=np.int64)
    nom = np.zeros(4, dtype=np.float64)
    for b in range(out.shape[0]):
        mrow = masks[b]
        legal = np.int64(0)
        for a in range(K.NUM_ACTIONS):
            if mrow[a] != 0:
                legal |= np.int64(1) << np.int64(a)
        if legal == 0:
            out[b] = -1
            continue
        if legal & (legal - 1) == 0:
            out[b] = lowbit_index(legal)
            continue
        row = obs[b]
        hand = _row_bits(row, K.O_HAND, K.NUM_CARDS)
        top = _one_hot(row, K.O_TOP, K.NUM_CARDS, -1)
        suit = _one_hot(row, K.O_SUIT, 4, 0)
        pending = _one_hot(row, K.O_PEND, K.MAX_PENDING_SEVENS + 1, 0)
        phase = _one_hot(row, K.O_PHASE, 4, 0)
        has_drawn = row[K.O_DRAWN] > 0.5
        direction = 1 if row[K.O_DIR] > 0.5 else -1
        for k in range(n):
            sizes[k] = np.int64(np.floor(np.float64(row[K.O_SIZES + k]) * size_scale + 0.5))
            voids[k] = 0
        stock = np.int64(np.floor(np.float64(row[o_stock]) * size_scale + 0.5))
        discard = _row_bits(row, o_discard, K.NUM_CARDS)
        for i in range(4 * (n - 1)):
            if row[o_drew + i] > 0.5:
                voids[1 + i // 4] |= np.int64(1) << np.int64(i % 4)
        out[b] = choose(hand, legal, top, suit, pending, phase, has_drawn, direction, sizes,
                        stock, discard | hand, voids, n, other, P, stk, nom)


class HeuristicPolicy:
    """``agents.heuristic.HeuristicAgent`` batched (same choices, same tie-breaks).

    ``HeuristicPolicy(num_games, rules=None, *, params=None, **options)``:

    * ``policy(game)`` -> int64 actions [B] for every game of a ``BatchedGame`` (its
      rules; ``-1`` where the match is over); a reused buffer, like ``GreedyPolicy``.
    * ``policy(obs, masks)`` -> int64 actions [K] for observation rows (float or uint8)
      and int8 mask rows of a table with ``rules`` (``Rules`` or RULES.md's options; default
      two players): the ``BatchedEnv`` / ``BatchedVecEnv`` opponent form. A new array.

    ``params``: an ``agents.heuristic.Params`` (default ``DEFAULT_PARAMS``); ``big_table``:
    its ``big_table`` switch, as ``HeuristicAgent`` takes it (``heuristic?big_table=false``
    reaches the port as this keyword)."""

    name = "heuristic"
    #: It reads the v0 observation, which every later layout begins with: a batched table
    #: of a later layout shows it v0 rows (``pis_env.batched.env.layout_of``).
    layout_version = 0

    def __init__(self, num_games: int = 1, rules: Rules | None = None, *, params=None,
                 big_table: bool | None = None, **options):
        if rules is None:
            rules = Rules.from_options(**options)
        elif options:
            rules = rules.replace(**options)
        self.rules = rules
        self.num_players = rules.num_players
        self.cfg = rules_vector(rules)
        self.params = params_vector(with_big_table(params, big_table))
        self.out = np.empty(int(num_games), dtype=np.int64)

    def __call__(self, game_or_obs, masks=None) -> np.ndarray:
        if masks is None:
            return self.from_game(game_or_obs)
        return self.from_obs(game_or_obs, masks)

    def from_game(self, game) -> np.ndarray:
        """Actions [B] for the current players of a ``BatchedGame``."""
        out = self.out
        if out.shape[0] != game.num_games:
            out = self.out = np.empty(game.num_games, dtype=np.int64)
        heuristic_actions_state(game.st, game.cfg, self.params, out)
        return out

    def from_obs(self, obs, masks) -> np.ndarray:
        """Actions [K] for observation rows [K, L] and mask rows [K, 58]."""
        obs = np.asarray(obs)
        masks = np.asarray(masks)
        if obs.ndim != 2 or masks.ndim != 2 or masks.shape != (obs.shape[0], K.NUM_ACTIONS):
            raise ValueError(f"expected obs [K, L] and masks [K, 58], got {obs.shape} and "
                             f"{masks.shape}")
        n = self.num_players
        if obs.shape[1] != K.obs_size(n, self.rules.num_deals):
            raise ValueError(f"observations of length {obs.shape[1]} do not fit a table of "
                             f"{n} players and {self.rules.num_deals} deals")
        if not obs.flags.c_contiguous:
            obs = np.ascontiguousarray(obs)
        if masks.dtype != np.int8:
            masks = masks.astype(np.int8)
        if not masks.flags.c_contiguous:
            masks = np.ascontiguousarray(masks)
        scale = 1.0 if obs.dtype == np.uint8 else 52.0
        out = np.empty(obs.shape[0], dtype=np.int64)
        heuristic_actions_obs(obs, masks, self.cfg, scale, self.params, out)
        return out

    def __repr__(self) -> str:
        return f"HeuristicPolicy({self.rules.num_players} players)"


__all__ = ["HeuristicPolicy", "choose", "heuristic_actions_obs", "heuristic_actions_state",
           "params_vector"]
