"""The particle filter's numba helpers (``agents.belief.worlds``) against plain-Python
statements of what each computes, on random worlds.

The filter's own tests (``test_inference.py``, ``test_particle_worlds.py``,
``test_opponent_types.py``) judge the beliefs it ends with; a helper that renames a card
in one place but not another, a proposal that never offers some cards, or a stock that is
not reshuffled uniformly shifts those beliefs by a little and raises nothing. Each helper
is compared here with its own restatement: the engine (``GameState``, through
``BatchedGame.game_state``) for legality and for a step, set operations on card lists for
the renamings, and counts over many draws for the random ones (every outcome the helper
may draw must come up, at about its share).
"""

from __future__ import annotations

import numpy as np

from agents.belief import worlds as W
from pis_env.batched import BatchedGame, RandomPolicy
from pis_env.batched import kernels as K
from pis_env.engine import DRAW
from pis_env.rules import Rules
from tests.pis_env.reference_draws import assert_uniform_permutations, splitmix64

N = 3
RULES = Rules(num_players=N)


def _worlds(size: int, seed: int, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(st, stock, cfg) of ``size`` random-play positions ``steps`` moves into a deal."""
    game = BatchedGame(size, RULES, seed=seed)
    game.reset()
    policy = RandomPolicy(size, seed=seed)
    for _ in range(steps):
        acts = policy(game)
        game.step(np.where(game.st[:, K.OVER] == 0, acts, -1), write_obs=False)
    return game.st.copy(), game.stock.copy(), game.cfg.copy()


def _engine(st: np.ndarray, stock: np.ndarray):
    """The reference engine's position of every row (``GameState``)."""
    game = BatchedGame(st.shape[0], RULES, seed=0)
    game.st[:] = st
    game.stock[:] = stock
    return [game.game_state(b) for b in range(st.shape[0])]


def _cards(mask: int) -> set[int]:
    return {c for c in range(52) if mask >> c & 1}


def _holders(st_row: np.ndarray, stock_row: np.ndarray) -> dict[int, object]:
    """Where each card is: a seat, ("stock", position) or "pile"."""
    where: dict[int, object] = {}
    for s in range(N):
        for c in _cards(int(st_row[K.HAND + s])):
            where[c] = s
    for i in range(int(st_row[K.SPOS]), int(st_row[K.SLEN])):
        where[int(stock_row[i])] = ("stock", i)
    for c in _cards(int(st_row[K.PILE])):
        where[c] = "pile"
    return where


def _renamed(mask: int, x: int, y: int) -> int:
    names = {x: y, y: x}
    return sum(1 << names.get(c, c) for c in _cards(mask))


def test_a_relabel_exchanges_two_names_in_hands_live_stock_and_recorded_hands():
    """Reference: ``x`` and ``y`` exchanged in every hand (as sets of ids), in the stock
    from its draw position on (the cards drawn before stay), and in the first ``used``
    recorded hands only; worlds not accepted stay as they were."""
    st, stock, _ = _worlds(300, seed=1, steps=9)
    rng = np.random.default_rng(2)
    used, cap = 5, 8
    dec_hand = rng.integers(0, 1 << 52, size=(300, cap), dtype=np.int64)
    xs = rng.integers(0, 52, 300)
    ys = (xs + rng.integers(1, 52, 300)) % 52
    accept = rng.random(300) < 0.7
    st1, stock1, dec1 = st.copy(), stock.copy(), dec_hand.copy()
    W.apply_swaps(st1, stock1, xs, ys, accept, N, dec1, used)
    for b in range(300):
        x, y = int(xs[b]), int(ys[b])
        if not accept[b]:
            x = y = 0  # nothing exchanged
        want_hands = [_renamed(int(st[b, K.HAND + s]), x, y) for s in range(N)]
        assert st1[b, K.HAND:K.HAND + N].tolist() == want_hands
        names = {x: y, y: x}
        lo, hi = int(st[b, K.SPOS]), int(st[b, K.SLEN])
        want_stock = stock[b].tolist()
        want_stock[lo:hi] = [names.get(c, c) for c in want_stock[lo:hi]]
        assert stock1[b].tolist() == want_stock
        want_dec = [_renamed(int(h), x, y) for h in dec_hand[b, :used]]
        assert dec1[b, :used].tolist() == want_dec
        assert (dec1[b, used:] == dec_hand[b, used:]).all()
        rest = np.ones(K.NF, dtype=bool)
        rest[K.HAND:K.HAND + N] = False
        assert (st1[b, rest] == st[b, rest]).all()


def test_refreshed_legal_masks_and_a_step_in_every_world_are_the_engines():
    """Reference: ``GameState.legal_mask`` of each world after its hands were rewritten
    (two hands exchanged), and ``GameState.apply`` of the same draw in every world whose
    deal is not over (a finished world is left as it is)."""
    st, stock, cfg = _worlds(200, seed=4, steps=14)
    st[:, [K.HAND + 0, K.HAND + 1]] = st[:, [K.HAND + 1, K.HAND + 0]]
    st[:, K.LEGAL] = 0
    W.refresh_legal(st, cfg)
    refs = _engine(st, stock)
    assert [int(st[b, K.LEGAL]) for b in range(200)] == [r.legal_mask() for r in refs]
    # a draw where every world may draw: the current player draws from its own stock
    pick = np.flatnonzero((st[:, K.LEGAL] >> DRAW) & 1 & (st[:, K.OVER] == 0))
    assert pick.size > 20
    st[pick[::4], K.OVER] = 1  # deals marked over: no step there
    st2, stock2 = st[pick].copy(), stock[pick].copy()
    before = st2.copy()
    # the filter's own argument types (its scratch arrays), so nothing more is compiled
    charges, winners, rewards = (np.zeros((pick.size, N), dtype=k)
                                 for k in (np.int64, np.int64, np.float64))
    W.step_worlds(st2, stock2, np.zeros(pick.size, dtype=np.uint64), cfg, np.int64(DRAW),
                  charges, winners, rewards)
    after = _engine(st2, stock2)
    for i, b in enumerate(pick.tolist()):
        if st[b, K.OVER]:
            assert (st2[i] == before[i]).all()
            continue
        ref = refs[b]
        ref.apply(DRAW)
        got = after[i]
        assert got.hands == ref.hands and got.current == ref.current
        assert got.legal_mask() == ref.legal_mask() and got.phase == ref.phase


def test_a_shuffle_of_the_stocks_permutes_what_is_left_uniformly():
    """Reference: a uniform permutation of the stock from its draw position on (each card
    at each place alike, about one card left in place per world), the cards drawn
    before and every other field untouched."""
    st, stock, _ = _worlds(1, seed=6, steps=3)
    rows = 5000
    st, stock = np.repeat(st, rows, axis=0), np.repeat(stock, rows, axis=0)
    lo, hi = int(st[0, K.SPOS]), int(st[0, K.SLEN])
    assert hi - lo > 20
    rng = np.empty(rows, dtype=np.uint64)
    K.seed_streams(rng, np.arange(rows, dtype=np.uint64) + 7)
    st1, stock1 = st.copy(), stock.copy()
    W.shuffle_stocks(st1, stock1, rng)
    assert (st1 == st).all() and (stock1[:, :lo] == stock[:, :lo]).all()
    assert_uniform_permutations(stock1[:, lo:hi].astype(np.int64),
                                 stock[0, lo:hi].astype(np.int64))


def test_proposals_pair_every_hidden_opponent_card_with_every_other_holders_card():
    """Reference: ``x`` uniform over the opponents' cards that were never public, ``y``
    uniform over the never-public cards of the stock and the other opponents (never the
    observer's, never ``x``'s holder's), and the count of recorded hands that hold
    exactly one of the two; every such pair is proposed, at about its chance."""
    st, stock, cfg = _worlds(1, seed=5, steps=6)
    rows = 30000
    st, stock = np.repeat(st, rows, axis=0), np.repeat(stock, rows, axis=0)
    row, srow = st[0], stock[0]
    opp = {s: _cards(int(row[K.HAND + s])) for s in range(1, N)}
    live = [int(c) for c in srow[int(row[K.SPOS]):int(row[K.SLEN])]]
    public_cards = set(list(opp[1])[:2]) | set(live[:3]) | _cards(int(row[K.PILE])) \
        | _cards(int(row[K.HAND]))
    public = sum(1 << c for c in public_cards)
    held = {c: s for s, cards in opp.items() for c in cards if c not in public_cards}
    hidden = set(held) | {c for c in live if c not in public_cards}
    rng = np.random.default_rng(8)
    used = 6
    dec_hand = np.tile(rng.integers(0, 1 << 52, size=(1, 10), dtype=np.int64), (rows, 1))
    dec_mover = rng.integers(1, N, 10).astype(np.int64)
    streams = np.empty(rows, dtype=np.uint64)
    K.seed_streams(streams, np.arange(rows, dtype=np.uint64))
    xs, ys, counts = (np.empty(rows, dtype=np.int64) for _ in range(3))
    W.propose_swaps(st, stock, streams, cfg, np.int64(public), dec_mover, dec_hand, used,
                    xs, ys, counts)
    pairs: dict[tuple[int, int], int] = {}
    for x, y in zip(xs.tolist(), ys.tolist()):
        pairs[x, y] = pairs.get((x, y), 0) + 1
    want = {}
    for x, s in held.items():
        pool = [y for y in hidden if y not in opp[s]]
        for y in pool:
            want[x, y] = rows / len(held) / len(pool)
    assert set(pairs) == set(want)  # every pair the proposal may make, and no other
    expected = np.array([want[k] for k in want])
    got = np.array([pairs[k] for k in want])
    chi2 = ((got - expected) ** 2 / expected).sum()
    dof = len(want) - 1
    assert expected.min() > 5 and chi2 < dof + 6 * np.sqrt(2 * dof), chi2
    for b in range(0, rows, 97):
        x, y = int(xs[b]), int(ys[b])
        differ = sum(((int(h) >> x) & 1) != ((int(h) >> y) & 1) for h in dec_hand[b, :used])
        assert counts[b] == differ
    # a world whose opponents hold nothing hidden makes no proposal
    W.propose_swaps(st[:4], stock[:4], streams[:4], cfg, np.int64((1 << 52) - 1), dec_mover,
                    dec_hand[:4], used, xs[:4], ys[:4], counts[:4])
    assert (xs[:4] == -1).all() and (ys[:4] == -1).all() and (counts[:4] == 0).all()


def test_swapped_rows_are_the_changed_decisions_with_the_movers_hand_renamed():
    """Reference: for each proposing world in order, each of its first ``used`` decisions
    whose recorded hand holds exactly one of ``x``, ``y``: that decision's row with the
    mover's hand renamed (the recorded hand), and its legal mask recomputed (``legal_of``,
    which the engine differential holds equal to ``GameState.legal_mask``)."""
    st, stock, cfg = _worlds(12, seed=9, steps=5)
    rng = np.random.default_rng(10)
    used, worlds_n = 7, 40
    dec_rows = st[rng.integers(0, 12, 9)]
    dec_mover = rng.integers(1, N, 9).astype(np.int64)
    dec_hand = rng.integers(0, 1 << 52, size=(worlds_n, 9), dtype=np.int64)
    xs = rng.integers(0, 52, worlds_n)
    ys = (xs + rng.integers(1, 52, worlds_n)) % 52
    counts = np.array([sum(((int(h) >> int(x)) & 1) != ((int(h) >> int(y)) & 1)
                           for h in dec_hand[b, :used]) for b, (x, y) in
                       enumerate(zip(xs, ys))])
    counts[::5] = 0  # not proposing
    total = int(counts.sum())
    rows = np.empty((total, K.NF), dtype=np.int64)
    wo, ti = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64)
    k = W.swapped_rows(dec_rows, dec_mover, dec_hand, used, xs, ys, counts, cfg, rows, wo,
                       ti)
    want = []
    for b in range(worlds_n):
        if counts[b] == 0:
            continue
        for t in range(used):
            h = int(dec_hand[b, t])
            new = _renamed(h, int(xs[b]), int(ys[b]))
            if new != h:
                row = dec_rows[t].copy()
                row[K.HAND + dec_mover[t]] = new
                row[K.LEGAL] = K.legal_of(row[None], 0, cfg)
                want.append((b, t, row))
    assert k == len(want) == total
    assert wo.tolist() == [b for b, _, _ in want] and ti.tolist() == [t for _, t, _ in want]
    np.testing.assert_array_equal(rows, np.array([r for _, _, r in want]))


def test_hand_bits_are_the_cards_of_each_mask():
    """Reference: the card ids of each mask, listed."""
    rng = np.random.default_rng(12)
    hands = rng.integers(0, 1 << 52, size=(30, 3), dtype=np.int64)
    hands[0, 0] = 0
    out = np.zeros((30, 3, 52))
    W.hand_bits(hands, out)
    for i in range(30):
        for s in range(3):
            assert set(np.flatnonzero(out[i, s]).tolist()) == _cards(int(hands[i, s]))
    assert set(np.unique(out).tolist()) <= {0.0, 1.0}


def _one_deal(rows: int, seed: int, phase: int, deal: bool = True) -> tuple:
    """``rows`` worlds of one position in ``phase`` with an opponent to move, their hidden
    cards (not the observer's, seat 0, nor the pile's) dealt differently in each by
    random renamings (with ``deal``); (st, stock, cfg, public cards)."""
    st, stock, cfg = _worlds(400, seed=seed, steps=4 if phase == K.OPENING else 12)
    b = int(np.flatnonzero((st[:, K.OVER] == 0) & (st[:, K.CUR] != 0)
                           & (st[:, K.PHASE] == phase))[0])
    st, stock = np.repeat(st[b:b + 1], rows, axis=0), np.repeat(stock[b:b + 1], rows, axis=0)
    public = _cards(int(st[0, K.HAND])) | _cards(int(st[0, K.PILE]))
    hidden = np.array(sorted(set(range(52)) - public))
    rng = np.random.default_rng(seed)
    dec = np.zeros((rows, 1), dtype=np.int64)
    for _ in range(40 if deal else 0):
        xs = rng.choice(hidden, rows)
        ys = rng.choice(hidden, rows)
        W.apply_swaps(st, stock, xs, ys, xs != ys, N, dec, 0)
    W.refresh_legal(st, cfg)
    return st, stock, cfg, public


def _renamings_only(before, sbefore, after, safter, public_cards) -> None:
    """Every card still in exactly one place, every hand of its size, and every public
    card where it was."""
    for b in range(before.shape[0]):
        old, new = _holders(before[b], sbefore[b]), _holders(after[b], safter[b])
        assert len(old) == len(new) == 52
        for s in range(N):
            assert (int(after[b, K.HAND + s]).bit_count()
                    == int(before[b, K.HAND + s]).bit_count())
        assert after[b, K.SLEN] - after[b, K.SPOS] == before[b, K.SLEN] - before[b, K.SPOS]
        for c in public_cards:
            assert new[c] == old[c], (b, c)


def _no_history(rows: int) -> tuple:
    return (np.zeros((1, K.NF), dtype=np.int64), np.zeros(1, dtype=np.int64),
            np.zeros(1, dtype=np.int64), np.zeros((rows, 1), dtype=np.int64), 0)


def test_a_repair_makes_a_played_card_legal_by_renaming_hidden_cards_only():
    """Reference: afterwards the engine finds the card legal for the player to move in
    every world marked repaired (1), which it was not before; a world left untouched (0)
    held it already and is unchanged; only never-public cards changed places, and every
    hand kept its size."""
    rows = 300
    st, stock, cfg, public = _one_deal(rows, seed=13, phase=K.PLAY)
    mover = int(st[0, K.CUR])
    playable = [c for c in range(52) if c not in public
                and any((int(st[b, K.LEGAL]) >> c) & 1 for b in range(rows))]
    assert playable
    action = playable[0]
    s1, k1 = st.copy(), stock.copy()
    repaired = np.empty(rows, dtype=np.int64)
    streams = np.empty(rows, dtype=np.uint64)
    K.seed_streams(streams, np.arange(rows, dtype=np.uint64))
    W.repair_for_action(s1, k1, streams, cfg, np.int64(action),
                        np.int64(sum(1 << c for c in public)), _no_history(rows), repaired)
    refs = _engine(s1, k1)
    had = (st[:, K.HAND + mover] >> action) & 1
    assert (repaired == 0).sum() > 10 and (repaired == 1).sum() > 10
    assert set(repaired.tolist()) <= {0, 1}
    for b in range(rows):
        if repaired[b] == 0:
            assert had[b] and (s1[b] == st[b]).all() and (k1[b] == stock[b]).all()
        else:
            assert not had[b] and (refs[b].legal_mask() >> action) & 1, b
            assert refs[b].hands[mover] >> action & 1
    _renamings_only(st, stock, s1, k1, public)


def test_a_repair_makes_an_opening_draw_legal_by_taking_the_clubs_away():
    """Reference: the engine's opening rule (a player holding a club must play one): in
    every repaired world the opener holds no club afterwards and may draw, by renamings of
    never-public cards only."""
    rows = 200
    st, stock, cfg, public = _one_deal(rows, seed=21, phase=K.OPENING)
    s1, k1 = st.copy(), stock.copy()
    repaired = np.empty(rows, dtype=np.int64)
    streams = np.empty(rows, dtype=np.uint64)
    K.seed_streams(streams, np.arange(rows, dtype=np.uint64) + 3)
    W.repair_for_action(s1, k1, streams, cfg, np.int64(DRAW),
                        np.int64(sum(1 << c for c in public)), _no_history(rows), repaired)
    refs = _engine(s1, k1)
    assert set(repaired.tolist()) <= {0, 1} and (repaired == 1).sum() > 50
    for b in np.flatnonzero(repaired == 1):
        assert (refs[b].legal_mask() >> DRAW) & 1
    _renamings_only(st, stock, s1, k1, public)


def test_the_observers_draws_are_put_on_top_of_every_worlds_stock():
    """Reference: the cards the observer is about to draw, in order, at the draw position
    of every world's stock afterwards; no opponent holds one; only never-public cards
    (the drawn ones included: hidden until now) changed places, every hand of its size."""
    rows = 300
    st, stock, cfg, public = _one_deal(rows, seed=17, phase=K.PLAY)
    hidden = sorted(set(range(52)) - public)
    cards = np.array([hidden[3], hidden[-2]], dtype=np.int64)
    s1, k1 = st.copy(), stock.copy()
    repaired = np.empty(rows, dtype=np.int64)
    streams = np.empty(rows, dtype=np.uint64)
    K.seed_streams(streams, np.arange(rows, dtype=np.uint64) + 5)
    W.place_own_draws(s1, k1, streams, cfg, cards, np.int64(sum(1 << c for c in public)),
                      _no_history(rows), repaired)
    assert set(repaired.tolist()) <= {0, 1} and (repaired == 1).sum() > 50
    held = np.zeros(rows, dtype=bool)
    for s in range(1, N):
        held |= ((st[:, K.HAND + s] >> cards[0]) & 1 | (st[:, K.HAND + s] >> cards[1]) & 1) == 1
    assert (held == (repaired == 1)).all()
    pos = s1[:, K.SPOS]
    for b in range(rows):
        assert k1[b, pos[b]:pos[b] + 2].tolist() == cards.tolist()
    _renamings_only(st, stock, s1, k1, public)


def test_a_repair_picks_the_first_candidate_from_a_random_start_that_keeps_history():
    """Reference: ``_pick`` restated: the candidates in ascending order, a start drawn by
    splitmix64 and Lemire's reduction from the world's stream, then the first candidate
    in cyclic order from the start whose renaming with ``x`` leaves every recorded
    decision legal (its action in the legal set of the hand then held, renamed), or the
    start's candidate when none does."""
    st, _, cfg = _worlds(80, seed=23, steps=7)
    rng = np.random.default_rng(24)
    live = np.flatnonzero((st[:, K.OVER] == 0) & (st[:, K.PHASE] == K.PLAY))
    picks = rng.choice(live, 10, replace=False)
    dec_rows = st[picks].copy()
    dec_mover = dec_rows[:, K.CUR].copy()
    dec_action = np.array([rng.choice([a for a in _cards(int(r[K.LEGAL])) if a < 52] or [0])
                           for r in dec_rows], dtype=np.int64)
    used = 10
    dec_hand = np.tile(dec_rows[np.arange(10), K.HAND + dec_mover], (1, 1))
    hist = (dec_rows, dec_mover, dec_action, dec_hand, used)
    scratch = np.zeros((1, K.NF), dtype=np.int64)

    def keeps(x: int, y: int) -> bool:
        for t in range(used):
            h = int(dec_hand[0, t])
            new = _renamed(h, x, y)
            if new != h:
                row = dec_rows[t].copy()
                row[K.HAND + dec_mover[t]] = new
                if not (int(K.legal_of(row[None], 0, cfg)) >> int(dec_action[t])) & 1:
                    return False
        return True

    preferred = fallback = 0
    for case in range(400):
        x = int(dec_action[case % 10]) if case % 2 else int(rng.integers(52))
        pool_cards = sorted(rng.choice([c for c in range(52) if c != x], 6, replace=False))
        pool = sum(1 << int(c) for c in pool_cards)
        seed = int(rng.integers(0, 2**63))
        stream = np.array([seed], dtype=np.uint64)
        got = W._pick(np.int64(pool), np.int64(x), stream, 0, hist, scratch, cfg)
        state, z = splitmix64(seed)
        start = ((z >> 32) * len(pool_cards)) >> 32
        order = [pool_cards[(start + i) % len(pool_cards)] for i in range(len(pool_cards))]
        good = [y for y in order if keeps(x, int(y))]
        assert got == (good[0] if good else order[0]), case
        assert int(stream[0]) == state
        preferred += bool(good) and good[0] != order[0]
        fallback += not good
    assert preferred > 80 and fallback > 60, (preferred, fallback)


def test_an_opening_repair_takes_another_opponents_cards_when_the_stock_is_public():
    """Reference: the opening rule, with every stock card public: the opener's clubs are
    renamed with the other opponent's hidden non-clubs (the stock stays as it is); with
    every card public but the opener's, nothing can be renamed and the world is marked
    dead (2)."""
    rows = 60
    st, stock, cfg, public = _one_deal(rows, seed=21, phase=K.OPENING, deal=False)
    opener = int(st[0, K.CUR])
    other = ({1, 2} - {opener}).pop()
    clubs = _cards(int(st[0, K.HAND + opener])) & set(range(13))
    assert clubs
    live = {int(c) for c in stock[0, int(st[0, K.SPOS]):int(st[0, K.SLEN])]}
    streams = np.empty(rows, dtype=np.uint64)
    K.seed_streams(streams, np.arange(rows, dtype=np.uint64) + 11)
    for everything in (False, True):
        known = public | live
        if everything:
            known |= _cards(int(st[0, K.HAND + other]))
        s1, k1 = st.copy(), stock.copy()
        repaired = np.empty(rows, dtype=np.int64)
        W.repair_for_action(s1, k1, streams, cfg, np.int64(DRAW),
                            np.int64(sum(1 << c for c in known)), _no_history(rows), repaired)
        if everything:
            assert (repaired == 2).all()
            continue
        assert (repaired == 1).all()
        assert (k1 == stock).all()
        refs = _engine(s1, k1)
        for b in range(rows):
            assert not _cards(int(s1[b, K.HAND + opener])) & set(range(13))
            assert clubs <= _cards(int(s1[b, K.HAND + other]))
            assert (refs[b].legal_mask() >> DRAW) & 1
        _renamings_only(st, stock, s1, k1, known)


def test_an_observers_draw_held_by_an_opponent_is_renamed_with_a_public_stock_card_last():
    """Reference: when every stock card is public, the opponent holding a card the
    observer draws gets a stock card other than the drawn ones in its place (the only
    renaming left), and the drawn cards lie on top of the stock in order."""
    rows = 40
    st, stock, cfg, public = _one_deal(rows, seed=17, phase=K.PLAY, deal=False)
    live = [int(c) for c in stock[0, int(st[0, K.SPOS]):int(st[0, K.SLEN])]]
    held = sorted(_cards(int(st[0, K.HAND + 1])))
    cards = np.array([held[0], live[-1]], dtype=np.int64)
    known = public | set(live)
    s1, k1 = st.copy(), stock.copy()
    repaired = np.empty(rows, dtype=np.int64)
    streams = np.empty(rows, dtype=np.uint64)
    K.seed_streams(streams, np.arange(rows, dtype=np.uint64) + 2)
    W.place_own_draws(s1, k1, streams, cfg, cards, np.int64(sum(1 << c for c in known)),
                      _no_history(rows), repaired)
    assert (repaired == 1).all()
    gave = set()
    for b in range(rows):
        pos = int(s1[b, K.SPOS])
        assert k1[b, pos:pos + 2].tolist() == cards.tolist()
        new = _cards(int(s1[b, K.HAND + 1]))
        assert held[0] not in new
        (extra,) = new - set(held)
        assert extra in live and extra not in cards.tolist()
        gave.add(extra)
    assert len(gave) > 5  # a random stock card, not always the same one
    _renamings_only(st, stock, s1, k1, public)
