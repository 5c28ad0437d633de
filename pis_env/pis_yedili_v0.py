"""Versioned entry point, PettingZoo style: ``from pis_env import pis_yedili_v0``."""

from .env import env, raw_env

__all__ = ["env", "raw_env"]
