"""RLlib sampling speed: env steps/s per env runner, three envs measured the same way.

    python -m benchmarks.rllib_sampling                  # ~2 min on 2 cores
    python -m benchmarks.rllib_sampling --steps 20000 --envs 1024
    python -m benchmarks.rllib_sampling --env-version 1  # PisYedili-Events-v0's observation

Run it in the RLlib virtualenv (``.venv-rllib/bin/python``). Each path is one PPO
algorithm with two remote env runners (one torch thread each); its runners sample
``--steps`` env steps with the masked PPO module exploring, first one alone (the "1
runner" figure), then both at once ("2 runners": per runner and in all). Timing starts
after a warm-up sample (numba compilation, torch's first passes).

* ``aec``: ``train/rllib/ppo.py env=aec`` (the path before the vector env),
  ``pis_env.aec`` through RLlib's ``PettingZooEnv`` (``num_envs_per_env_runner=16``, the
  configured bots as RLModules).
  RLlib counts an env step for every seat's move there, so its learner decisions are
  printed too.
* ``vector``: ``train.vector.gym_vector_env.PisYediliVectorEnv`` through
  ``gym_env_vectorize_mode="vector_entry_point"`` (``--envs`` games per runner, the bots
  inside the numba engine); an env step is a learner decision.
* ``cartpole``: gymnasium's ``CartPoleVectorEnv`` (``--envs`` per runner) with the same
  network size: what RLlib's sampling loop costs when the env is almost free, the
  ceiling of a runner here.

The figures depend on the machine and what else runs on it; the docs give measured ones.
"""

from __future__ import annotations

import argparse
import time

from pis_env import LAYOUT_VERSIONS

#: Bounds on what one run asks for (checked before anything starts).
MAX_STEPS = 200_000
MAX_ENVS = 4096
PATHS = ("aec", "vector", "cartpole")
RUNNERS = 2


def _config(path: str, envs: int, players: int, env_version: int = 0):
    """A ``PPOConfig`` for one path, two remote env runners: ``train/rllib/ppo.py``'s own
    for ``aec`` and ``vector`` (its default config, bots only: no snapshot pool, at the
    observation layout ``env_version``)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    from train.rllib import ppo as rllib_ppo
    from train.rllib.config import load_config

    per_runner = 16 if path == "aec" else envs
    cfg = load_config(rllib_ppo.DEFAULT_CONFIG, [
        f"env={'aec' if path == 'aec' else 'vector'}", f"rules.num_players={players}",
        f"env_version={env_version}",
        "opponents={heuristic: 1, greedy: 1}", f"env_runners.num_env_runners={RUNNERS}",
        f"env_runners.num_envs_per_env_runner={per_runner}",
        f"ppo.train_batch_size_per_learner={per_runner * RUNNERS * 64}"])
    if path != "cartpole":
        return rllib_ppo.build_config(cfg)
    return (PPOConfig()
            .environment("CartPole-v1")
            .env_runners(num_env_runners=RUNNERS, num_envs_per_env_runner=envs,
                         gym_env_vectorize_mode="vector_entry_point")
            .rl_module(model_config=DefaultModelConfig(**cfg["model"])))


def _sample(steps: int):
    """Runs in an env runner: ``steps`` env steps, timed; (env steps, learner decisions,
    seconds)."""

    def sample(runner):
        import torch

        torch.set_num_threads(1)
        start = time.perf_counter()
        episodes = runner.sample(num_timesteps=steps, explore=True)
        seconds = time.perf_counter() - start
        env_steps = decisions = 0
        for e in episodes:
            if hasattr(e, "agent_episodes"):  # multi-agent: every seat's move is a step
                env_steps += e.env_steps()
                decisions += sum(len(a) for aid, a in e.agent_episodes.items()
                                 if e.module_for(aid) == "learner")
            else:
                env_steps += len(e)
                decisions += len(e)
        return env_steps, decisions, seconds

    return sample


def _answers(path: str, expected: int, results: list) -> list:
    """The env runners' results; RLlib drops the result of a runner whose call raised, so
    fewer than ``expected`` means a sample failed (its traceback is in the Ray worker's
    log, ``/tmp/ray/session_latest/logs``)."""
    if len(results) != expected:
        raise RuntimeError(f"{path}: {expected - len(results)} of {expected} env runners "
                           f"failed to sample (the Ray worker logs in "
                           f"/tmp/ray/session_latest/logs have the error)")
    return results


def measure(path: str, steps: int, envs: int, players: int, log=print,
            env_version: int = 0) -> dict:
    """Per-runner rates of one path: one runner alone, then both at once."""
    start = time.perf_counter()
    algo = _config(path, envs, players, env_version).build_algo()
    try:
        group = algo.env_runner_group
        group.foreach_env_runner(_sample(min(steps, 2 * envs)), local_env_runner=False)
        built = time.perf_counter() - start
        alone = _answers(path, 1, group.foreach_env_runner(
            _sample(steps), local_env_runner=False, remote_worker_ids=[1]))[0]
        wall = time.perf_counter()
        both = _answers(path, RUNNERS, group.foreach_env_runner(_sample(steps),
                                                                local_env_runner=False))
        wall = time.perf_counter() - wall
    finally:
        algo.stop()
    out = {"path": path, "setup_s": round(built, 1),
           "1 runner": round(alone[0] / alone[2]),
           "1 runner decisions": round(alone[1] / alone[2]),
           "2 runners, per runner": round(sum(s / t for s, _, t in both) / len(both)),
           "2 runners, in all": round(sum(s for s, _, _ in both) / wall)}
    log(out)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.rllib_sampling",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=10_000,
                   help=f"env steps each runner samples per measurement (<= {MAX_STEPS})")
    p.add_argument("--envs", type=int, default=512,
                   help=f"vector envs per runner for vector and cartpole (<= {MAX_ENVS})")
    p.add_argument("--players", type=int, default=2, choices=range(2, 8), metavar="2..7")
    p.add_argument("--paths", default=",".join(PATHS), help=f"some of {','.join(PATHS)}")
    p.add_argument("--env-version", type=int, default=0, choices=LAYOUT_VERSIONS,
                   help="observation layout of aec and vector (1: PisYedili-Events-v0)")
    args = p.parse_args(argv)
    paths = [x for x in args.paths.split(",") if x]
    if not 1 <= args.steps <= MAX_STEPS:
        p.error(f"--steps: 1..{MAX_STEPS}")
    if not 1 <= args.envs <= MAX_ENVS:
        p.error(f"--envs: 1..{MAX_ENVS}")
    if not paths or set(paths) - set(PATHS):
        p.error(f"--paths: some of {','.join(PATHS)}")
    try:
        import ray
        import ray.rllib  # noqa: F401
    except ImportError as e:
        p.error(f"needs RLlib ({e}): run it with .venv-rllib/bin/python (make bench-rllib)")

    ray.init(address="local", num_cpus=RUNNERS, include_dashboard=False, log_to_driver=False)
    try:
        results = [measure(x, args.steps, args.envs, args.players,
                           env_version=args.env_version) for x in paths]
    finally:
        ray.shutdown()
    print(f"\nenv steps/s per env runner ({args.steps} steps per runner, {args.players} players, "
          f"{args.envs} vector envs per runner, aec 16 envs per runner, "
          f"env_version {args.env_version})")
    print(f"{'path':10} {'1 runner':>10} {'2 runners':>10} {'2 in all':>10}  learner decisions/s")
    for r in results:
        print(f"{r['path']:10} {r['1 runner']:>10,} {r['2 runners, per runner']:>10,} "
              f"{r['2 runners, in all']:>10,}  {r['1 runner decisions']:,} (1 runner)")
    by_path = {r["path"]: r for r in results}
    if {"vector", "cartpole"} <= set(by_path):
        ratio = by_path["vector"]["1 runner"] / by_path["cartpole"]["1 runner"]
        print(f"vector / cartpole ceiling (1 runner): {ratio:.0%}")
    if {"vector", "aec"} <= set(by_path):
        ratio = by_path["vector"]["1 runner"] / by_path["aec"]["1 runner decisions"]
        print(f"vector / aec, learner decisions (1 runner): {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
