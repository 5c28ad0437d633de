"""The heuristic bot: Pis Yedili played the way good players describe it.

What it does, in order of importance:

* **Goes out when it can**, also through a chain of its own plays (an Ace's extra play,
  an 8 that skips the lone opponent at a two-player table), preferring the last card that
  multiplies the others' charges: a 7 (x3), then a Jack (x2).
* **Answers sevens with a 7** when it holds one, choosing the 7 of the suit it can follow.
* **Keeps Jacks as the escape card**: a Jack is played only to go out or when nothing else
  fits; when the Jack is the only play, the hand is big (5+ cards), the stock is large
  (24+) and no opponent is down to two cards, it draws instead (and passes if the drawn
  card does not fit), keeping the Jack for later.
* **Plans the finish**: with two cards left it plays the other card and keeps a Jack, or a
  7 that the suit it leaves active lets it play next, to go out on (x2, x3); when both
  cards fit now it may lead the 7 (the opponent draws) and go out on the other card.
* **Aims 7s, 8s and 10s** at the player about to move when that player is close to going
  out: a 7 makes them draw, an 8 skips them, a 10 turns play away from them.
* **Sheds high-point cards early**, more eagerly when an opponent is close to going out or
  the stock is nearly empty (the deal then ends on hand points).
* **Remembers the discard pile**: the cards it has not seen are the ones opponents may hold,
  so it prefers suits that are scarce among them, and suits an opponent has drawn on
  (``drew_on_suit``: probably void there).
* **Nominates the suit it holds most of**, weighted by the points it needs to shed.
* Takes the Ace's extra play whenever that sheds a card it does not need to keep.
* **At a big table (5 to 7 players) sheds points as the stock runs short**
  (``Params.big_table``). There the stock is small (17, 10 or 3 cards) and a deal nearly
  always ends when it runs out, not by someone going out (about two deals in three at 5
  players, nineteen in twenty at 6, every one at 7 in heuristic self-play): the fewest
  points in hand win, and on a stock of three cards or fewer a 7 ends the deal (the
  player it hits draws the rest). So from ``SHORT_STOCK[0]`` cards of stock down to
  ``SHORT_STOCK[1]`` (8 to 3) the value of keeping a Jack falls to nothing and each shed
  point weighs up to twice as much. The threat logic (7s and 8s at the next player, a 10
  away from a close one) is unchanged: scoring the suit and the threat for the player who
  faces the card after an 8, a 10 or a 7's penalty, doubling the attacks or dropping
  them, or ending the deal with a 7 only when ahead on points changed no measured share.
  Below 5 players, with ``heuristic?big_table=false`` and for the held-out variants
  (``agents.heuristic.variants``) the play is the old one.

The decision is one function, ``choose``, on plain integers (hand and legal set as bit
masks). ``HeuristicAgent`` feeds it from an observation; ``state_action`` feeds it from an
engine ``GameState`` (the Monte Carlo bot's fast rollout policy). Both see the same facts, so
both play the same moves. It is deterministic: ties go to the lowest action id.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from agents.base import Agent
from pis_env.actions import DRAW, NOMINATE_BASE, NUM_ACTIONS, PASS
from pis_env.cards import (
    ACE,
    CARD_POINTS,
    EIGHT,
    FULL_DECK,
    JACK,
    JACKS,
    NUM_CARDS,
    RANK_MASKS,
    SEVEN,
    SEVENS,
    SUIT_MASKS,
    TEN,
)
from pis_env.engine import ACE_PHASE, NOMINATE, OPENING, PHASE_NAMES
from pis_env.observation import SCORE_SCALE, SIZE_SCALE, Layout
from pis_env.rules import Rules

_SUITS = range(4)
_ACES = RANK_MASKS[ACE]
_NOT_JACKS = FULL_DECK & ~JACKS
# Cards whose effect is lost on the opening club (worth keeping for later).
_OPENING_WASTE = {JACK: 40, SEVEN: 14, ACE: 4, EIGHT: 3, TEN: 1}


@dataclass(frozen=True)
class Params:
    """The heuristic's weights, in penalty-point-like units."""

    shed: float = 1.0          # per point of the card played
    jack_keep: float = 45.0    # the value of keeping a Jack as the escape card
    draw_cost: float = 18.0    # cost of one voluntary draw (a card and a lost tempo)
    pass_cost: float = 4.0     # cost of passing after a draw instead of playing
    follow: float = 2.0        # per card (up to 3) I can play next if the suit stays
    stuck: float = 8.0         # nothing of the new suit left (and no Jack)
    seven_attack: float = 12.0  # a 7 makes the next player draw (unless they hold one)
    seven_keep: float = 6.0     # keeping my last 7 to answer the opponents' sevens
    eight_again: float = 9.0    # an 8 at a two-player table: I move again
    threat_effect: float = 16.0  # 7/8/10 aimed at a player close to going out
    ace_follow: float = 6.0     # an Ace I can follow up at once
    scarce: float = 10.0        # the next player probably cannot follow the new suit
    void_hint: float = 6.0      # the next player drew on the new suit
    finisher_jack: float = 30.0  # one card left and it is a Jack
    finisher_seven: float = 26.0  # one card left, a 7 that the new suit lets me play
    finisher_other: float = 8.0  # one card left, matching the new suit
    draw_big_stock: int = 24    # the stock size from which drawing to keep a Jack pays
    jack_draw: bool = True      # draw (not play) when a Jack is the only play (big stock)
    jack_draw_hand: int = 5     # ... and the hand holds at least this many cards
    danger: tuple = (2.2, 1.6, 1.2)  # shed weight when the closest opponent holds 1, 2, 3
    big_table: bool = True      # from BIG_TABLE players on, shed points as the stock runs out


DEFAULT_PARAMS = Params()
#: The table size from which ``Params.big_table`` plays the big-table game (at 2 to 4
#: players the heuristic plays as it always did).
BIG_TABLE = 5
#: The stock sizes over which the big-table game turns to shedding points: not at all
#: with ``SHORT_STOCK[0]`` cards or more, fully with ``SHORT_STOCK[1]`` or fewer (then one
#: 7 empties the stock, so the deal may end before the player moves again).
SHORT_STOCK = (8, 3)


@dataclass
class Table:
    """Fixed facts about the table the bot sits at."""

    num_players: int = 2
    rules: Rules = field(default_factory=Rules)
    params: Params = DEFAULT_PARAMS


def _threat(size: int) -> float:
    return 1.0 if size <= 1 else 0.6 if size == 2 else 0.25 if size == 3 else 0.0


def short_stock(stock: int) -> float:
    """How near a big table's deal is to ending on the stock, from 0 (``SHORT_STOCK[0]``
    cards or more) to 1 (``SHORT_STOCK[1]`` or fewer), linear in between."""
    full, short = SHORT_STOCK
    return max(0.0, min(1.0, (full - stock) / (full - short)))


def _follow_cards(hand: int, suit: int, rank: int | None) -> int:
    """Non-Jack cards of ``hand`` playable on a top card of that suit (and rank)."""
    mask = SUIT_MASKS[suit]
    if rank is not None:
        mask |= RANK_MASKS[rank]
    return hand & mask & _NOT_JACKS


def _go_out_multiplier(hand: int, top_rank: int, suit: int, ace: bool, two_player: bool,
                       depth: int = 0) -> int:
    """The best multiplier (3 for a 7, 2 for a Jack, 1 otherwise) of a sequence of plays
    that empties ``hand`` within this turn, 0 if there is none. ``ace``: the position is an
    Ace's extra play; otherwise a normal turn with no sevens pending."""
    if depth > 6:
        return 0
    if ace:
        playable = hand & (SUIT_MASKS[suit] | _ACES | JACKS)
    elif top_rank == JACK:
        playable = hand & SUIT_MASKS[suit] & _NOT_JACKS
    else:
        playable = hand & (SUIT_MASKS[suit] | RANK_MASKS[top_rank] | JACKS)
    if not playable:
        return 0
    best = 0
    if hand.bit_count() == 1:
        c = hand.bit_length() - 1
        r = c % 13
        return 3 if r == SEVEN else 2 if r == JACK else 1
    rest_p = playable
    while rest_p:
        low = rest_p & -rest_p
        rest_p ^= low
        c = low.bit_length() - 1
        r = c % 13
        if r == ACE:
            m = _go_out_multiplier(hand ^ low, r, c // 13, True, two_player, depth + 1)
        elif r == EIGHT and two_player:
            m = _go_out_multiplier(hand ^ low, r, c // 13, False, two_player, depth + 1)
        else:
            continue
        if m > best:
            best = m
            if best == 3:
                break
    return best


def nomination_scores(hand: int, unseen: int, void_next: int, params: Params) -> list[float]:
    """How much the bot wants each suit after a Jack."""
    scores = []
    for s in _SUITS:
        mine = hand & SUIT_MASKS[s] & _NOT_JACKS
        pts = 0
        m = mine
        while m:
            low = m & -m
            pts += CARD_POINTS[low.bit_length() - 1]
            m ^= low
        score = 10.0 * mine.bit_count() + 0.5 * pts
        others = (unseen & SUIT_MASKS[s]).bit_count()
        score -= 1.0 * others
        if (void_next >> s) & 1:
            score += params.void_hint
        scores.append(score)
    return scores


def choose(
    hand: int,
    legal: int,
    suit: int,
    pending: int,
    phase: int,
    has_drawn: bool,
    direction: int,
    sizes: list[int],
    stock: int,
    seen: int,
    voids: list[int],
    table: Table,
) -> int:
    """The heuristic's action. ``hand``/``legal``/``seen`` are bit masks (``seen``: the
    cards the player has seen, its hand and the discard pile); ``sizes`` and ``voids`` are
    by relative seat (0 = the player, then clockwise). The top card itself is never read:
    ``legal`` already says what may follow it, and ``suit`` is the suit to follow."""
    n = table.num_players
    params = table.params
    cards = legal & FULL_DECK
    if not cards and not (legal >> NOMINATE_BASE) & 0b1111:
        # Only draw and/or pass are legal.
        if (legal >> PASS) & 1 and (not (legal >> DRAW) & 1 or has_drawn):
            return PASS
        return DRAW if (legal >> DRAW) & 1 else PASS
    if cards and cards.bit_count() == 1 and not (legal >> DRAW) & 1 and not (legal >> PASS) & 1:
        return cards.bit_length() - 1  # the only legal action

    unseen = FULL_DECK & ~seen & ~hand
    nxt = direction % n
    void_next = voids[nxt] if nxt < len(voids) else 0

    if phase == NOMINATE:
        scores = nomination_scores(hand, unseen, void_next, params)
        best, best_score = -1, -1e18
        for s in _SUITS:
            if (legal >> (NOMINATE_BASE + s)) & 1 and scores[s] > best_score:
                best, best_score = s, scores[s]
        return NOMINATE_BASE + best

    if phase == OPENING:
        # The opening club has no effect: shed points, but do not waste a special card.
        best, best_score = -1, -1e18
        c_mask = cards
        while c_mask:
            low = c_mask & -c_mask
            c_mask ^= low
            c = low.bit_length() - 1
            score: float = CARD_POINTS[c] - _OPENING_WASTE.get(c % 13, 0)
            if score > best_score:
                best, best_score = c, score
        return best

    hand_size = hand.bit_count()

    if pending:
        sevens = cards & SEVENS
        if not sevens:
            return DRAW
        if hand_size == 1:
            return sevens.bit_length() - 1
        best, best_score = -1, -1e18
        m = sevens
        while m:
            low = m & -m
            m ^= low
            c = low.bit_length() - 1
            rest = hand ^ low
            score = (rest & SUIT_MASKS[c // 13] & _NOT_JACKS).bit_count()
            if score > best_score:
                best, best_score = c, score
        return best

    two_player = n == 2
    ace = phase == ACE_PHASE

    # 1. Go out now, or within this turn through Aces / 8s (best multiplier).
    if hand_size <= 5:
        best, best_mult = -1, 0
        m = cards
        while m:
            low = m & -m
            m ^= low
            c = low.bit_length() - 1
            rest = hand ^ low
            r = c % 13
            if not rest:
                mult = 3 if r == SEVEN else 2 if r == JACK else 1
            elif r == ACE:
                mult = _go_out_multiplier(rest, r, c // 13, True, two_player)
            elif r == EIGHT and two_player:
                mult = _go_out_multiplier(rest, r, c // 13, False, two_player)
            else:
                mult = 0
            if mult > best_mult:
                best, best_mult = c, mult
        if best >= 0:
            return best

    opp_sizes = sizes[1:]
    closest = min(opp_sizes) if opp_sizes else 7
    # 2. Only Jacks fit and the stock is large: draw and keep the escape card.
    if (params.jack_draw and not ace and not has_drawn and (legal >> DRAW) & 1
            and not (cards & _NOT_JACKS) and stock >= params.draw_big_stock
            and hand_size >= params.jack_draw_hand and closest >= 3):
        return DRAW

    # 3. Score every card play against drawing / passing.
    jack_keep = params.jack_keep
    shed_w = params.shed
    if params.big_table and n >= BIG_TABLE:
        # A big table's deal nearly always ends on the stock, the fewest points in hand
        # winning: as it runs short, points count and the escape cards are not kept.
        pressure = short_stock(stock)
        jack_keep *= 1.0 - pressure
        shed_w *= 1.0 + pressure
    if closest <= 3:
        shed_w *= params.danger[closest - 1] if closest >= 1 else params.danger[0]
    if stock <= 4:
        shed_w *= 1.5
    prv = (-direction) % n
    nxt2 = (2 * direction) % n
    threat_next = _threat(sizes[nxt])
    unseen_count = unseen.bit_count() or 1
    unseen_sevens = (unseen & SEVENS).bit_count()
    next_size = sizes[nxt]
    # Chance that the next player holds no 7 (hypergeometric, by the unseen cards).
    p_no_seven = 1.0
    for i in range(min(next_size, unseen_count)):
        p_no_seven *= max(0.0, (unseen_count - unseen_sevens - i) / (unseen_count - i))
    my_sevens = (hand & SEVENS).bit_count()
    my_jacks = (hand & JACKS).bit_count()

    best, best_score = -1, -1e18
    m = cards
    while m:
        low = m & -m
        m ^= low
        c = low.bit_length() - 1
        r = c % 13
        s = c // 13
        rest = hand ^ low
        score = shed_w * CARD_POINTS[c]
        if r == JACK:
            nom = nomination_scores(rest, unseen, void_next, params)
            if table.rules.nominate == "other":
                nom[suit] = -1e9
            new_suit = max(_SUITS, key=lambda x: (nom[x], -x))
            follow = (rest & SUIT_MASKS[new_suit] & _NOT_JACKS).bit_count()
            score -= jack_keep
            new_rank = None
        else:
            new_suit = s
            new_rank = r
            follow = _follow_cards(rest, s, r).bit_count()
        # Can I follow the suit myself next time round?
        score += params.follow * min(follow, 3)
        if not follow and not (rest & JACKS):
            score -= params.stuck
        # Will the next player be able to follow?
        if r != EIGHT or not two_player:
            others = (unseen & SUIT_MASKS[new_suit]).bit_count()
            if new_rank is not None:
                others += (unseen & RANK_MASKS[new_rank] & ~SUIT_MASKS[new_suit]).bit_count()
            frac = others / unseen_count
            p_cannot = (1.0 - frac) ** max(next_size, 1)
            score += params.scarce * p_cannot
            if (void_next >> new_suit) & 1:
                score += params.void_hint
        # Effects.
        if r == SEVEN:
            score += params.seven_attack * p_no_seven * (1.0 + threat_next)
            if my_sevens == 1 and hand_size > 3:
                score -= params.seven_keep
        elif r == EIGHT:
            if two_player:
                score += params.eight_again
            else:
                score += params.threat_effect * (threat_next - 0.5 * _threat(sizes[nxt2]))
        elif r == TEN and not two_player:
            score += params.threat_effect * (threat_next - _threat(sizes[prv]))
        elif r == ACE:
            if rest & (SUIT_MASKS[s] | _ACES) & _NOT_JACKS:
                score += params.ace_follow
        # The finish: one card left after this play.
        if rest.bit_count() == 1:
            last = rest.bit_length() - 1
            lr = last % 13
            if lr == JACK:
                score += params.finisher_jack
            elif lr == SEVEN:
                if last // 13 == new_suit or new_rank == SEVEN:
                    score += params.finisher_seven
            elif last // 13 == new_suit or lr == new_rank:
                score += params.finisher_other
        elif rest.bit_count() == 2 and my_jacks and r != JACK:
            score += 0.25 * params.finisher_jack
        if score > best_score:
            best, best_score = c, score

    # 4. The alternatives to playing a card.
    alt, alt_score = -1, -1e18
    if ace:
        if (legal >> PASS) & 1:
            alt, alt_score = PASS, 0.0
    else:
        if (legal >> DRAW) & 1 and stock > 0:
            cost = params.draw_cost
            if stock <= 4:
                cost *= 3.0 if not cards else 2.0
            if closest <= 1:
                cost += 10.0
            if has_drawn:
                cost += 6.0
            only_jacks = cards and not (cards & _NOT_JACKS)
            if only_jacks and stock >= params.draw_big_stock and hand_size >= 3:
                cost -= 10.0
            alt, alt_score = DRAW, -cost
        if (legal >> PASS) & 1:
            score = -params.pass_cost
            if score > alt_score:
                alt, alt_score = PASS, score
    if best >= 0 and (alt < 0 or best_score >= alt_score):
        return best
    if alt >= 0:
        return alt
    return (legal & -legal).bit_length() - 1


# ---------------------------------------------------------------------- front ends
def state_action(state, table: Table) -> int:
    """The heuristic's action for the player to move in an engine ``GameState`` (it only
    uses what that player can see)."""
    p = state.current
    n = state.num_players
    hands = state.hands
    drew_on = state.drew_on
    if n == 2:
        q = 1 - p
        sizes = [hands[p].bit_count(), hands[q].bit_count()]
        voids = [0, drew_on[q]]
    else:
        sizes = [hands[(p + k) % n].bit_count() for k in range(n)]
        voids = [0] + [drew_on[(p + k) % n] for k in range(1, n)]
    hand = hands[p]
    return choose(
        hand, state.legal_mask(), state.active_suit, state.pending_sevens,
        state.phase, state.has_drawn, state.direction, sizes, len(state.stock),
        state.pile_mask | hand, voids, table,
    )


def decoded_action(decoded: Mapping, legal: int, table: Table) -> int:
    """The heuristic's action from ``decode_observation``'s dict and the legal mask."""
    hand = 0
    for c in decoded["hand"]:
        hand |= 1 << c
    seen = hand
    for c in decoded["discard"]:
        seen |= 1 << c
    voids = [0]
    for row in decoded["drew_on_suit"]:
        v = 0
        for s in row:
            v |= 1 << s
        voids.append(v)
    return choose(
        hand, legal, decoded["active_suit"],
        decoded["pending_sevens"], PHASE_NAMES.index(decoded["phase"]), decoded["has_drawn"],
        decoded["direction"], decoded["hand_sizes"], decoded["stock_size"], seen, voids, table,
    )


def mask_int(action_mask) -> int:
    """An action mask array as a 58-bit integer."""
    mask = np.asarray(action_mask)
    if mask.dtype == np.int8 and mask.shape == (NUM_ACTIONS,):
        return int.from_bytes(np.packbits(mask.view(np.uint8), bitorder="little").tobytes(),
                              "little")
    legal = 0
    for a in np.flatnonzero(mask).tolist():
        legal |= 1 << a
    return legal


class ObservationReader:
    """Reads the fields ``choose`` needs straight from an observation vector (a faster
    equivalent of ``decode_observation`` for the per-move hot path)."""

    def __init__(self, num_players: int, num_deals: int = 1):
        layout = Layout.of(num_players, num_deals)
        o = layout.offsets
        self.num_players = num_players
        self._flags_end = o["hand_sizes"].start  # hand .. direction: 0/1 flags
        self._top = o["top_card"].start
        self._suit = o["active_suit"].start
        self._pending = o["pending_sevens"].start
        self._phase = o["phase"].start
        self._drawn = o["has_drawn"].start
        self._sizes = o["hand_sizes"]
        self._stock = o["stock_size"].start
        self._discard = o["discard"].start
        self._drew = o["drew_on_suit"]
        self._deal = o.get("deal")
        self._scores = o.get("scores")

    def standing(self, vector) -> tuple[int, list[int]] | None:
        """``(deal index, match totals observer first)`` of a match observation, read from
        its ``deal`` and ``scores`` segments; ``None`` at a one-deal table."""
        if self._deal is None or self._scores is None:
            return None
        vec = np.asarray(vector, dtype=np.float64)
        deal = int(np.argmax(vec[self._deal]))
        scores = vec[self._scores]
        return deal, [int(round(SCORE_SCALE * v / (1.0 - v))) for v in scores.tolist()]

    def read(self, vector) -> tuple:
        """(hand, top, suit, pending, phase, has_drawn, direction, sizes, stock, discard,
        voids) with masks as ints; ``top`` is -1 before the opening."""
        vec = np.asarray(vector)
        flags = np.flatnonzero(vec[:self._flags_end] > 0.5).tolist()
        hand = 0
        top = -1
        suit = pending = phase = 0
        has_drawn = False
        direction = -1
        for i in flags:
            if i < NUM_CARDS:
                hand |= 1 << i
            elif i < self._suit:
                top = i - self._top
            elif i < self._pending:
                suit = i - self._suit
            elif i < self._phase:
                pending = i - self._pending
            elif i < self._drawn:
                phase = i - self._phase
            elif i == self._drawn:
                has_drawn = True
            else:
                direction = 1
        sizes = [int(round(v)) for v in (vec[self._sizes] * SIZE_SCALE).tolist()]
        stock = int(round(float(vec[self._stock]) * SIZE_SCALE))
        discard = 0
        for c in np.flatnonzero(vec[self._discard:self._discard + NUM_CARDS] > 0.5).tolist():
            discard |= 1 << c
        voids = [0] * self.num_players
        for i in np.flatnonzero(vec[self._drew] > 0.5).tolist():
            voids[1 + i // 4] |= 1 << (i % 4)
        return (hand, top, suit, pending, phase, has_drawn, direction, sizes, stock, discard,
                voids)


class HeuristicAgent(Agent):
    """The strategic rule-based bot; see the module docstring.

    ``rules`` (a ``Rules``, or a dict of rules options) or the options themselves as
    keywords (``Rules.keys()``, e.g. ``draw_rule="one"``) tell it the table's variant;
    an unknown option name is an error naming the nearest ones. ``params``: its weights
    (default ``DEFAULT_PARAMS``); ``big_table``: their ``big_table`` switch
    (``heuristic?big_table=false`` plays the old game at 5 to 7 players too).

    At a match table it reads the standing too (``last_standing``: the deal index and the
    totals, its own first, of the last observation it was shown), while its moves stay
    those of the single deal: every strength target measures other bots against it, so
    its play is the fixed baseline (``tests/fixtures/shipped_positions.npz`` records it);
    playing to the standing is the match-aware search's job (``agents.match_value``)."""

    name = "heuristic"

    def __init__(self, num_players: int = 2, num_deals: int = 1, seed: int | None = None,
                 rules: Rules | Mapping | None = None, params: Params | None = None,
                 big_table: bool | None = None, **options):
        super().__init__(num_players, num_deals, seed)
        self.rules = table_rules(rules, num_players, num_deals, **options)
        self.table = Table(num_players, self.rules, with_big_table(params, big_table))
        self._reader = ObservationReader(num_players, num_deals)
        #: ``(deal, totals own first)`` of the last observation (``None``: one-deal table).
        self.last_standing: tuple[int, list[int]] | None = None

    def act(self, observation: dict) -> int:
        self.check_observation(observation["observation"])
        if self.num_deals > 1:
            self.last_standing = self._reader.standing(observation["observation"])
        legal = mask_int(observation["action_mask"])
        if not legal:
            raise ValueError("no legal action in this observation: it is not this agent's turn")
        if legal & (legal - 1) == 0:
            return legal.bit_length() - 1
        (hand, _top, suit, pending, phase, has_drawn, direction, sizes, stock, discard,
         voids) = self._reader.read(observation["observation"])
        return choose(hand, legal, suit, pending, phase, has_drawn, direction, sizes,
                      stock, discard | hand, voids, self.table)


def with_big_table(params: Params | None, big_table: bool | None) -> Params:
    """``params`` (default ``DEFAULT_PARAMS``) with ``Params.big_table`` set to
    ``big_table`` when that is given (``heuristic?big_table=false``: the big tables'
    play switched off); anything but a bool is a ``ValueError``."""
    params = params or DEFAULT_PARAMS
    if big_table is None:
        return params
    if not isinstance(big_table, bool):
        raise ValueError(f"big_table={big_table!r}: must be true or false")
    return replace(params, big_table=big_table)


class UnknownOption(TypeError):
    """A keyword that is neither the bot's nor a rules option. It carries the keyword
    (``option``) so that ``agents.make``, which knows the bot's name and signature, can
    name the bot's own keywords and the rules options apart."""

    def __init__(self, option: str, message: str):
        super().__init__(message)
        self.option = option

    def __reduce__(self):  # intact across processes (a tournament worker's error)
        return type(self), (self.option, str(self))


def table_rules(rules: Rules | Mapping | None, num_players: int, num_deals: int,
                **options) -> Rules:
    """The table's ``Rules`` from a ``Rules``/dict and/or rules options as keywords
    (``None`` means not given): the one place the bots read their variant keywords. A
    keyword that is no rules option is a ``TypeError`` (Python's error for an unexpected
    keyword argument) naming the nearest options. ``num_players`` and ``num_deals`` must
    agree with ``rules``."""
    unknown = [k for k in options if k not in Rules.keys()]
    if unknown:
        close = difflib.get_close_matches(unknown[0], Rules.keys(), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownOption(unknown[0], f"unexpected keyword argument {unknown[0]!r}: not a "
                            f"rules option{hint} (the options: {', '.join(Rules.keys())})")
    if rules is None:
        base: dict = {}
    elif isinstance(rules, Rules):
        base = rules.to_dict()
    elif isinstance(rules, Mapping):
        base = dict(rules)
    else:
        raise ValueError(f"rules must be a Rules or a dict of options, got {rules!r}")
    for key in ("num_players", "num_deals"):
        given = {"num_players": num_players, "num_deals": num_deals}[key]
        if key in base and base[key] != given:
            raise ValueError(f"rules say {key}={base[key]!r} but the agent was given {given!r}")
        base[key] = given
    base.update({k: v for k, v in options.items() if v is not None})
    return Rules.from_options(**base)


__all__ = [
    "BIG_TABLE", "DEFAULT_PARAMS", "SHORT_STOCK", "HeuristicAgent", "ObservationReader", "Params",
    "Table", "choose", "UnknownOption", "decoded_action", "short_stock", "state_action",
    "table_rules", "with_big_table",
]
