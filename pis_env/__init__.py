"""Pis Yedili ("Dirty Seven"): rules engine and PettingZoo AEC environment.

``pis_env.env(**options)`` is the AEC environment (also ``pis_env.pis_yedili_v0.env``);
``pis_env.engine.GameState`` the pure rules engine; ``pis_env.decode_observation`` turns an
observation vector back into named fields. Importing this package needs no torch.
"""

from . import pis_yedili_v0
from .cards import card_name, parse_card
from .engine import NUM_ACTIONS, GameState, IllegalActionError, action_name
from .env import ENV_NAME, env, raw_env
from .history import HistoryError
from .observation import LAYOUT_VERSION, decode_observation, segment_table
from .rules import Rules

__version__ = "0.1.0"

__all__ = [
    "ENV_NAME", "LAYOUT_VERSION", "NUM_ACTIONS", "GameState", "HistoryError",
    "IllegalActionError", "Rules",
    "action_name", "card_name", "decode_observation", "env", "parse_card", "pis_yedili_v0",
    "raw_env", "segment_table",
]


def _register_gymnasium() -> None:
    import gymnasium

    if "PisYedili-v0" not in gymnasium.registry:
        gymnasium.register(id="PisYedili-v0", entry_point="pis_env.wrappers:SingleAgentEnv")


_register_gymnasium()
