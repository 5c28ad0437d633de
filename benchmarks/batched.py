"""Benchmark of the batched engine: decisions per second on one core.

``python -m benchmarks.batched`` plays random legal moves in B games at once for
B = 1, 64, 1024, 4096, building every game's observation (current player) and action
mask at every step, with finished games reset automatically; it reports decisions per
second of CPU time (the figure for one core, unaffected by other processes sharing the
machine) and of wall time, at layout 0 (``pis_yedili_v0``) and layout 1
(``pis_yedili_v1``, with the public record) and their ratio. First it measures the
numba compile time of a first call with an empty cache and the load time of a second
process that finds the cache, each in a fresh subprocess.

Options: ``--players 2`` (table size), ``--batch-sizes 1,64,1024,4096``, ``--seconds 2``
(CPU time per batch size), ``--dtype float32`` (or ``uint8``: layout 0 only), ``--env``
(also time ``BatchedEnv`` with random and greedy opponents, the learner at layout 0 and
1), ``--no-compile`` (skip the compile measurement), ``--no-pin`` (do not pin the
process to one core).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

_COMPILE_PROBE = """
import time
t0, c0 = time.perf_counter(), time.process_time()
import numpy as np
from agents.greedy.batched import GreedyPolicy
from pis_env.batched import BatchedEnv, BatchedGame, RandomPolicy
t1 = time.perf_counter()
game = BatchedGame(8, num_players=3, seed=0)
policy = RandomPolicy(8)
greedy = GreedyPolicy(8)
term = np.zeros_like(game.obs)
for _ in range(3):
    game.step(policy(game), auto_reset=True, terminal_obs=term)
    greedy(game)
game.observe(seats=0)
game.action_masks()
for layout in (0, 1):
    game = BatchedGame(8, num_players=3, seed=0, layout_version=layout)
    game.step(policy(game), auto_reset=True, terminal_obs=np.zeros_like(game.obs))
    env = BatchedEnv(8, num_players=3, opponent=greedy, seed=0, layout_version=layout)
    env.reset()
    env.step(RandomPolicy(8)(env.game))
t2, c2 = time.perf_counter(), time.process_time()
print(f"{t1 - t0:.3f} {t2 - t1:.3f} {c2 - c0:.3f}")
"""


def _pin_one_core() -> str:
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity)"
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    return f"pinned to core {core}"


def bench_game(num_players: int, batch: int, seconds: float, dtype,
               layout_version: int = 0) -> tuple[float, float]:
    """(decisions/s of CPU time, decisions/s of wall time) of random play with
    observations (of ``layout_version``) and masks built every step."""
    from pis_env.batched import BatchedGame, RandomPolicy

    game = BatchedGame(batch, num_players=num_players, seed=0, obs_dtype=dtype,
                       layout_version=layout_version)
    policy = RandomPolicy(batch, seed=1)
    for _ in range(20):  # warm-up (compiled already)
        game.step(policy(game), auto_reset=True)
    steps = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    while True:
        for _ in range(50):
            game.step(policy(game), auto_reset=True)
        steps += 50
        cpu = time.process_time() - cpu0
        if cpu >= seconds:
            break
    wall = time.perf_counter() - wall0
    return batch * steps / cpu, batch * steps / wall


def bench_env(num_players: int, batch: int, seconds: float, opponent: str,
              layout_version: int = 0) -> tuple[float, float]:
    """(learner steps/s, decisions/s including the opponents'), CPU time, for
    ``BatchedEnv`` with a random learner seeing ``layout_version``."""
    from agents.greedy.batched import GreedyPolicy
    from pis_env.batched import BatchedEnv, RandomPolicy

    bot = GreedyPolicy() if opponent == "greedy" else opponent
    env = BatchedEnv(batch, num_players=num_players, opponent=bot, seed=0,
                     layout_version=layout_version)
    env.reset()
    learner = RandomPolicy(batch, seed=2)
    for _ in range(10):
        env.step(learner(env.game))
    steps = 0
    decisions0 = int(env.decisions.sum())
    cpu0 = time.process_time()
    while time.process_time() - cpu0 < seconds:
        for _ in range(20):
            env.step(learner(env.game))
        steps += 20
    cpu = time.process_time() - cpu0
    return batch * steps / cpu, (int(env.decisions.sum()) - decisions0) / cpu


def compile_times() -> list[tuple[float, float, float]]:
    """Two fresh processes sharing an empty numba cache directory: (import s, first
    calls s, CPU s in all) of each; the first compiles and writes the cache, the second
    loads it."""
    out = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for _ in range(2):
            proc = subprocess.run(
                [sys.executable, "-c", _COMPILE_PROBE], env=env, capture_output=True,
                text=True, check=True,
            )
            out.append(tuple(float(x) for x in proc.stdout.split()))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.batched",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--batch-sizes", default="1,64,1024,4096")
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per size")
    parser.add_argument("--dtype", default="float32", choices=["float32", "uint8"])
    parser.add_argument("--env", action="store_true", help="also time BatchedEnv")
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--no-pin", action="store_true")
    args = parser.parse_args(argv)
    try:
        sizes = [int(b) for b in args.batch_sizes.split(",")]
    except ValueError:
        parser.error(f"--batch-sizes: comma-separated ints, got {args.batch_sizes!r}")
    if not 2 <= args.players <= 7 or not 0 < args.seconds <= 3600 \
            or not all(1 <= b <= 1_000_000 for b in sizes):
        parser.error("--players in 2..7, --seconds in (0, 3600], --batch-sizes in 1..1000000")

    if not args.no_compile:
        (imp1, first1, cpu1), (imp2, first2, cpu2) = compile_times()
        print("numba compilation (fresh subprocesses, one empty NUMBA_CACHE_DIR):")
        print(f"  first process (compiles, writes cache): import {imp1:.2f} s, "
              f"first calls {first1:.2f} s (CPU {cpu1:.2f} s in all)")
        print(f"  second process (loads the cache):       import {imp2:.2f} s, "
              f"first calls {first2:.2f} s (CPU {cpu2:.2f} s in all)")
    pinned = "not pinned" if args.no_pin else _pin_one_core()
    from pis_env.batched import BatchedGame  # compile (or load) before timing

    BatchedGame(1)
    BatchedGame(1, layout_version=1)
    print(f"\nrandom legal play, observation ({args.dtype}) + mask every step, auto-reset; "
          f"{args.players} players; {pinned}; v1: the pis_yedili_v1 observation (float32)")
    print(f"{'B':>6}  {'decisions/s (CPU)':>18}  {'decisions/s (wall)':>18}  "
          f"{'v1 decisions/s (CPU)':>20}  {'v1 / v0':>7}")
    for batch in sizes:
        cpu_rate, wall_rate = bench_game(args.players, batch, args.seconds, args.dtype)
        if args.dtype == "float32":
            v1_rate, _ = bench_game(args.players, batch, args.seconds, args.dtype, 1)
            v1 = f"{v1_rate:>20,.0f}  {v1_rate / cpu_rate:>7.2f}"
        else:
            v1 = f"{'-':>20}  {'-':>7}"
        print(f"{batch:>6}  {cpu_rate:>18,.0f}  {wall_rate:>18,.0f}  {v1}")
    if args.env:
        print("\nBatchedEnv (learner seat 0 random; random opponents in the kernel, greedy "
              "ones through agents.greedy.batched), CPU time:")
        print(f"{'B':>6}  {'opponent':>8}  {'learner steps/s':>16}  {'decisions/s':>12}  "
              f"{'v1 decisions/s':>14}  {'v1 / v0':>7}")
        for batch in (1024, 4096):
            for opponent in ("random", "greedy"):
                steps, decisions = bench_env(args.players, batch, args.seconds, opponent)
                _, v1 = bench_env(args.players, batch, args.seconds, opponent, 1)
                print(f"{batch:>6}  {opponent:>8}  {steps:>16,.0f}  {decisions:>12,.0f}  "
                      f"{v1:>14,.0f}  {v1 / decisions:>7.2f}")


if __name__ == "__main__":
    main()
