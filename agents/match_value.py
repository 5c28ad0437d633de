"""A rollout's worth to the match: the chance that it wins the match for the searching
seat, given the standing after this deal and a model of the deals left.

Why: a match (``num_deals > 1``) is won by the lowest total charge after the last deal, so
one deal's charge differential is the wrong thing to maximise. Far ahead after three
deals, keeping one's own charge low matters more than winning the deal; far behind, only
a big swing helps; in the first deal of a long match every point counts about the same.
The search (``agents.search``) and Monte Carlo (``agents.mc``) bots score each rollout with
:func:`match_scores` at a match table; at a one-deal table they keep their deal scores.

**The model of the deals left** is measured once and shipped as data
(``agents/data/deal_charges.json``, written by ``scripts/measure_deal_charges.py`` from
heuristic self-play deals, the policy that plays the bots' own rollouts): per table size,
the histogram of the charges of the seats that did not win a deal. A model deal charges
one seat, drawn at random, 0 and every other seat an independent draw from that
histogram. For ``L`` deals left, :func:`future_charges` sums ``L`` model deals
``FUTURE_SAMPLES`` times, from a generator seeded by the table size and ``L`` alone: the
same futures at every decision and for every action (common random numbers), so the
scores stay deterministic and differences between actions are not sampling noise.

**The score** of a rollout ending with charges ``c`` (seat 0 the searching seat, as in the
rollouts) at standing ``t`` is 100 x the mean over the futures ``f`` of seat 0's share of
the match win in ``t + c + f`` (1 for the lowest total alone, ``1/w`` for a tie of ``w``
seats, 0 otherwise): its expected match win rate in percent. At the last deal there is
no future: the score is the match result itself.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

#: The shipped model of a deal's charges (``scripts/measure_deal_charges.py``).
DATA_PATH = Path(__file__).resolve().parent / "data" / "deal_charges.json"
#: Sampled futures per number of deals left.
FUTURE_SAMPLES = 256
#: Rows of rollouts scored at once (bounds the [rows, futures, seats] array).
_ROWS = 1024


@functools.lru_cache(maxsize=1)
def _table() -> dict:
    data = json.loads(DATA_PATH.read_text(encoding="utf-8"))
    if data.get("format") != "pis-yedili-deal-charges":
        raise ValueError(f"{DATA_PATH}: not a deal-charges table")
    return data["charges"]


def charge_model(num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """``(values, probabilities)``: the charge of a seat that did not win a deal at a table
    of ``num_players``, as measured."""
    entry = _table().get(str(num_players))
    if entry is None:
        raise ValueError(f"no deal-charges model for {num_players} players in {DATA_PATH}")
    counts = np.asarray(entry["counts"], dtype=np.float64)
    return np.asarray(entry["values"], dtype=np.int64), counts / counts.sum()


@functools.lru_cache(maxsize=256)
def future_charges(num_players: int, deals_left: int,
                   samples: int = FUTURE_SAMPLES) -> np.ndarray:
    """int64 [samples, num_players]: sums of ``deals_left`` model deals (one row of zeros
    when no deal is left). Read-only, and the same for the same arguments."""
    if deals_left <= 0:
        out = np.zeros((1, num_players), np.int64)
    else:
        values, p = charge_model(num_players)
        rng = np.random.default_rng([num_players, deals_left, samples])
        out = np.zeros((samples, num_players), np.int64)
        rows = np.arange(samples)
        for _ in range(deals_left):
            charges = values[rng.choice(values.size, size=(samples, num_players), p=p)]
            charges[rows, rng.integers(num_players, size=samples)] = 0
            out += charges
    out.setflags(write=False)
    return out


def win_share(totals: np.ndarray) -> np.ndarray:
    """float64 [...]: seat 0's share of the win for final totals ``[..., n]`` (the lowest
    total wins, a tie of ``w`` seats shares it: ``1/w`` each)."""
    own = totals[..., 0]
    best_other = totals[..., 1:].min(axis=-1)
    share = (own < best_other).astype(np.float64)
    tie = own == best_other
    if tie.any():
        share[tie] = 1.0 / (1 + (totals[tie][:, 1:] == own[tie][:, None]).sum(axis=-1))
    return share


def match_scores(charges: np.ndarray, totals: Sequence[int], deal: int,
                 num_deals: int, samples: int = FUTURE_SAMPLES) -> np.ndarray:
    """float64 [B]: 100 x seat 0's expected share of the match win after each rollout's
    deal charges ``charges`` [B, n] (seat 0 the searching seat), from the standing
    ``totals`` [n] before this deal (same seat order), in deal ``deal`` (0-based) of
    ``num_deals``, over ``samples`` futures. See the module docstring."""
    charges = np.asarray(charges, dtype=np.int64)
    n = charges.shape[1]
    standing = (charges + np.asarray(totals, dtype=np.int64)[None, :]).astype(np.int32)
    future = future_charges(n, num_deals - deal - 1, samples).astype(np.int32)
    # Rollouts end on few distinct charge vectors: score each distinct standing once.
    distinct, inverse = np.unique(standing, axis=0, return_inverse=True)
    out = np.empty(len(distinct))
    for start in range(0, len(distinct), _ROWS):
        rows = distinct[start:start + _ROWS]
        out[start:start + _ROWS] = win_share(rows[:, None, :] + future[None, :, :]).mean(axis=1)
    return 100.0 * out[inverse.reshape(-1)]


def standing(decoded: Mapping, num_deals: int) -> tuple[int, list[int]] | None:
    """``(deal index, totals observer first)`` of a decoded match observation; ``None`` at
    a one-deal table (where the bots keep their deal scores)."""
    if num_deals <= 1:
        return None
    return int(decoded["deal"]), [int(t) for t in decoded["scores"]]


def settled_charges(charges: np.ndarray, winners: np.ndarray | None, points: np.ndarray,
                    truncated: np.ndarray) -> np.ndarray:
    """The rollouts' charges [B, n], a truncated rollout charged as if the deal had ended
    on hand points (the lowest hand wins and pays nothing, the others their points), as
    the deal scores of ``agents.search`` and ``agents.mc`` treat one (``winners`` is not
    needed: the charges say it, and is taken for the callers' argument order)."""
    charges = np.array(charges, dtype=np.int64)
    if truncated.any():
        pts = np.asarray(points, dtype=np.int64)[truncated]
        low = pts.min(axis=1, keepdims=True)
        charges[truncated] = np.where(pts == low, 0, pts)
    return charges


def state_charges(state) -> list[int]:
    """:func:`settled_charges` of one finished (or truncated) engine state, its seats in
    the state's order."""
    from pis_env.cards import points_of

    truncated = state.end_reason == "truncated" or state.charges is None
    charges = np.zeros((1, state.num_players), np.int64) if truncated else np.asarray(
        [state.charges])
    points = np.asarray([[points_of(h) for h in state.hands]])
    return settled_charges(charges, None, points, np.array([truncated]))[0].tolist()


__all__ = ["DATA_PATH", "FUTURE_SAMPLES", "charge_model", "future_charges", "match_scores",
           "settled_charges", "standing", "state_charges", "win_share"]
