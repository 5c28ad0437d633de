"""Versioned entry point, PettingZoo style: ``from pis_env import pis_yedili_v1``.

Version 1 is version 0 with the public record in the observation; ``pis_env.aec_v1``
holds its code and its manual (the segment table).
"""

from .aec_v1 import ENV_NAME, LAYOUT_VERSION, SingleAgentEnv, env, parallel_env, raw_env

__all__ = ["ENV_NAME", "LAYOUT_VERSION", "SingleAgentEnv", "env", "parallel_env", "raw_env"]
