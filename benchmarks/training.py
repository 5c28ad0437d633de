"""End-to-end MaskablePPO training speed: the batched VecEnv against the first pipeline.

``python -m benchmarks.training`` trains sb3-contrib's ``MaskablePPO`` on the same
task with two vectorised envs, in the same process, one after the other:

* ``dummy``: SB3's ``DummyVecEnv`` of ``pis_env.wrappers.SingleAgentEnv`` (the first
  training pipeline: one Python env per slot, the opponents ``agents`` bots);
* ``batched``: :class:`train.vector.sb3_vec_env.BatchedVecEnv` (numba engine, opponents in
  the kernel, masks as one array).

Same rules, opponents (``--opponent greedy``), random learner seat, observation (the
env's, no mask feature), network and PPO config. For each config (``throughput``: many
envs, short rollouts, large batches, one epoch; ``default``: ``train``'s defaults) it
(and ``throughput256``: the same with ``train``'s 256x256 network) it
reports env steps per second of wall time and per CPU second (both processes' threads;
the machine may be shared), the ratio batched / dummy, and the env alone (random legal
learner moves, masks read as MaskablePPO reads them).

``--learn-seconds T`` (default 60; 0 skips it) then trains a fresh model with each
pipeline for T wall-clock seconds (``--learn-config throughput``) and evaluates both against the
greedy bot on the same ``--eval-deals`` seeded deals (batched env, deterministic masked
argmax of the policy): win rate and mean reward per wall-clock budget.

Options: ``--configs throughput,throughput256,default``, ``--rollouts 3`` (timed
rollouts per run, after one warm-up rollout), ``--players 2``, ``--threads 1``
(``torch.set_num_threads``), ``--net 64,64`` (the ``throughput`` config's network),
``--pipelines batched,dummy``, ``--eval-deals 2000``, ``--seed 0``.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

CONFIGS = {
    # many envs, short rollouts, large minibatches, one pass over the data
    "throughput": {"n_envs": 512, "n_steps": 32, "batch_size": 8192, "n_epochs": 1},
    # the same with train's default network
    "throughput256": {"n_envs": 512, "n_steps": 32, "batch_size": 8192, "n_epochs": 1,
                      "net": [256, 256]},
    # train/sb3/config.py DEFAULTS (n_envs 16, n_steps 256, batch 1024, 4 epochs, 256x256)
    "default": {"n_envs": 16, "n_steps": 256, "batch_size": 1024, "n_epochs": 4,
                "net": [256, 256]},
}


@dataclass
class Speed:
    steps: int
    wall: float
    cpu: float

    @property
    def per_wall(self) -> float:
        return self.steps / self.wall

    @property
    def per_cpu(self) -> float:
        return self.steps / self.cpu


def make_env(kind: str, n_envs: int, players: int, opponent: str, seed: int):
    """The VecEnv of one pipeline (same task for both)."""
    if kind == "batched":
        from train.vector.sb3_vec_env import BatchedVecEnv

        return BatchedVecEnv(n_envs, num_players=players, opponent=opponent,
                             learner_seat=None, seed=seed)
    from stable_baselines3.common.vec_env import DummyVecEnv

    import agents
    from pis_env.wrappers import SingleAgentEnv

    def factory(i: int):
        def make():
            bot = agents.make(opponent, num_players=players, seed=seed * 1000 + i)
            env = SingleAgentEnv(opponents=bot, learner_seat=None, num_players=players)
            return env
        return make

    return DummyVecEnv([factory(i) for i in range(n_envs)])


def make_model(env, cfg: dict, net: list[int], seed: int):
    from sb3_contrib import MaskablePPO

    return MaskablePPO("MlpPolicy", env, n_steps=cfg["n_steps"], batch_size=cfg["batch_size"],
                       n_epochs=cfg["n_epochs"], gamma=1.0, gae_lambda=0.95, ent_coef=0.01,
                       learning_rate=3e-4, seed=seed, device="cpu", verbose=0,
                       policy_kwargs={"net_arch": list(cfg.get("net", net))})


def time_training(kind: str, cfg: dict, args) -> Speed:
    """Env steps of ``args.rollouts`` PPO iterations (collect + update), after one
    warm-up iteration (numba cache load, torch start-up)."""
    env = make_env(kind, cfg["n_envs"], args.players, args.opponent, args.seed)
    model = make_model(env, cfg, args.net, args.seed)
    per_rollout = cfg["n_envs"] * cfg["n_steps"]
    model.learn(per_rollout)
    steps = per_rollout * args.rollouts
    w0, c0 = time.perf_counter(), time.process_time()
    model.learn(steps, reset_num_timesteps=False)
    return Speed(steps, time.perf_counter() - w0, time.process_time() - c0)


def time_env(kind: str, n_envs: int, args, steps: int) -> Speed:
    """The env alone: random legal learner moves, masks read as MaskablePPO does."""
    from sb3_contrib.common.maskable.utils import get_action_masks

    env = make_env(kind, n_envs, args.players, args.opponent, args.seed)
    env.reset()
    rng = np.random.default_rng(args.seed)
    rounds = max(1, steps // n_envs)
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(rounds):
        masks = get_action_masks(env)
        env.step((rng.random(masks.shape) * masks).argmax(axis=1))
    return Speed(rounds * n_envs, time.perf_counter() - w0, time.process_time() - c0)


class _Deadline:
    """An SB3 callback that stops learning after ``seconds`` of wall time."""

    def __new__(cls, seconds: float):
        from stable_baselines3.common.callbacks import BaseCallback

        class Deadline(BaseCallback):
            def _on_training_start(self) -> None:
                self.t_end = time.perf_counter() + seconds

            def _on_step(self) -> bool:
                return time.perf_counter() < self.t_end

        return Deadline()


def evaluate(model, players: int, deals: int, seed: int) -> tuple[float, float]:
    """(win rate, mean reward) of the policy's deterministic masked argmax against the
    greedy bot over the first match of ``deals`` seeded games (a tie for the lowest
    charge counts as a win)."""
    from agents.greedy.batched import GreedyPolicy
    from pis_env.batched import BatchedEnv
    from train.vector.sb3_vec_env import TorchPolicy

    policy = TorchPolicy.from_sb3(model, deterministic=True)
    env = BatchedEnv(deals, num_players=players, opponent=GreedyPolicy(),
                     learner_seat="random", seed=seed)
    obs, masks = env.reset()
    wins = np.zeros(deals)
    total = np.zeros(deals)
    active = np.ones(deals, dtype=bool)
    while active.any():
        obs, rewards, dones, infos = env.step(policy(obs, masks))
        masks = env.masks
        total[active] += rewards[active]
        ended = active & dones
        for b in np.flatnonzero(ended):
            charges = infos["charges"][b]
            wins[b] = charges[infos["learner_seat"][b]] == charges.min()
        active &= ~dones
    return float(wins.mean()), float(total.mean())


def learn_for(kind: str, cfg: dict, args) -> tuple[int, float, float]:
    """Trains a fresh model for ``args.learn_seconds``; (steps, win rate, mean reward)."""
    env = make_env(kind, cfg["n_envs"], args.players, args.opponent, args.seed)
    model = make_model(env, cfg, args.net, args.seed)
    model.learn(10**12, callback=_Deadline(args.learn_seconds))
    win, reward = evaluate(model, args.players, args.eval_deals, args.seed + 99)
    return model.num_timesteps, win, reward


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.training",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--configs", default="throughput,throughput256,default")
    parser.add_argument("--rollouts", type=int, default=3)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--opponent", default="greedy", choices=["random", "greedy"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--net", default="64,64")
    parser.add_argument("--learn-seconds", type=float, default=60.0)
    parser.add_argument("--learn-config", default="throughput", choices=sorted(CONFIGS))
    parser.add_argument("--eval-deals", type=int, default=2000)
    parser.add_argument("--pipelines", default="batched,dummy")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        args.net = [int(x) for x in args.net.split(",") if x]
    except ValueError:
        parser.error(f"--net: comma-separated layer widths, got {args.net!r}")
    if not 2 <= args.players <= 7 or min(args.rollouts, args.threads) < 1 \
            or args.learn_seconds <= 0 or args.eval_deals < 0 or not all(w > 0 for w in args.net):
        parser.error("--players in 2..7, --rollouts and --threads >= 1, --learn-seconds > 0, "
                     "--eval-deals >= 0, --net widths > 0")
    import torch

    torch.set_num_threads(args.threads)
    kinds = args.pipelines.split(",")
    print(f"MaskablePPO, {args.players} players vs {args.opponent}, torch threads "
          f"{args.threads}, {args.rollouts} timed rollouts per run")
    w0, c0 = time.perf_counter(), time.process_time()
    from train.vector.sb3_vec_env import BatchedVecEnv

    BatchedVecEnv(8, num_players=args.players, seed=0).reset()
    print(f"batched env import + kernel load/compile: {time.perf_counter() - w0:.1f} s wall, "
          f"{time.process_time() - c0:.1f} s CPU")
    for name in args.configs.split(","):
        cfg = dict(CONFIGS[name])
        cfg.setdefault("net", args.net)
        print(f"\n[{name}] n_envs {cfg['n_envs']}, n_steps {cfg['n_steps']}, batch "
              f"{cfg['batch_size']}, epochs {cfg['n_epochs']}, net {cfg['net']}")
        speeds = {}
        for kind in kinds:
            env_speed = time_env(kind, cfg["n_envs"], args,
                                 steps=cfg["n_envs"] * (200 if kind == "batched" else 8))
            sp = speeds[kind] = time_training(kind, cfg, args)
            print(f"  {kind:8s} training {sp.per_wall:9,.0f} steps/s wall "
                  f"{sp.per_cpu:9,.0f} steps/CPU-s ({sp.steps:,} steps, {sp.wall:.1f} s); "
                  f"env alone {env_speed.per_wall:11,.0f} steps/s wall "
                  f"{env_speed.per_cpu:11,.0f} steps/CPU-s", flush=True)
        if {"batched", "dummy"} <= speeds.keys():
            b, d = speeds["batched"], speeds["dummy"]
            print(f"  ratio batched/dummy: {b.per_wall / d.per_wall:.1f}x wall, "
                  f"{b.per_cpu / d.per_cpu:.1f}x CPU")
    if args.learn_seconds > 0:
        cfg = dict(CONFIGS[args.learn_config])
        cfg.setdefault("net", args.net)
        print(f"\n[learning] {args.learn_seconds:.0f} s of training each ({args.learn_config} "
              f"config), then {args.eval_deals} deals vs greedy, deterministic argmax "
              f"(an untrained policy wins about {_untrained(args, cfg):.1%})")
        for kind in kinds:
            steps, win, reward = learn_for(kind, cfg, args)
            print(f"  {kind:8s} {steps:10,} steps trained: win rate {win:.1%}, mean "
                  f"reward {reward:+.3f}", flush=True)
    return 0


def _untrained(args, cfg) -> float:
    env = make_env("batched", 8, args.players, args.opponent, args.seed)
    return evaluate(make_model(env, cfg, args.net, args.seed), args.players, args.eval_deals,
                    args.seed + 99)[0]


if __name__ == "__main__":
    raise SystemExit(main())
