"""Versioned entry point, PettingZoo style: ``from pis_env import pis_yedili_v0``.

``pis_env.aec`` holds the code and the manual of the environment.
"""

from .aec import ENV_NAME, env, parallel_env, raw_env

__all__ = ["ENV_NAME", "env", "parallel_env", "raw_env"]
