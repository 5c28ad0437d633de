"""The two loops that step games: ``BatchedGame.step``'s (:func:`step_games`) and
``BatchedEnv``'s (:func:`env_advance`, the learner's seat against opponents).

Each applies the rules of ``kernels`` and, when handed the layout-1 public record of
``public`` (``pub``; ``None`` when no seat reads layout 1), keeps it in the same pass:
every action is recorded before it is applied, every deal and match that begins starts
its record, and every layout-1 row written gets its tail while the row's head is still in
the cache (``public.write_public`` leaves a layout-0 row as it is: a v0 seat at a table
keeping the record for v1 ones). numba compiles each loop once per type of ``pub`` and
prunes the ``pub is None`` branches, so layout 0 runs without a trace of the record:
one loop, two machine codes. They live here, above ``kernels`` and ``public``, because
they need both (``public`` reads ``kernels``' constants).

Both are compiled with ``_nrt=False``: without numba's reference counting. With it, every
array an inlined helper receives is counted in and out per game where numba cannot
prove the pair redundant (the record's helpers: 5x slower), and these loops take only
arrays they are handed: nothing they call allocates (``kernels._end_deal`` works in the
output rows). Measured with ``python -m benchmarks.batched``: layout 0 1.4x faster,
layout 1 1.6x, at 1,024 games.

numba's cache does not notice a change in an ``inline="always"`` function of another
module: this module drops its loops' cache when the sources of ``kernels`` or
``public`` change (:func:`_flush_if_sources_changed`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from numba import njit

from . import kernels as K
from . import public as P

#: An action of ``BatchedEnv.step`` that leaves its game as it is (no move, no reward;
#: obs and mask unchanged): how a vector env with gymnasium's next-step auto-reset holds
#: a game whose new match it has not shown yet.
SKIP = -2
#: numba's ``_nrt=False``: compiled without its reference counting (module docstring);
#: a private keyword, passed through a mapping since numba's typed ``njit`` omits it.
NO_REFCOUNT: dict = {"_nrt": False}


@njit(cache=True, **NO_REFCOUNT)
def step_games(g, actions, auto_reset, out, term_seats, term_obs, pub):
    """Apply ``actions[b]`` to every game ``b`` with ``actions[b] >= 0``, after checking
    them all (``kernels.check_actions``; an illegal action forfeits with
    ``illegal_action="terminate"``): returns that check's code, and changes nothing
    unless it is 0. ``g`` is the ``kernels.Batch``, ``out`` the ``kernels.StepOut``,
    ``pub`` the layout-1 record or ``None`` (module docstring).

    Per game: ``out.reason[b]`` why a deal ended at this step (0: none), ``out.done[b]``
    the match ended; where a deal ended ``out.charges``, ``out.winners``, ``out.rewards``
    hold its results. A finished deal of an unfinished match deals the next one at once
    (as the AEC env does). A finished match writes its final position seen by
    ``term_seats[b]`` (``< 0``: the player who acted) into ``term_obs[b]`` when
    ``term_obs`` has B rows, then with ``auto_reset`` starts a new match. When
    ``out.obs`` / ``out.masks`` have B rows they receive every game's current observation
    / mask."""
    st, stock, decks, rng, cfg, size_tab = g
    out_reason, out_done, out_charges, out_winners, out_rewards, obs, masks = out
    code = K.check_actions(st, actions, cfg[K.C_TERMINATE] != 0)
    if code != 0:
        return code
    write_terminal = term_obs.shape[0] == actions.shape[0]
    write_o = obs.shape[0] == actions.shape[0]
    write_m = masks.shape[0] == actions.shape[0]
    tail = False  # the rows are layout 1's
    if pub is not None:
        tail = P.has_tail(pub, obs)
    for b in range(actions.shape[0]):
        a = actions[b]
        out_reason[b] = 0
        out_done[b] = 0
        if a >= 0:
            if pub is not None:
                if a < K.NUM_ACTIONS and (st[b, K.LEGAL] >> a) & 1:  # a forfeit: no event
                    P.record_action(pub, st, cfg, b, a)
            K.apply_action(st, stock, rng, cfg, b, a, out_charges, out_winners, out_rewards)
            if st[b, K.OVER]:
                out_reason[b] = st[b, K.REASON]
                if st[b, K.MOVER]:
                    out_done[b] = 1
                    if write_terminal:
                        seat = term_seats[b]
                        if seat < 0:
                            seat = st[b, K.LAST]
                        K.write_obs(st, cfg, b, seat, term_obs[b], size_tab)
                        if pub is not None:
                            if tail:
                                P.write_public(pub, st, cfg, b, seat, term_obs[b], size_tab)
                    if auto_reset:
                        st[b, K.NSTACK] = 0
                        K.new_match(st, stock, decks, rng, cfg, b, np.int64(-1))
                        if pub is not None:
                            P.new_match_record(pub, st, b)
                else:
                    K.start_deal(st, stock, decks, rng, cfg, b,
                                 (st[b, K.DEALER] + 1) % cfg[K.C_N])
                    if pub is not None:
                        P.new_deal(pub, st, b)
        if write_o:
            K.write_obs(st, cfg, b, st[b, K.CUR], obs[b], size_tab)
            if pub is not None:
                if tail:
                    P.write_public(pub, st, cfg, b, st[b, K.CUR], obs[b], size_tab)
        if write_m:
            K.write_mask(st[b, K.LEGAL], masks[b])
    return 0


@njit(cache=True, **NO_REFCOUNT)
def env_advance(g, out, env, actions, pub):
    """Advance every game ``b`` with ``actions[b] != SKIP`` for ``BatchedEnv``: apply
    ``actions[b]`` (when ``>= 0``: the learner's or an external opponent's decision), then
    play in-kernel opponents (``kinds[b, seat]`` 0: random legal play) until it is the
    learner's turn (``wait[b] = 0``; its observation and mask are written) or an external
    opponent's (``wait[b] = kinds[b, seat] >= EXTERNAL``: a bot or network outside).
    With ``skip_forced`` the learner's forced moves (a single legal action) are played
    here too, and do not count as its first decision of a match.

    Rewards of deals that end go to ``reward[b]`` (the learner's seat's); a finished match
    sets ``done[b]``, writes the learner's view of its final position into ``term_obs[b]``,
    the match totals into ``term_totals[b]``, its opponent kinds into ``term_kinds[b]`` and
    its final state into ``term_st[b]`` / ``term_stock[b]``, and starts a new match, whose
    opponents are drawn from the mix (``kernels.draw_opponents``) when ``cum`` is not
    empty. Until the learner's first decision in a new match, its deal rewards wait in
    ``carry[b]`` for the next step; a new match that ends before that decision is
    discarded (an episode needs at least one decision).

    ``pub``: the layout-1 record, or ``None`` (module docstring).

    ``g``: the ``kernels.Batch``; ``out``: the ``kernels.StepOut`` (``out.done`` is the
    learner's episode end, ``out.obs`` / ``out.masks`` its view); ``env``: the
    ``kernels.LearnerSeats``."""
    st, stock, decks, rng, cfg, size_tab = g
    out_reason, done, out_charges, out_winners, out_rewards, obs, masks = out
    (learner, kinds, opp_rng, seat_rng, reward, carry, wait, decisions, term_obs,
     term_totals, term_kinds, term_st, term_stock, cum, table, per_game, mix_rng,
     skip_forced) = env
    n = cfg[K.C_N]
    mix = cum.shape[0] > 0
    tail = False  # the learner's rows are layout 1's
    if pub is not None:
        tail = P.has_tail(pub, obs)
    for b in range(actions.shape[0]):
        a = actions[b]
        if a == SKIP:
            continue
        forced = False
        while True:
            if a >= 0:
                if st[b, K.CUR] == learner[b, K.L_SEAT] and not forced:
                    learner[b, K.L_FRESH] = 0
                decisions[b] += 1
                if pub is not None:
                    if a < K.NUM_ACTIONS and (st[b, K.LEGAL] >> a) & 1:  # a forfeit
                        P.record_action(pub, st, cfg, b, a)
                K.apply_action(st, stock, rng, cfg, b, a, out_charges, out_winners, out_rewards)
                if st[b, K.OVER]:
                    r = out_rewards[b, learner[b, K.L_SEAT]]
                    if learner[b, K.L_FRESH]:
                        carry[b] += r
                    else:
                        out_reason[b] = st[b, K.REASON]
                        reward[b] += r
                    if st[b, K.MOVER]:
                        if not learner[b, K.L_FRESH]:
                            done[b] = 1
                            seat = learner[b, K.L_SEAT]
                            K.write_obs(st, cfg, b, seat, term_obs[b], size_tab)
                            if pub is not None:
                                if tail:
                                    P.write_public(pub, st, cfg, b, seat, term_obs[b],
                                                   size_tab)
                            for i in range(n):
                                term_totals[b, i] = st[b, K.TOTAL + i]
                                term_kinds[b, i] = kinds[b, i]
                            for i in range(st.shape[1]):  # (a slice copy needs NRT)
                                term_st[b, i] = st[b, i]
                            for i in range(stock.shape[1]):
                                term_stock[b, i] = stock[b, i]
                        carry[b] = 0.0
                        st[b, K.NSTACK] = 0
                        K.new_match(st, stock, decks, rng, cfg, b, np.int64(-1))
                        if pub is not None:
                            P.new_match_record(pub, st, b)
                        if learner[b, K.L_REDRAW]:
                            learner[b, K.L_SEAT] = K.rand_below(seat_rng, b, n)
                        learner[b, K.L_FRESH] = 1
                        if mix:
                            K.draw_opponents(kinds, b, n, cum, table, per_game, mix_rng)
                    else:
                        K.start_deal(st, stock, decks, rng, cfg, b, (st[b, K.DEALER] + 1) % n)
                        if pub is not None:
                            P.new_deal(pub, st, b)
            cur = st[b, K.CUR]
            if cur == learner[b, K.L_SEAT]:
                legal = st[b, K.LEGAL]
                if skip_forced and legal & (legal - 1) == 0:
                    a = K.lowbit_index(legal)
                    forced = True
                    continue
                wait[b] = 0
                K.write_obs(st, cfg, b, cur, obs[b], size_tab)
                if pub is not None:
                    if tail:
                        P.write_public(pub, st, cfg, b, cur, obs[b], size_tab)
                K.write_mask(legal, masks[b])
                break
            forced = False
            kind = kinds[b, cur]
            if kind >= K.EXTERNAL:
                wait[b] = kind
                break
            a = K.random_action(st[b, K.LEGAL], opp_rng, b)


def _flush_if_sources_changed(*loops) -> None:
    """Drop the cached machine code of ``loops`` when ``kernels`` or ``public`` changed.

    numba keys a cached function by its own file only, and these loops inline the helpers
    of both modules: after an edit there (or a mutant of ``scripts/mutants.py``) the cache
    would still run the old code. A digest of the two sources beside the cache says
    whether it was built from them. (The loops compile in a few seconds.)"""
    sources = [Path(f) for f in (K.__file__, P.__file__) if f]
    digest = hashlib.sha256(b"".join(f.read_bytes() for f in sources)).hexdigest()
    for loop in loops:
        cache = loop._cache  # numba's FunctionCache: cache_path, flush()
        stamp = Path(cache.cache_path) / f"{__name__.rsplit('.', 1)[-1]}.{loop.__name__}.sources"
        try:
            if stamp.read_text() == digest:
                continue
        except OSError:
            pass
        cache.flush()
        try:
            stamp.write_text(digest)
        except OSError:  # a read-only cache: numba does not write it either
            pass


_flush_if_sources_changed(step_games, env_advance)
