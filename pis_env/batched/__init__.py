"""A batched Pis Yedili engine: thousands of matches in numpy arrays, stepped by numba.

Importing this subpackage imports numba (an optional dependency; ``import pis_env``
does not). ``BatchedGame`` is the engine (rules of ``pis_env.engine``, observations of
``pis_env.observation``, masks and rewards of ``pis_env.env``); ``RandomPolicy`` and
``GreedyPolicy`` are batched bots; ``BatchedEnv`` is a learner-seat view with batched
opponents that a vectorised training env can wrap.
"""

from .core import (
    BatchedGame,
    GreedyPolicy,
    RandomPolicy,
    StepResult,
    rules_vector,
    uint8_scale,
)
from .env import BatchedEnv
from .kernels import REASON_NAMES

__all__ = [
    "REASON_NAMES", "BatchedEnv", "BatchedGame", "GreedyPolicy", "RandomPolicy", "StepResult",
    "rules_vector", "uint8_scale",
]
