"""The config of ``train/rllib/ppo.py``: ``RLlibConfig`` below, read by ``train.sb3.config``'s
machinery (YAML files, ``key=value`` overrides, ``--help-config``, the nearest key named
for a typo) like every training entry point's.

Its own keys, not ``train/sb3/run.py``'s: the RLlib run holds one learning seat against fixed
bots, so it has no league or snapshot pool. The sections say where each key goes:
``env`` (what the env runners step), ``env_runners`` (RLlib's sampling processes),
``learners`` (where the update runs, GPUs), ``model`` and ``ppo`` (keyword arguments
passed straight to RLlib's ``DefaultModelConfig`` and ``PPOConfig.training``: mappings,
merged key by key and checked by RLlib itself), ``pretrain`` (the warm start of
``train.rllib.pretrain``), ``stop`` (the time budget) and the evaluation keys.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pis_env import Rules, shipped
from train.common import run_fields
from train.common.pretrain import ImitationConfig
from train.common.schema import (
    ConfigError,
    Schema,
    check_mix,
    check_teacher,
    dump,
    mapping,
    param,
    section,
)

DEFAULT_CONFIG = shipped.shipped_dir("config") / "rllib_ppo.yaml"
#: Activations the exported policy (``train.rllib.export``) can run.
ACTIVATIONS = ("tanh", "relu")

#: Where the imitation warm start collects its teacher's decisions (``train.rllib.pretrain``).
COLLECTORS = ("auto", "batched", "aec")


@functools.cache
def ppo_keywords() -> tuple[str, ...] | None:
    """The keywords of RLlib's ``PPOConfig.training`` (its own and ``AlgorithmConfig``'s),
    for the nearest-key hints of ``ppo.*``; None without RLlib (which then cannot run
    either), so that ``--help-config`` works anywhere."""
    try:
        from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
        from ray.rllib.algorithms.ppo import PPOConfig
    except ImportError:
        return None
    return tuple(dict.fromkeys(
        name for method in (PPOConfig.training, AlgorithmConfig.training)
        for name in inspect.signature(method).parameters if name not in ("self", "kwargs")))


@functools.cache
def model_keywords() -> tuple[str, ...] | None:
    """The fields of RLlib's ``DefaultModelConfig`` (``model.*``); None without RLlib."""
    try:
        from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    except ImportError:
        return None
    return tuple(f.name for f in dataclasses.fields(DefaultModelConfig))


#: The sampling envs of ``env``: the batched vector env, or the AEC env through PettingZooEnv.
ENVS = ("vector", "aec")
#: ``num_envs_per_env_runner`` when it is null, per ``env``.
DEFAULT_ENVS_PER_RUNNER = {"vector": 256, "aec": 16}
#: The shortest rollout fragment a config may give (steps per env and sample call): shorter
#: ones spend the sampling time in RLlib's per-call overhead and cut episodes into pieces.
MIN_FRAGMENT = 8
#: The most envs one env runner may step.
MAX_ENVS_PER_RUNNER = 1 << 14
#: The most snapshots a pool may keep (each env runner holds them all as torch networks).
MAX_POOL = 64
#: The opponent name of the learner's snapshot pool in ``opponents``.
SELF = "self"


@dataclass
class EnvRunnersConfig:
    num_env_runners: int = param(1, "sampling processes (0: sample in the driver); what "
                                 "scales out on a cluster", ge=0)
    num_envs_per_env_runner: int | None = param(
        None, "envs each sampling process steps (null: 256 for env=vector, 16 for env=aec)",
        ge=1, le=MAX_ENVS_PER_RUNNER)
    custom_resources: dict[str, float] = param(
        {}, "Ray custom resources each env runner needs (RLlib's "
        "custom_resources_per_env_runner): give each node of a cluster {runner_slot: 1} and "
        "ask for {runner_slot: 1} to put one runner per node")


@dataclass
class LearnersConfig:
    num_learners: int = param(0, "RLlib Learner processes (0: one learner in the driver; "
                              "N: N remote learners, e.g. one per GPU, each training on "
                              "ppo.train_batch_size_per_learner)", ge=0)
    num_gpus_per_learner: float = param(0.0, "GPUs per learner (0: CPU; nothing here needs a "
                                        "GPU)", ge=0)


@dataclass
class SnapshotsConfig:
    every: int = param(10, "training iterations between snapshots of the learner (the first "
                       "when PPO starts), sent to every env runner", ge=1)
    pool_size: int = param(5, "snapshots kept; opponents.self is shared among them", ge=1,
                           le=MAX_POOL)
    deterministic: bool = param(False, "snapshots play their argmax instead of sampling")


@dataclass
class RLlibPretrainConfig(ImitationConfig):
    collector: str = param("auto", "batched (the numba engine), aec (pis_env.aec with the "
                           "Python bots), auto: batched if importable", choices=COLLECTORS)


@dataclass
class StopConfig:
    minutes: float | None = param(30.0, "training time, the warm start included (null: no "
                                  "limit)", gt=0)
    env_steps: int | None = param(None, "env steps sampled (null: no limit)", gt=0)
    iterations: int | None = param(None, "training iterations (null: no limit)", gt=0)


@dataclass
class RLlibConfig:
    """A run of ``train/rllib/ppo.py``: RLlib PPO on the new API stack."""

    name: str = run_fields.name("rllib_ppo")
    seed: int = run_fields.seed("the modules, the seat draws and the warm start")
    rules: dict[str, Any] = mapping({"num_players": 2}, "pis_env options of the table "
                                    "(single deals: num_deals 1)", keys=Rules.keys)
    opponents: dict[str, float] = param(
        {"heuristic": 1.0, "greedy": 1.0, "self": 0.5}, "the bots of the other seats, drawn "
        "per episode and seat with these weights (never trained); 'self': the pool of the "
        "learner's snapshots (env=vector; shared among them)")
    snapshots: SnapshotsConfig = section(SnapshotsConfig, "the pool behind opponents.self")
    env_version: int = run_fields.env_version(
        "the env the learner plays, pis_yedili_v<N> (train/sb3/run.py's key): observation "
        "layout N is the module's input (0: v0; 1: v1, plus a per-opponent summary and the "
        "public event log); the warm start, snapshots, checkpoint and exported policy use it")
    env: str = param("vector", "the sampling env: vector (train.vector.gym_vector_env, the batched "
                     "numba engine with the bots inside it, gym_env_vectorize_mode="
                     "vector_entry_point) or aec (pis_env.aec through PettingZooEnv, the "
                     "bots as RLModules, every seat's move an env step)", choices=ENVS)
    env_runners: EnvRunnersConfig = section(EnvRunnersConfig, "RLlib's EnvRunners: the "
                                            "sampling processes")
    learners: LearnersConfig = section(LearnersConfig, "RLlib's Learners: where the PPO "
                                       "update runs (PPOConfig.learners)")
    torch_threads: int | None = param(1, "torch threads per process, driver and env "
                                         "runners (null: torch's default)", ge=1)
    model: dict[str, Any] = mapping(
        {"fcnet_hiddens": [256, 256], "fcnet_activation": "tanh", "vf_share_layers": False},
        "RLlib's DefaultModelConfig keywords, the actor and critic MLPs (fcnet_activation: "
        "tanh or relu, what the exported policy runs; vf_share_layers false: a separate "
        "critic, whose loss does not move the imitated actor)", keys=model_keywords)
    pretrain: RLlibPretrainConfig = section(
        RLlibPretrainConfig, "the warm start of a new run (train/rllib/pretrain.py), in the "
        "time budget; pretrain.teacher=null skips the warm start",
        decisions=500_000, epochs=6)
    ppo: dict[str, Any] = mapping(
        {"lr": 1.0e-4, "train_batch_size_per_learner": 16384, "minibatch_size": 2048,
         "num_epochs": 4, "gamma": 1.0, "lambda_": 0.95, "clip_param": 0.2,
         "entropy_coeff": 0.001, "vf_loss_coeff": 0.5, "grad_clip": 0.5},
        "RLlib's PPOConfig.training(...) keywords (a small lr: PPO refines the imitation "
        "instead of undoing it; gamma 1: a deal is short, the points stay exact; the "
        "batch sets the rollout fragment: batch x learners / (envs x runners) steps)",
        keys=ppo_keywords)
    stop: StopConfig = section(StopConfig, "the budget: whichever comes first")
    checkpoint_every: int = param(10, "training iterations between checkpoints (and policy "
                                  "exports)", ge=1)
    eval_deals: int = param(1000, "duplicate deals against each eval opponent at the end "
                            "(0: none)", ge=0)
    eval_opponents: list[str] = param(["greedy", "heuristic"], "bots the final policy is "
                                      "evaluated against")
    eval_workers: int | None = param(None, "tournament processes for the evaluation (null: "
                                        "every core)", ge=1)


def _check(cfg: RLlibConfig) -> RLlibConfig:
    """What RLlib would reject late (or accept wrongly); ``rules`` expanded."""
    try:
        rules = Rules.from_options(**cfg.rules).to_dict()
    except ValueError as e:
        raise ConfigError(f"rules: {e}") from None
    if rules["num_deals"] != 1:
        raise ConfigError("rllib_ppo trains on single deals: rules.num_deals must be 1")
    cfg.rules = rules
    check_mix("opponents", cfg.opponents, also=(SELF,))
    if not bots_of(cfg):
        raise ConfigError("opponents: give at least one bot besides 'self' (the first "
                          "matches are played before any snapshot exists)")
    if cfg.env == "aec" and cfg.opponents.get(SELF):
        bots = ", ".join(f"{k}: {w:g}" for k, w in bots_of(cfg).items())
        raise ConfigError(f"opponents.self (snapshots of the learner) needs env=vector; with "
                          f"env=aec give bots only, e.g. 'opponents={{{bots}}}'")
    runners = cfg.env_runners
    if runners.num_envs_per_env_runner is None:
        runners.num_envs_per_env_runner = DEFAULT_ENVS_PER_RUNNER[cfg.env]
    for name, amount in runners.custom_resources.items():
        if not amount > 0:
            raise ConfigError(f"env_runners.custom_resources.{name}={amount!r}: an amount > 0")
    fragment = rollout_fragment_length(cfg)
    if cfg.env == "vector" and fragment < MIN_FRAGMENT:
        raise ConfigError(
            f"ppo.train_batch_size_per_learner={cfg.ppo.get('train_batch_size_per_learner')}"
            f" over {runners.num_envs_per_env_runner} envs x "
            f"{max(1, runners.num_env_runners)} env runners gives rollout fragments of "
            f"{fragment} steps (at least {MIN_FRAGMENT}): raise the batch or lower "
            f"env_runners.num_envs_per_env_runner")
    act = cfg.model.get("fcnet_activation", "tanh")
    if act not in ACTIVATIONS:
        raise ConfigError(f"model.fcnet_activation={act!r}: the exported policy supports "
                          f"{', '.join(ACTIVATIONS)}")
    if all(value is None for value in dataclasses.asdict(cfg.stop).values()):
        raise ConfigError("set at least one of stop.minutes, stop.env_steps, stop.iterations")
    check_teacher("pretrain.teacher", cfg.pretrain.teacher)
    check_mix("eval_opponents", dict.fromkeys(cfg.eval_opponents, 1.0), also=("ppo:",))
    return cfg


def bots_of(cfg: RLlibConfig) -> dict[str, float]:
    """``opponents`` without ``self``: the bots (what the warm start plays against, and
    the AEC env's modules)."""
    return {k: float(w) for k, w in cfg.opponents.items() if k != SELF and float(w) > 0}


def rollout_fragment_length(cfg: RLlibConfig) -> int:
    """Steps per env and sample call so that the env runners' fragments fill one train
    batch: ``train_batch_size_per_learner x max(1, num_learners) / (envs x runners)``,
    rounded up (RLlib's ``"auto"``, computed here so the config can refuse tiny ones)."""
    runners = cfg.env_runners
    batch = int(cfg.ppo.get("train_batch_size_per_learner", 4000))
    batch *= max(1, int(cfg.learners.num_learners))
    envs = int(runners.num_envs_per_env_runner) * max(1, int(runners.num_env_runners))
    return max(1, -(-batch // envs))


#: The config of ``train/rllib/ppo.py`` (``train.sb3.config.Schema``).
CONFIG = Schema(RLlibConfig, check=_check)


def load_config(path: str | Path | None = None,
                overrides: list[str] | None = None) -> RLlibConfig:
    """The defaults, then ``path`` (a partial or full config, e.g. a run's saved
    ``config.yaml``), then ``key=value`` overrides: checked and resolved (the typed
    ``RLlibConfig``; a ``ConfigError`` naming the key)."""
    return CONFIG.build(path, overrides)


__all__ = ["CONFIG", "DEFAULT_CONFIG", "ENVS", "SELF", "RLlibConfig", "bots_of", "dump",
           "load_config", "rollout_fragment_length"]
