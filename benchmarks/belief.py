"""How good the beliefs over hidden cards are, on the same positions: uniform, the
``drew_on_suit`` hints, the learned card-location model (``agents.belief.tracker``) and the
particle filter (``agents.belief.ParticleBelief``), against opponents.

    python -m benchmarks.belief                                  # a short run
    python -m benchmarks.belief --positions 2000                 # the docs' table
    python -m benchmarks.belief --players 2 --opponents random --opponent-model uniform

Each table size plays ``pis_yedili_v1`` deals (seeded, one after another) until every
opponent kind has given ``--positions`` positions: seat 0 plays the heuristic or greedy
(alternate deals, as ``train.belief_model.training``'s data), every other seat the opponent kind; at
each decision of seat 0 with a choice every belief is asked, fed the same observations.
Opponent kinds: the two held-out heuristic variants (``agents.heuristic.variants``,
never used by any model or for any default), ``random``, and the ``heuristic`` itself
(the model's own kind, for reference). Printed per table size and opponent (and the
held-out variants pooled, "held-out mix"):

* log-loss: nats per unseen card, over its places (each opponent and the stock);
* placed right: the share of the opponents' cards a draw from the belief places in the
  right hand (expected), and per position;
* calibration of the filter: expected calibration error over 10 equal-width bins of its
  (opponent, card) probabilities, and the smallest probability it gave a card the
  opponent actually held;
* milliseconds per update (one observation taken in) of the learned belief (tracker and
  model) and of the filter.

Figures are wall-clock on whatever else the machine runs.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agents.belief.tracker import (
    DealTracker,
    expected_correct,
    hint_belief,
    load_model,
    log_loss,
    uniform_belief,
)
from agents.heuristic.variants import HELD_OUT

BELIEFS = ("uniform", "hints", "learned", "particles")
OPPONENTS = tuple(HELD_OUT) + ("random", "heuristic")
DEFAULT_POSITIONS = 300
MAX_POSITIONS = 100_000
BINS = 10


def _opponent(name: str, n: int, seed: int):
    from agents import make

    if name in HELD_OUT:
        return make("held_out", variant=name, num_players=n, seed=seed)
    return make(name, num_players=n, seed=seed)


class Tally:
    """Sums over positions for one opponent kind."""

    def __init__(self):
        self.positions = self.cards = self.held = 0
        self.loss = dict.fromkeys(BELIEFS, 0.0)
        self.correct = dict.fromkeys(BELIEFS, 0.0)
        self.bin_p = np.zeros(BINS)
        self.bin_y = np.zeros(BINS)
        self.bin_n = np.zeros(BINS)
        self.min_held = 1.0
        self.time = {"learned": 0.0, "particles": 0.0}
        self.updates = 0

    def add(self, beliefs: dict, holders: np.ndarray, unseen: np.ndarray) -> None:
        u = int(unseen.sum())
        self.positions += 1
        self.cards += u
        self.held += int((holders > 0).sum())
        for name, b in beliefs.items():
            self.loss[name] += log_loss(b, holders, unseen) * u
            self.correct[name] += expected_correct(b, holders)
        pf = beliefs["particles"]
        m = pf.shape[0]
        truth = holders[None, :] == np.arange(1, m + 1)[:, None]
        p = pf[:, unseen].ravel()
        y = truth[:, unseen].ravel()
        idx = np.minimum((p * BINS).astype(int), BINS - 1)
        np.add.at(self.bin_p, idx, p)
        np.add.at(self.bin_y, idx, y)
        np.add.at(self.bin_n, idx, 1)
        held = np.flatnonzero(holders > 0)
        if held.size:
            self.min_held = min(self.min_held, float(pf[holders[held] - 1, held].min()))

    def merge(self, other: Tally) -> Tally:
        out = Tally()
        for t in (self, other):
            out.positions += t.positions
            out.cards += t.cards
            out.held += t.held
            for k in BELIEFS:
                out.loss[k] += t.loss[k]
                out.correct[k] += t.correct[k]
            out.bin_p += t.bin_p
            out.bin_y += t.bin_y
            out.bin_n += t.bin_n
            out.min_held = min(out.min_held, t.min_held)
            for k in out.time:
                out.time[k] += t.time[k]
            out.updates += t.updates
        return out

    def ece(self) -> float:
        n = self.bin_n.sum()
        used = self.bin_n > 0
        return float(np.sum(np.abs(self.bin_p[used] - self.bin_y[used])) / n) if n else 0.0

    def row(self, n: int, name: str) -> str:
        ll = " | ".join(f"{self.loss[k] / self.cards:.3f}" for k in BELIEFS)
        pr = " | ".join(f"{100 * self.correct[k] / self.held:.1f}% "
                        f"({self.correct[k] / self.positions:.2f})" for k in BELIEFS)
        ms = " | ".join(f"{1000 * self.time[k] / max(self.updates, 1):.2f}"
                        for k in self.time)
        return (f"| {n} | {name} | {self.positions} | {ll} | {pr} | {self.ece():.4f} | "
                f"{self.min_held:.2e} | {ms} |")


HEADER = ("| players | opponent | positions | log-loss uniform | hints | learned | particles | "
          "placed right uniform | hints | learned | particles | ECE (particles) | "
          "min P(held) | ms/update learned | particles |\n"
          "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
          "| ---: | ---: | ---: |")


def measure(n: int, opponent: str, positions: int, seed: int, filter_options: dict) -> Tally:
    """Play deals against ``opponent`` until ``positions`` positions are tallied."""
    from agents.belief import ParticleBelief
    from train.belief_model.observer_positions import observer_positions

    tally = Tally()
    model = load_model(n)
    tracker, pf = DealTracker(n), None
    for pos in observer_positions(n, lambda s: _opponent(opponent, n, s), seed, version=1):
        if tally.positions >= positions:
            break
        if pos.first:
            tracker, pf = DealTracker(n), ParticleBelief(n, seed=seed + pos.game,
                                                         **filter_options)
        else:
            tracker.record(pos.previous)
            pf.record(pos.previous)
        decoded = pos.decoded
        t0 = time.perf_counter()
        tracker.observe(decoded)
        learned = model(decoded, tracker) if pos.choice else None
        t1 = time.perf_counter()
        pf.observe(decoded)
        t2 = time.perf_counter()
        tally.time["learned"] += t1 - t0
        tally.time["particles"] += t2 - t1
        tally.updates += 1
        if learned is not None:
            tally.add({"uniform": uniform_belief(decoded), "hints": hint_belief(decoded),
                       "learned": learned, "particles": pf.belief(decoded)},
                      pos.holders, pos.holders >= 0)
    return tally


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.belief",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--opponents", nargs="+", choices=OPPONENTS, default=list(OPPONENTS))
    parser.add_argument("--positions", type=int, default=DEFAULT_POSITIONS,
                        help=f"positions per opponent and table size (default "
                             f"{DEFAULT_POSITIONS}, at most {MAX_POSITIONS})")
    parser.add_argument("--seed", type=int, default=5_000_000, help="seed of the first deal")
    parser.add_argument("--particles", type=int, default=None)
    parser.add_argument("--moves", type=int, default=None)
    parser.add_argument("--smoothing", type=float, default=None)
    parser.add_argument("--opponent-model", default=None,
                        help="the filter's opponent model spec (agents.belief."
                             "opponent_models; default its DEFAULT_MODEL)")
    args = parser.parse_args(argv)
    if not all(2 <= n <= 7 for n in args.players):
        parser.error(f"--players: table sizes in 2..7, got {args.players}")
    if not 1 <= args.positions <= MAX_POSITIONS:
        parser.error(f"--positions must be in 1..{MAX_POSITIONS}")
    options = {k: v for k, v in (("particles", args.particles), ("moves", args.moves),
                                 ("smoothing", args.smoothing),
                                 ("opponent_model", args.opponent_model)) if v is not None}
    try:
        from agents.belief import ParticleBelief

        for n in args.players:  # bad options fail before any game
            ParticleBelief(n, **options)
    except ValueError as e:
        parser.error(str(e))
    print(HEADER, flush=True)
    for n in args.players:
        held = []
        for name in args.opponents:
            tally = measure(n, name, args.positions, args.seed + 100_000 * n, options)
            label = f"{name} (held out)" if name in HELD_OUT else name
            print(tally.row(n, label), flush=True)
            if name in HELD_OUT:
                held.append(tally)
        if len(held) > 1:
            print(held[0].merge(held[1]).row(n, "held-out mix"), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
