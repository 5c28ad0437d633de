"""The ``vector_entry_point`` of ``PisYedili-v0`` and ``PisYedili-Events-v0``: which vector env
``make_vec`` builds.

``pis_env`` registers ``"train.vector.entry:make_vector_env"`` (``make_vector_env_v1`` for
``PisYedili-Events-v0``: the same, the batched engine writing the v1 layout) as a string, so
it never imports this layer (nor numba or torch). Registering a vector entry point makes it
``gymnasium.make_vec``'s default for the id, so this function keeps the calls that worked
before it existed working:

* opponents the batched engine can play (names such as ``"greedy"``, ``"heuristic"``,
  ``"ppo:PATH"``, batched callables ``policy(obs, masks)``, ``{opponent: weight}`` mixes):
  :class:`train.vector.gym_vector_env.PisYediliVectorEnv`, every game inside the numba engine;
* Python agents (objects with ``act(observation)``, callables of one observation dict),
  ``opponent_sampler``, ``render_mode`` or ``opponent_illegal``: what only the single-agent
  view does, so gymnasium's ``SyncVectorEnv`` over ``SingleAgentEnv``, the bots played row
  by row, as ``vectorization_mode="sync"`` gives;
* no numba (a ``pis-yedili`` install without the ``fast`` extra): the same
  ``SyncVectorEnv`` when the single-agent view can play the call (no opponents named),
  with a ``RuntimeWarning`` saying so, otherwise an ``ImportError`` that says what to
  install or which mode to use.

This module imports gymnasium and ``pis_env`` only.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from pis_env import GYMNASIUM_IDS

#: The env id of each observation layout version the batched engine writes.
ENV_IDS = dict(GYMNASIUM_IDS)
ENV_ID = ENV_IDS[0]
#: Arguments only ``SingleAgentEnv`` takes.
SINGLE_AGENT_ONLY = ("opponent_sampler", "render_mode", "opponent_illegal")
#: Arguments only the batched vector env takes.
BATCHED_ONLY = ("observation", "features", "privileged", "skip_forced", "win_bonus",
                "mix_per", "seed", "bot_factory")


def make_vector_env(num_envs: int = 1, **kwargs: Any) -> gym.vector.VectorEnv:
    """``num_envs`` games of ``PisYedili-v0`` (module docstring for which vector env)."""
    return _make(0, num_envs, kwargs)


def make_vector_env_v1(num_envs: int = 1, **kwargs: Any) -> gym.vector.VectorEnv:
    """``num_envs`` games of ``PisYedili-Events-v0`` (the v1 observation layout)."""
    return _make(1, num_envs, kwargs)


def _make(layout_version: int, num_envs: int, kwargs: dict) -> gym.vector.VectorEnv:
    env_id = ENV_IDS[layout_version]
    if _needs_single_agent_view(kwargs):
        return _sync(env_id, num_envs, kwargs)
    try:
        from train.vector.gym_vector_env import PisYediliVectorEnv
    except ImportError as error:
        if kwargs.get("opponents") is None and not set(kwargs) & set(BATCHED_ONLY):
            warnings.warn(
                f"{env_id}: the batched engine could not be imported ({error}), so make_vec "
                f"steps gymnasium's SyncVectorEnv over the single-agent view (random "
                f"opponents, as asked); pip install 'pis-yedili[fast]' for the batched one",
                RuntimeWarning, stacklevel=3)
            return _sync(env_id, num_envs, kwargs)
        raise ImportError(
            f"{env_id}'s vector env steps the batched engine, which could not be imported "
            f"({error}): install it with pip install 'pis-yedili[fast]' (numba; torch too "
            f"for ppo: opponents), or pass agent objects as opponents with "
            f"vectorization_mode='sync' to step gymnasium's SyncVectorEnv over the "
            f"single-agent view") from error
    return PisYediliVectorEnv(num_envs, layout_version=layout_version, **kwargs)


def _sync(env_id: str, num_envs: int, kwargs: dict) -> gym.vector.SyncVectorEnv:
    return gym.vector.SyncVectorEnv(
        [lambda: gym.make(env_id, **dict(kwargs)) for _ in range(int(num_envs))])


def _needs_single_agent_view(kwargs: dict) -> bool:
    if any(kwargs.get(key) is not None for key in SINGLE_AGENT_ONLY):
        return True
    opponents = kwargs.get("opponents")
    if opponents is None or isinstance(opponents, (str, Mapping)):
        return False
    if isinstance(opponents, (list, tuple)):
        return any(_plays_row_by_row(o) for o in opponents)
    return _plays_row_by_row(opponents)


def _plays_row_by_row(opponent) -> bool:
    """An agent of ``agents.base`` (``act(observation)``) or a callable of one observation
    dict, as ``SingleAgentEnv`` takes them; not a batched ``policy(obs, masks)``."""
    if isinstance(opponent, str) or hasattr(opponent, "state_actions"):
        return False
    if hasattr(opponent, "act"):
        return True
    if not callable(opponent):
        return False
    try:
        inspect.signature(opponent).bind(None, None)
    except TypeError:
        return True
    except ValueError:  # no signature (a builtin): take it as batched
        return False
    return False


__all__ = ["ENV_ID", "ENV_IDS", "make_vector_env", "make_vector_env_v1"]
