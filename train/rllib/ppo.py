"""PPO with RLlib (new API stack): one learning seat against the project's bots.

    python train/rllib_ppo.py                                   # configs/rllib_ppo.yaml
    python train/rllib_ppo.py rules.num_players=4 stop.minutes=10 env_runners.num_env_runners=2
    python train/rllib_ppo.py env_version=1                     # PisYedili-Events-v0's observation
    python train/rllib_ppo.py --resume runs/rllib_ppo-20261201-101500
    python train/rllib_ppo.py --address auto                    # an existing Ray cluster

The env (``env``) is by default the batched vector env (``env=vector``:
``train.vector.gym_vector_env.PisYediliVectorEnv`` through ``gym_env_vectorize_mode=
"vector_entry_point"``, ``env_runners.num_envs_per_env_runner`` games per env runner, the
bots of ``opponents`` played inside the numba engine, one env step per learner decision);
``env=aec`` keeps RLlib's ``PettingZooEnv`` over ``pis_env.aec`` (``train.rllib.env``), the
bots as fixed, non-trained RLModules of a multi-agent config. ``env_version`` (0 or 1, the
key of ``train/sb3/run.py``) picks the observation layout either way: ``PisYedili-Events-v0``'s adds
the public record of the deal; the warm start, the snapshots and the exported policy use
it, and the policy file records it. Either way the learner is an
action-masking PPO module (``train.rllib.modules``, the mask read from the dict
observation) that holds one seat, drawn anew for each episode, against the bots drawn per
seat and episode. ``rollout_fragment_length`` follows from the batch
(``train.rllib.config.rollout_fragment_length``); ``learners.num_learners`` and
``learners.num_gpus_per_learner`` go to ``PPOConfig.learners``. A new run first imitates
``pretrain.teacher``
(``train.rllib.pretrain``: behaviour cloning of the heuristic and a value fit, on the
driver, counted in the time budget; ``pretrain.teacher=null`` starts from random weights).
``env_runners.num_env_runners`` sampling processes, each stepping
``num_envs_per_env_runner`` envs, are what scale out on a cluster (the learner stays on
the driver unless ``learners.num_learners`` > 0). The run directory
(``runs/<name>-<timestamp>/``) holds ``config.yaml``,
``checkpoint/`` (RLlib's ``save_to_path``, replaced atomically every
``checkpoint_every`` iterations and at the end), ``state.json`` (the env and its version,
iterations, env
steps, minutes spent, the warm start's statistics), ``progress.jsonl``, ``policy-pretrain.pt`` (the
imitation alone) and ``policy.pt``: the learner exported to the
project's weights-only format (``train.rllib.export``), so ``agents.make("ppo",
path=...)``, ``python -m agents.tournament --agents ppo:RUN/policy.pt,greedy`` and the
terminal game play it. ``--resume`` continues the weights, optimizer and counters, with
what is left of the time budget; a checkpoint of the other ``env`` or ``env_version`` is
refused with the ``env=`` / ``env_version=`` that resumes it. At the end the policy is
evaluated on duplicate deals against ``eval_opponents`` (``eval.json``).

Ray and RLlib are imported inside the functions, so importing this module is cheap.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from train.common.schema import ConfigError, add_arguments
from train.rllib.config import (
    CONFIG,
    DEFAULT_CONFIG,
    SELF,
    RLlibConfig,
    bots_of,
    dump,
    load_config,
)

ENV_NAME = "pis_yedili_rllib"
VECTOR_ENV_NAME = "pis_yedili_vector"
LEARNER = "learner"
BOT_PREFIX = "bot_"


class SeatMapping:
    """``policy_mapping_fn``: per episode, the learner's seat and each other seat's bot,
    drawn from the episode id (the same answer every time it is asked)."""

    def __init__(self, num_players: int, opponents: dict[str, float], seed: int):
        self.num_players = num_players
        self.names = list(opponents)
        weights = np.asarray([float(opponents[k]) for k in self.names])
        self.p = weights / weights.sum()
        self.seed = seed

    def assignment(self, episode_id: str) -> list[str]:
        rng = np.random.default_rng([self.seed, zlib.crc32(str(episode_id).encode())])
        seat = int(rng.integers(self.num_players))
        bots = rng.choice(len(self.names), size=self.num_players, p=self.p)
        return [LEARNER if s == seat else BOT_PREFIX + self.names[int(b)]
                for s, b in enumerate(bots)]

    def __call__(self, agent_id: str, episode=None, **kwargs) -> str:
        return self.assignment(getattr(episode, "id_", episode))[int(agent_id.rsplit("_", 1)[1])]


def learner_spec(cfg: RLlibConfig):
    """The learner's ``RLModuleSpec`` (the masked PPO module over the table's spaces)."""
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from train.rllib.env import make_aec_env
    from train.rllib.modules import MaskedPPOTorchRLModule

    probe = make_aec_env(cfg.rules, cfg.env_version)
    agent = probe.possible_agents[0]
    return RLModuleSpec(
        module_class=MaskedPPOTorchRLModule, observation_space=probe.observation_space(agent),
        action_space=probe.action_space(agent), model_config=DefaultModelConfig(**cfg.model))


def build_algorithm(cfg: RLlibConfig):
    """The RLlib ``PPO`` algorithm of a config."""
    return build_config(cfg).build_algo()


def build_config(cfg: RLlibConfig):
    """The RLlib ``PPOConfig`` of a config (``benchmarks.rllib_sampling`` builds it too)."""
    if cfg.env == "vector":
        return _vector_config(cfg)
    return _aec_config(cfg)


def _common(config, cfg: RLlibConfig):
    """What both envs' configs share: env runners, learners, PPO, seed."""
    from train.rllib.config import rollout_fragment_length

    runners, learners = cfg.env_runners, cfg.learners
    return (config
            .env_runners(num_env_runners=runners.num_env_runners,
                         num_envs_per_env_runner=runners.num_envs_per_env_runner,
                         rollout_fragment_length=rollout_fragment_length(cfg),
                         custom_resources_per_env_runner=dict(runners.custom_resources))
            .learners(num_learners=learners.num_learners,
                      num_gpus_per_learner=learners.num_gpus_per_learner)
            .training(**cfg.ppo)
            .debugging(seed=cfg.seed))


def _vector_config(cfg: RLlibConfig):
    """A single-agent config: the learner's module over ``train.vector.gym_vector_env``."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env

    from train.rllib.env import make_vector_env

    register_env(VECTOR_ENV_NAME, make_vector_env)
    config = (
        PPOConfig()
        # RLlib's env check steps random actions that ignore the mask (they forfeit)
        .environment(VECTOR_ENV_NAME, disable_env_checking=True,
                     env_config={"rules": cfg.rules, "opponents": bots_of(cfg),
                                 "env_version": cfg.env_version,
                                 "torch_threads": cfg.torch_threads})
        .env_runners(gym_env_vectorize_mode="vector_entry_point")
        .rl_module(rl_module_spec=learner_spec(cfg))
    )
    return _common(config, cfg)


def _aec_config(cfg: RLlibConfig):
    """A multi-agent config: ``PettingZooEnv``, the learner's module and the bots'."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from train.rllib.env import make_aec_env, make_env
    from train.rllib.modules import BotRLModule

    rules = cfg.rules
    register_env(ENV_NAME, make_env)
    probe = make_aec_env(rules, cfg.env_version)
    obs_space = probe.observation_space(probe.possible_agents[0])
    act_space = probe.action_space(probe.possible_agents[0])
    specs = {LEARNER: learner_spec(cfg)}
    for name in bots_of(cfg):
        specs[BOT_PREFIX + name] = RLModuleSpec(
            module_class=BotRLModule, observation_space=obs_space, action_space=act_space,
            model_config={"bot": name, "rules": rules, "seed": cfg.seed})
    config = (
        PPOConfig()
        # RLlib's env check steps random actions that ignore the mask, which pis_env
        # refuses (illegal_action="raise"); the masked module never plays one.
        .environment(ENV_NAME, env_config={"rules": rules, "env_version": cfg.env_version,
                                           "torch_threads": cfg.torch_threads},
                     disable_env_checking=True)
        .multi_agent(policies=set(specs),
                     policy_mapping_fn=SeatMapping(rules["num_players"], bots_of(cfg),
                                                   cfg.seed),
                     policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
    )
    return _common(config, cfg)


def learner_id(algo) -> str:
    """The learner's module id: ``LEARNER`` in the multi-agent (aec) config, RLlib's
    default module in the single-agent (vector) one."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    return LEARNER if algo.config.is_multi_agent else DEFAULT_MODULE_ID


def learner_state(algo) -> dict:
    """The learner module's weights (numpy arrays keyed by parameter name)."""
    module = learner_id(algo)
    return algo.learner_group.get_weights(module_ids=[module])[module]


def save_checkpoint(algo, run_dir: Path, state: dict, cfg: RLlibConfig) -> None:
    """``checkpoint/`` replaced atomically (written beside, then renamed), the exported
    policy and ``state.json``."""
    from train.common.checkpoint import atomic_write_text
    from train.rllib.export import export_module

    tmp, final, old = run_dir / "checkpoint.tmp", run_dir / "checkpoint", run_dir / "checkpoint.old"
    shutil.rmtree(tmp, ignore_errors=True)
    algo.save_to_path(str(tmp.resolve()))
    if final.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)
    export_module(learner_state(algo), cfg.rules, cfg.model, run_dir / "policy.pt",
                  extra={"run_name": run_dir.name, "env_steps": state["env_steps"],
                         "iterations": state["iterations"]},
                  layout_version=cfg.env_version)
    atomic_write_text(run_dir / "state.json", json.dumps(state, indent=1))


def _env_steps(result: dict) -> int:
    """Env steps sampled in this iteration (summed by the loop, so that a resumed run's
    count does not depend on whether RLlib restores its lifetime counters)."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED

    steps = result.get(ENV_RUNNER_RESULTS, {}).get(NUM_ENV_STEPS_SAMPLED, 0)
    # an iteration whose env runners returned no sample in time (a busy machine) reports NaN
    return 0 if steps is None or math.isnan(steps) else int(steps)


def _learner_return(result: dict) -> float | None:
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EPISODE_RETURN_MEAN

    runners = result.get(ENV_RUNNER_RESULTS, {})
    if "module_episode_returns_mean" in runners:  # multi-agent: the learner's own
        value = runners["module_episode_returns_mean"].get(LEARNER)
    else:
        value = runners.get(EPISODE_RETURN_MEAN)
    return None if value is None or math.isnan(value) else float(value)


def check_resume(run_dir: Path, cfg: RLlibConfig) -> dict:
    """The run's ``state.json``, after checking that its checkpoint was written by the
    config's ``env`` and ``env_version`` (the two envs' RLlib checkpoints hold different
    modules, the two layouts networks of different input sizes) with the config's
    ``rules`` and ``model`` (the run's ``config.yaml``); a ``ConfigError`` that names the
    key otherwise, where RLlib's restore would fail with a traceback or load mismatched
    weights. Runs from before the vector env record no env: they are aec runs; runs from
    before v1 record no env_version: 0."""
    state_file = run_dir / "state.json"
    if not state_file.is_file() or not (run_dir / "checkpoint").is_dir():
        raise ConfigError(f"{run_dir} holds no checkpoint of train/rllib/ppo.py to resume")
    state = json.loads(state_file.read_text(encoding="utf-8"))
    for key, default in (("env", "aec"), ("env_version", 0)):
        saved = state.get(key, default)
        if saved != getattr(cfg, key):
            raise ConfigError(f"{run_dir}'s checkpoint was written with {key}={saved}, this "
                              f"config has {key}={getattr(cfg, key)}: resume it with "
                              f"{key}={saved}")
    if (run_dir / "config.yaml").is_file():  # the table and the network the modules were built for
        saved_cfg = load_config(run_dir / "config.yaml")
        for key in ("rules", "model"):
            before, now = getattr(saved_cfg, key), getattr(cfg, key)
            if before != now:
                changed = sorted(k for k in {**before, **now} if before.get(k) != now.get(k))
                raise ConfigError(
                    f"{run_dir}'s checkpoint holds modules for its {key} (" + ", ".join(
                        f"{key}.{k}={before.get(k)!r}" for k in changed)
                    + f"): --resume keeps them, drop the {key}.* overrides")
    return state


def train(cfg: RLlibConfig, run_dir: Path, resume: bool = False, address: str | None = None,
          log=print) -> dict:
    """Runs (or continues) a training run until its stop condition; returns ``state``."""
    import ray

    run_dir.mkdir(parents=True, exist_ok=True)
    state = {"env": cfg.env, "env_version": cfg.env_version, "iterations": 0,
             "env_steps": 0, "minutes": 0.0}
    if resume:
        state = check_resume(run_dir, cfg)
        state.update(env=cfg.env, env_version=cfg.env_version)
    else:
        (run_dir / "config.yaml").write_text(dump(cfg), encoding="utf-8")
    if cfg.torch_threads:
        import torch

        torch.set_num_threads(cfg.torch_threads)
    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        algo = build_algorithm(cfg)
        try:
            if resume:
                algo.restore_from_path(str((run_dir / "checkpoint").resolve()))
            elif cfg.pretrain.teacher:
                state = _pretrain(algo, cfg, run_dir, state, log)
            state = _loop(algo, cfg, run_dir, state, log)
        finally:
            algo.stop()
    finally:
        if started_ray:
            ray.shutdown()
    return state


def _pretrain(algo, cfg: RLlibConfig, run_dir: Path, state: dict, log) -> dict:
    """The warm start (``train.rllib.pretrain``) of a new run: its time counts in
    ``state["minutes"]``, its statistics go to ``state["pretrain"]``; the imitation alone
    is saved (checkpoint, so a resume never pretrains again) and exported to
    ``policy-pretrain.pt``."""
    from train.rllib.pretrain import warm_start

    p = cfg.pretrain
    log(f"pretraining: imitating {p.teacher} for {p.decisions:,} decisions")
    start = time.perf_counter()
    stats = warm_start(algo, cfg, learner_spec(cfg), learner_id(algo), log=log)
    state["minutes"] += (time.perf_counter() - start) / 60
    state["pretrain"] = stats
    log(json.dumps({"pretrain": stats}))
    save_checkpoint(algo, run_dir, state, cfg)
    shutil.copyfile(run_dir / "policy.pt", run_dir / "policy-pretrain.pt")
    return state


class SnapshotPool:
    """The learner's last ``snapshots.pool_size`` snapshots (``opponents.self``, env=vector):
    taken on the driver from the LearnerGroup's weights, sent to every env runner
    (:func:`train.rllib.env.install_snapshots`), so remote runners play the refreshed
    weights from their next matches on; ``ids`` name them as the match results do."""

    def __init__(self, cfg: RLlibConfig):
        self.cfg = cfg
        self.items: list[tuple[str, Any]] = []

    def refresh(self, algo, iteration: int) -> list[list[str]]:
        """A snapshot of the learner now (``self@<iteration>``), the oldest dropped past
        the pool size; returns what each env runner plays."""
        from functools import partial

        from train.rllib.env import install_snapshots
        from train.rllib.export import numpy_policy

        cfg = self.cfg
        sid = f"{SELF}@{iteration}"
        self.items = [x for x in self.items if x[0] != sid]
        self.items.append((sid, numpy_policy(learner_state(algo), cfg.rules, cfg.model,
                                             layout_version=cfg.env_version)))
        self.items = self.items[-int(cfg.snapshots.pool_size):]
        payload = {"bots": bots_of(cfg), "self": float(cfg.opponents[SELF]),
                   "snapshots": self.items, "deterministic": cfg.snapshots.deterministic,
                   "seed": cfg.seed + iteration}
        return algo.env_runner_group.foreach_env_runner(partial(install_snapshots, payload),
                                                        local_env_runner=True)

    @property
    def ids(self) -> list[str]:
        return [sid for sid, _ in self.items]


def _loop(algo, cfg: RLlibConfig, run_dir: Path, state: dict, log) -> dict:
    stop = cfg.stop
    start = time.perf_counter()
    minutes0, steps0 = state["minutes"], state["env_steps"]
    since_save = 0
    pool = SnapshotPool(cfg) if cfg.env == "vector" and cfg.opponents.get(SELF) else None
    if pool is not None:  # the first snapshot before learning, as train/sb3/run.py takes it
        pool.refresh(algo, state["iterations"])
    progress = (run_dir / "progress.jsonl").open("a", encoding="utf-8")
    try:
        while True:
            result = algo.train()
            state["iterations"] += 1
            if pool is not None and state["iterations"] % cfg.snapshots.every == 0:
                pool.refresh(algo, state["iterations"])
            state["env_steps"] += _env_steps(result)
            state["minutes"] = minutes0 + (time.perf_counter() - start) / 60
            rate = (state["env_steps"] - steps0) / max(1e-9, (time.perf_counter() - start))
            line = {"iteration": state["iterations"], "env_steps": state["env_steps"],
                    "minutes": round(state["minutes"], 3), "env_steps_per_s": round(rate, 1),
                    "learner_return": _learner_return(result)}
            if pool is not None:
                line["snapshots"] = pool.ids
            progress.write(json.dumps(line) + "\n")
            progress.flush()
            log(json.dumps(line))
            since_save += 1
            done = ((stop.minutes is not None and state["minutes"] >= stop.minutes)
                    or (stop.env_steps is not None and state["env_steps"] >= stop.env_steps)
                    or (stop.iterations is not None
                        and state["iterations"] >= stop.iterations))
            if done or since_save >= cfg.checkpoint_every:
                save_checkpoint(algo, run_dir, state, cfg)
                since_save = 0
            if done:
                return state
    finally:
        progress.close()


def evaluate(run_dir: Path, cfg: RLlibConfig, workers: int | None = None, log=print) -> dict:
    """Duplicate deals of the exported policy against each of ``eval_opponents``."""
    from agents.tournament import run_tournament

    out = {}
    spec = f"ppo:{run_dir / 'policy.pt'}"
    for opp in cfg.eval_opponents:
        res = run_tournament([spec, opp], rules=cfg.rules, deals=cfg.eval_deals,
                             seed=cfg.seed + 1, workers=workers, progress=False)
        s = res.stats[res.agents[0]]
        out[opp] = {"win_rate": s.win_rate, "low": s.win_low, "high": s.win_high,
                    "deals": cfg.eval_deals}
        log(f"vs {opp}: {100 * s.win_rate:.1f}% [{100 * s.win_low:.1f}, {100 * s.win_high:.1f}]"
            f" over {cfg.eval_deals} duplicate deals")
    (run_dir / "eval.json").write_text(json.dumps(out, indent=1), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    from train.common.entry import preamble

    p = argparse.ArgumentParser(prog="python train/rllib_ppo.py",
                                description=__doc__.split("\n\n")[0])
    add_arguments(p, DEFAULT_CONFIG)
    p.add_argument("--resume", default=None, metavar="RUN_DIR", help="continue this run")
    p.add_argument("--run-dir", default=None, help="where to write (default runs/<name>-<time>)")
    p.add_argument("--address", default=None,
                   help="Ray cluster address (default: RAY_ADDRESS, else a local Ray)")
    args = p.parse_args(argv)
    run_dir = Path(args.resume) if args.resume else None

    def load() -> RLlibConfig:
        if run_dir is not None:
            if not (run_dir / "config.yaml").is_file():
                raise ConfigError(f"{run_dir} holds no checkpoint of train/rllib/ppo.py to "
                                  "resume")
            cfg = load_config(run_dir / "config.yaml", args.overrides)
            check_resume(run_dir, cfg)
            return cfg
        return load_config(args.config or DEFAULT_CONFIG, args.overrides)

    start = preamble(p, args, CONFIG, load)
    if start.exit is not None:
        return start.exit
    cfg = start.cfg
    if run_dir is None:
        run_dir = Path(args.run_dir or f"runs/{cfg.name}-{time.strftime('%Y%m%d-%H%M%S')}")
    if args.resume:
        (run_dir / "config.yaml").write_text(dump(cfg), encoding="utf-8")
    print(f"run directory: {run_dir}", flush=True)
    state = train(cfg, run_dir, resume=bool(args.resume), address=args.address,
                  log=lambda s: print(s, flush=True))
    print(f"trained {state['iterations']} iterations, {state['env_steps']} env steps, "
          f"{state['minutes']:.1f} min; policy: {run_dir / 'policy.pt'}", flush=True)
    if cfg.eval_deals:
        evaluate(run_dir, cfg, workers=cfg.eval_workers, log=lambda s: print(s, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
