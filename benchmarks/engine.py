"""Decisions per second under random legal play: the engine alone, ``raw_env()`` and
``env()`` (observation and mask built every step), and ``pis_yedili_v1.env()`` (its
observation adds the public event log and summary), for 2 and 4 players.

    python -m benchmarks.engine [--seconds 3]

If ``open_spiel`` and ``shimmy`` are importable, the same AEC loop also runs over
OpenSpiel's C++ ``crazy_eights`` through shimmy's ``OpenSpielCompatibilityV0`` and the
ratio is printed. Figures are wall-clock on one core; run on a quiet machine.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from pis_env import pis_yedili_v1
from pis_env.aec import env as make_env
from pis_env.aec import raw_env
from pis_env.cards import cards_of
from pis_env.engine import GameState
from pis_env.rules import Rules


def engine_rate(num_players: int, seconds: float) -> float:
    """Engine only: legal actions computed as a list every step, one chosen at random."""
    rules = Rules(num_players=num_players)
    rnd = random.Random(0)
    steps, seed = 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = GameState(rules, seed=seed)
        while not state.deal_over:
            legal = cards_of(state.legal_mask())
            state.apply(legal[rnd.randrange(len(legal))])
            steps += 1
        seed += 1
    return steps / (time.perf_counter() - start)


def aec_rate(env, seconds: float) -> float:
    """The standard AEC loop: ``last()`` (observation + mask) then ``step`` every decision.
    (shimmy puts the mask in the info rather than the observation.)"""
    rnd = random.Random(0)
    steps, seed = 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed)
        for _agent in env.agent_iter():
            obs, _, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            mask = obs["action_mask"] if isinstance(obs, dict) else info["action_mask"]
            legal = np.flatnonzero(mask)
            env.step(int(legal[rnd.randrange(len(legal))]))
            steps += 1
        seed += 1
    return steps / (time.perf_counter() - start)


def openspiel_env(num_players: int):
    """OpenSpiel's crazy_eights as a PettingZoo AEC env, or None when not installed."""
    try:
        import pyspiel
        from shimmy import OpenSpielCompatibilityV0
    except ImportError:
        return None
    del pyspiel  # shimmy reloads the game by name on every reset, so pass name + config
    return OpenSpielCompatibilityV0(game_name="crazy_eights", config={"players": num_players})


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.engine",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 3600:
        parser.error(f"--seconds must be in (0, 3600], got {args.seconds}")
    print(f"{'players':>7} {'loop':<28} {'decisions/s':>12}")
    for n in (2, 4):
        rows = [
            ("engine (legal list)", engine_rate(n, args.seconds)),
            ("raw_env() obs+mask", aec_rate(raw_env(num_players=n), args.seconds)),
            ("env() obs+mask", aec_rate(make_env(num_players=n), args.seconds)),
            ("pis_yedili_v1 env() obs+mask",
             aec_rate(pis_yedili_v1.env(num_players=n), args.seconds)),
        ]
        peer = openspiel_env(n)
        if peer is not None:
            rows.append(("OpenSpiel crazy_eights+shimmy", aec_rate(peer, args.seconds)))
        for name, rate in rows:
            print(f"{n:>7} {name:<28} {rate:>12,.0f}")
        if peer is not None:
            print(f"{n:>7} {'ratio env() / OpenSpiel':<28} {rows[2][1] / rows[-1][1]:>12.2f}x")


if __name__ == "__main__":
    main()
