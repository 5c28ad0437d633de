"""The privileged-critic policy at the path the shipped SB3 archives pickle it by.

``models/*.zip`` name ``train.policy.PrivilegedCriticPolicy``; the class lives in
``train.sb3.policy``.
"""

from train.sb3.policy import PrivilegedCriticPolicy

__all__ = ["PrivilegedCriticPolicy"]
