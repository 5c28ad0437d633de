"""Search-labelled positions: the labelling stage of expert iteration.

The strongest bot we have is a search (``agents.make("mc")``); a network learns from it
by imitating its judgement of positions. This module makes that data set in two stages,
each a plain function over a chunk that returns numpy arrays, so that both run in this
process, on every local core, or as Ray tasks on a cluster with the same switch
(``backend="local"`` / ``"ray"``, ``agents.tournament.ray_backend``):

* ``play_games(seed, start, stop, rules, player)``: the positions of games
  ``start..stop-1``. Game ``g`` is the tournament's duplicate deal ``g`` (deck and dealer
  from ``(seed, g)``), played by ``player`` in every seat (each seeded from
  ``(seed, g, seat)``); every decision with more than one legal action is kept:
  ``obs [N, L] float32``, ``mask [N, 58] int8``, ``game``, ``seat``.
* ``label_positions(obs, mask, index, seed, rules, labeller)``: the labeller's mean
  rollout score of every legal action (``values [n, 58] float32``, NaN where illegal;
  ``MonteCarloAgent.evaluate``, which reads the observation only) and its best action.
  Position ``i`` is searched with a generator seeded from ``(seed, i)``.

Every random draw comes from the seed and the position's global index, never from the
chunking or the worker, so the same seed gives the same data set on one core, on all of
them, or on a cluster. Each worker pins torch to ``threads`` threads (Ray gives each
worker one, a local pool inherits the machine's default, and float sums in a network
labeller depend on the thread count).

    python -m train.expert.search_data --games 200 --out runs/search_data.npz           # local
    python -m train.expert.search_data --games 20000 --backend ray --address auto ...   # cluster
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pis_env.engine import NUM_ACTIONS

#: Positions per labelling task and games per playing task.
LABEL_CHUNK = 64
GAME_CHUNK = 25
DEFAULT_LABELLER = {"name": "mc", "samples": 16, "rollouts": 2}


def pin_threads(threads: int | None) -> None:
    """Pins torch's intra-op threads in this process (now if torch is loaded, else through
    the environment for a later import)."""
    if not threads:
        return
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(int(threads))


# ---------------------------------------------------------------------- stage 1: games
def play_games(seed: int, start: int, stop: int, rules: dict,
               player: str = "heuristic") -> dict[str, np.ndarray]:
    """The positions of games ``start..stop-1`` (see the module docstring)."""
    from agents import make_for_table
    from agents.tournament import agent_seed, deal_setup, env_seed
    from pis_env import raw_env

    env = raw_env(**rules)
    n = rules["num_players"]
    names = env.possible_agents
    obs, masks, games, seats = [], [], [], []
    for g in range(start, stop):
        deck, dealer = deal_setup(seed, g, n)
        bots = [make_for_table(player, rules, seed=agent_seed(seed, g, 0, s)) for s in range(n)]
        env.reset(seed=env_seed(seed, g), options={"deck": deck, "dealer": dealer})
        game = env.game
        while not game.deal_over:
            s = game.current
            o = env.observe(names[s])
            if int(o["action_mask"].sum()) > 1:
                obs.append(o["observation"])
                masks.append(o["action_mask"])
                games.append(g)
                seats.append(s)
            env.step(bots[s].act(o))
    size = env.observation_space(names[0])["observation"].shape[0]
    return {
        "obs": np.asarray(obs, np.float32).reshape(-1, size),
        "mask": np.asarray(masks, np.int8).reshape(-1, NUM_ACTIONS),
        "game": np.asarray(games, np.int32),
        "seat": np.asarray(seats, np.int8),
    }


# ---------------------------------------------------------------------- stage 2: labels
def label_positions(obs: np.ndarray, mask: np.ndarray, index: int, seed: int, rules: dict,
                    labeller: dict | None = None) -> dict[str, np.ndarray]:
    """Action values of positions ``index..index+len(obs)-1`` of the data set."""
    from agents import make_for_table
    from agents.heuristic import mask_int

    spec = dict(labeller or DEFAULT_LABELLER)
    name = spec.pop("name", "mc")
    bot = make_for_table(name, rules)
    for key, value in spec.items():
        if not hasattr(bot, key):
            raise ValueError(f"labeller {name!r} has no setting {key!r}")
        setattr(bot, key, value)
    if not hasattr(bot, "evaluate"):
        raise ValueError(f"labeller {name!r} cannot evaluate positions (it needs evaluate())")
    values = np.full((len(obs), NUM_ACTIONS), np.nan, np.float32)
    for i in range(len(obs)):
        bot.rng = np.random.default_rng([seed, index + i])
        observation = {"observation": obs[i], "action_mask": mask[i]}
        for action, value in bot.evaluate(bot.decode(observation), mask_int(mask[i])).items():
            values[i, action] = value
    best = np.where(np.isnan(values), -np.inf, values).argmax(axis=1).astype(np.int16)
    return {"values": values, "best": best}


# ---------------------------------------------------------------------- driver
def _play_unit(unit):
    return play_games(*unit)


def _label_unit(unit):
    return label_positions(*unit)


def map_chunks(fn, units: list, backend: str, workers: int | None, address: str | None,
               threads: int, each: Callable[[Any], Any] | None = None) -> list:
    """``[fn(u) for u in units]`` in this process, a local pool or Ray tasks, in order.

    ``each``, if given, is called here with every result as soon as it arrives (in
    completion order) and what it returns is kept instead: a caller that writes each
    result to disk keeps a stopped run's finished chunks, and not every chunk in memory."""
    from agents.tournament.ray_backend import RaySession, check_backend

    check_backend(backend, address)
    results: dict[int, Any] = {}

    def keep(out: tuple[int, Any]) -> None:
        i, value = out
        results[i] = each(value) if each is not None else value

    if backend == "ray":
        with RaySession(address) as session:
            session.run_unordered(list(enumerate(units)), _Indexed(fn), keep, workers,
                                  pin_threads, (threads,))
        return [results[i] for i in range(len(units))]
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(units) <= 1:
        pin_threads(threads)
        for i, unit in enumerate(units):
            keep((i, fn(unit)))
        return [results[i] for i in range(len(units))]
    import multiprocessing as mp

    # forkserver, not fork: the caller may hold threads (torch's, Ray's grpc client after a
    # Ray run) whose locks a forked child inherits held, and a forked worker once hung so;
    # the work units and ``fn`` are module-level and cross by pickle either way
    context = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods()
                             else None)
    with context.Pool(min(workers, len(units)), _init_pool_worker, (threads,)) as pool:
        for out in pool.imap_unordered(_Indexed(fn), list(enumerate(units)), chunksize=1):
            keep(out)
    return [results[i] for i in range(len(units))]


class _Indexed:
    """``(i, unit) -> (i, fn(unit))``, picklable: results that arrive out of order find
    their place."""

    def __init__(self, fn: Callable):
        self.fn = fn

    def __call__(self, item: tuple[int, Any]) -> tuple[int, Any]:
        i, unit = item
        return i, self.fn(unit)


def _init_pool_worker(threads: int) -> None:
    from agents.tournament.worker import reset_worker_signals

    reset_worker_signals()
    pin_threads(threads)


def build_dataset(seed: int, games: int, rules: dict | None = None, player: str = "heuristic",
                  labeller: dict | None = None, backend: str = "local",
                  workers: int | None = None, address: str | None = None,
                  threads: int = 1, label_chunk: int = LABEL_CHUNK) -> dict[str, np.ndarray]:
    """Positions of ``games`` seeded games and their labels, concatenated in game order."""
    from agents.tournament import resolve_rules

    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be an int >= 1, got {games!r}")
    if isinstance(label_chunk, bool) or not isinstance(label_chunk, int) or label_chunk < 1:
        raise ValueError(f"label_chunk must be an int >= 1, got {label_chunk!r}")
    rules = resolve_rules(rules, None)
    units = [(seed, s, min(s + GAME_CHUNK, games), rules, player)
             for s in range(0, games, GAME_CHUNK)]
    parts = map_chunks(_play_unit, units, backend, workers, address, threads)
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    total = len(data["obs"])
    units = [(data["obs"][i:i + label_chunk], data["mask"][i:i + label_chunk], i, seed, rules,
              labeller) for i in range(0, total, label_chunk)]
    labels = map_chunks(_label_unit, units, backend, workers, address, threads) if units else []
    for key in ("values", "best"):
        data[key] = (np.concatenate([p[key] for p in labels]) if labels
                     else np.zeros((0, NUM_ACTIONS) if key == "values" else 0, np.float32))
    return data


def main(argv: Sequence[str] | None = None) -> int:
    from agents.common.cli import error_exit

    p = argparse.ArgumentParser(prog="python -m train.expert.search_data",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--player", default="heuristic", help="the bot that plays the games")
    p.add_argument("--samples", type=int, default=16, help="mc determinizations per position")
    p.add_argument("--rollouts", type=int, default=2, help="mc rollouts per determinization")
    p.add_argument("--backend", choices=("local", "ray"), default="local")
    p.add_argument("--address", default=None, help="Ray cluster (default RAY_ADDRESS / local)")
    p.add_argument("--workers", type=int, default=None, help="processes or tasks in flight")
    p.add_argument("--out", default="runs/search_data.npz")
    args = p.parse_args(argv)
    if not 1 <= args.games <= 1_000_000 or not 2 <= args.players <= 7 \
            or min(args.samples, args.rollouts) < 1 or (args.workers or 1) < 1:
        p.error("--games in 1..1000000, --players in 2..7, --samples, --rollouts and "
                "--workers >= 1")
    start = time.perf_counter()
    try:
        data = build_dataset(args.seed, args.games, {"num_players": args.players}, args.player,
                             {"name": "mc", "samples": args.samples, "rollouts": args.rollouts},
                             args.backend, args.workers, args.address)
    except (ValueError, RuntimeError) as e:
        return error_exit(p.prog, str(e))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **data)
    print(f"{len(data['obs'])} positions from {args.games} games in "
          f"{time.perf_counter() - start:.1f} s -> {out}")
    return 0


__all__ = ["build_dataset", "label_positions", "map_chunks", "pin_threads", "play_games"]

if __name__ == "__main__":
    sys.exit(main())
