"""The Pis Yedili AEC env as RLlib sees it: ``PettingZooEnv`` over ``pis_env.aec`` (or
``pis_env.pis_yedili_v1.env``: ``env_version``), and the vector env's creator.

RLlib's action-masking module (``train.rllib.modules``) reads observation dicts with the
keys ``observations`` and ``action_mask`` (a float mask, since it takes its log), while
PettingZoo's classic convention, which ``pis_env`` follows, is ``observation`` and an
int8 ``action_mask``. ``MaskKeysWrapper`` renames the key and casts the mask, nothing
else: the rules, rewards and turn order are ``pis_env``'s own.

Ray is imported inside ``make_env`` only, so this module imports without it.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper

from pis_env.engine import NUM_ACTIONS
from train.vector.keys import MASK_KEY, OBS_KEY


class MaskKeysWrapper(BaseWrapper):
    """``{"observation", "action_mask": int8}`` -> ``{"observations", "action_mask": float32}``."""

    def __init__(self, env):
        super().__init__(env)
        self._spaces = {}
        for agent in env.possible_agents:
            inner = env.observation_space(agent)
            self._spaces[agent] = spaces.Dict({
                OBS_KEY: inner["observation"],
                MASK_KEY: spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
            })

    def observation_space(self, agent):
        return self._spaces[agent]

    def observe(self, agent):
        obs = self.env.observe(agent)
        if obs is None:
            return None
        return {OBS_KEY: obs["observation"],
                MASK_KEY: np.asarray(obs["action_mask"], dtype=np.float32)}


def pis_aec_env(rules: dict, env_version: int = 0):
    """``pis_env.pis_yedili_v<env_version>.env(**rules)``: the AEC env of that observation
    layout (``pis_env.aec`` for 0)."""
    import importlib

    from pis_env import LAYOUT_VERSIONS

    if env_version not in LAYOUT_VERSIONS:
        raise ValueError(f"env_version={env_version!r}: one of {LAYOUT_VERSIONS}")
    return importlib.import_module(f"pis_env.pis_yedili_v{int(env_version)}").env(**rules)


def make_aec_env(rules: dict, env_version: int = 0):
    """:func:`pis_aec_env` with the keys RLlib's masking module reads."""
    return MaskKeysWrapper(pis_aec_env(rules, env_version))


def make_vector_env(env_config: dict):
    """The vector env creator given to ``register_env`` for
    ``gym_env_vectorize_mode="vector_entry_point"``: RLlib calls it with ``num_envs``
    added to ``env_config`` and gets ``train.vector.gym_vector_env.PisYediliVectorEnv`` (the batched
    engine, the dict observation its masking module reads). ``env_config``:
    ``num_envs``, ``rules`` (the options), ``opponents`` (``{bot: weight}``), optional
    ``env_version`` (the observation layout, default 0), ``learner_seat`` (default
    ``None``: drawn per match), ``seed``, ``torch_threads`` (pinned in the env runner, as
    :func:`make_env` does)."""
    from train.vector.gym_vector_env import PisYediliVectorEnv
    from train.vector.learner_batch import Learner

    config = dict(env_config)
    _pin_torch_threads(config.pop("torch_threads", None))
    rules = dict(config.pop("rules", {}))
    learner = Learner(seat=config.pop("learner_seat", None),
                      layout_version=int(config.pop("env_version", 0)))
    return PisYediliVectorEnv(int(config.pop("num_envs", 1)), config.pop("opponents", None),
                              learner=learner, observation="dict", **config, **rules)


def install_snapshots(payload: dict, runner) -> list[str]:
    """Runs in an env runner (``EnvRunnerGroup.foreach_env_runner``): the vector env's
    opponents become ``payload["bots"]`` (``{bot: weight}``) plus the learner's snapshots
    (``payload["snapshots"]``: ``[(id, agents.ppo.NumpyPolicy)]``), sharing
    ``payload["self"]``, each played by one torch pass for all games waiting on it
    (``agents.batched_policy.TorchPolicy``; argmax with ``payload["deterministic"]``). From
    the next match on; the match results' ``opponents`` name them by id. Policies of
    snapshots that left the pool are released. Returns the ids this runner now plays
    (none when it has no env: a local runner beside remote ones)."""
    from agents.batched_policy import TorchPolicy

    env = getattr(getattr(runner, "env", None), "unwrapped", None)
    if env is None or not hasattr(env, "set_opponent_mix"):
        return []
    cache = env.__dict__.setdefault("_snapshot_policies", {})
    snapshots = list(payload["snapshots"])
    ids = [sid for sid, _ in snapshots]
    for sid in [k for k in cache if k not in ids]:
        del cache[sid]
    mix: dict = dict(payload["bots"])
    for k, (sid, policy) in enumerate(snapshots):
        if sid not in cache:
            cache[sid] = TorchPolicy.from_numpy_policy(
                policy, deterministic=bool(payload["deterministic"]),
                seed=int(payload["seed"]) + 7 * k + 1, name=sid)
        mix[cache[sid]] = float(payload["self"]) / len(snapshots)
    env.set_opponent_mix(mix)
    return ids


def _pin_torch_threads(threads) -> None:
    if threads:
        import torch

        torch.set_num_threads(int(threads))


def make_env(env_config: dict):
    """The env creator given to ``register_env``: ``env_config["rules"]`` are the options,
    ``env_config["env_version"]`` the env (default 0).

    It runs in every env runner process, so it also pins that process's torch threads
    (``env_config["torch_threads"]``): the sampling forward passes are tiny (a few rows),
    and with torch's default thread pool they spend most of their time synchronising
    threads (measured: 7 ms per linear layer on 2 busy cores)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    _pin_torch_threads(env_config.get("torch_threads"))
    return PettingZooEnv(make_aec_env(dict(env_config.get("rules", {})),
                                      int(env_config.get("env_version", 0))))
