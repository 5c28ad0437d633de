"""Pis Yedili ("Dirty Seven"): rules engine and PettingZoo AEC environment.

``pis_env.env(**options)`` is the AEC environment (also ``pis_env.pis_yedili_v0.env``, and
``pettingzoo.make("aec", "pis_yedili/pis_yedili_v0")`` once ``pis_env`` is imported);
``pis_env.engine.GameState`` the pure rules engine; ``pis_env.decode_observation`` turns an
observation vector back into named fields. Importing this package needs no torch.
"""

from . import pis_yedili_v0, pis_yedili_v1
from .aec import ENV_NAME, env, raw_env
from .cards import card_name, parse_card
from .engine import NUM_ACTIONS, GameState, IllegalActionError, action_name
from .history import HistoryError
from .observation import LAYOUT_VERSION, LAYOUT_VERSIONS, decode_observation, segment_table
from .rules import Rules

__version__ = "0.1.0"

__all__ = [
    "ENV_NAME", "GYMNASIUM_IDS", "LAYOUT_VERSION", "LAYOUT_VERSIONS", "NUM_ACTIONS",
    "PETTINGZOO_ID", "GameState", "HistoryError", "IllegalActionError", "Rules",
    "action_name", "card_name", "decode_observation", "env", "parse_card", "pis_yedili_v0",
    "pis_yedili_v1", "raw_env", "segment_table",
]


#: The id of the AEC env in PettingZoo's registry: ``pettingzoo.make("aec", PETTINGZOO_ID)``.
PETTINGZOO_ID = f"pis_yedili/{ENV_NAME}"
#: The gymnasium id of the single-agent view of each observation layout version:
#: ``PisYedili-v0`` (``pis_yedili_v0``) and ``PisYedili-Events-v0`` (``pis_yedili_v1``, the
#: observation with the public event log).
GYMNASIUM_IDS = {0: "PisYedili-v0", 1: "PisYedili-Events-v0"}


def _register() -> None:
    """Register the single-agent views with gymnasium (``gymnasium.make("PisYedili-v0")``,
    ``"PisYedili-Events-v0"`` for the v1 observation;
    ``gymnasium.make_vec`` builds the batched vector env of ``train.vector.gym_vector_env``)
    and the AEC env with PettingZoo (``pettingzoo.make("aec", "pis_yedili/pis_yedili_v0")``;
    its own namespace: ``classic/`` is PettingZoo's). Neither registry discovers plugins,
    so the ids exist once ``pis_env`` is imported."""
    import gymnasium
    import pettingzoo
    from pettingzoo.env_registry.exceptions import PettingZooRegistryError

    if GYMNASIUM_IDS[0] not in gymnasium.registry:
        # make_vec's default: the batched engine (train.vector.entry chooses, and falls back
        # to SyncVectorEnv for Python bots); a string, so pis_env imports no train code
        gymnasium.register(id=GYMNASIUM_IDS[0], entry_point="pis_env.wrappers:SingleAgentEnv",
                           vector_entry_point="train.vector.entry:make_vector_env")
    # The event-log view has a name of its own: gymnasium reads Name-v0 and Name-v1 as two
    # versions of one env and warns at every make of the older one, and both are current.
    if GYMNASIUM_IDS[1] not in gymnasium.registry:  # the v1 observation (pis_yedili_v1)
        gymnasium.register(id=GYMNASIUM_IDS[1], entry_point="pis_env.aec_v1:SingleAgentEnv",
                           vector_entry_point="train.vector.entry:make_vector_env_v1")
    for env_id, entry in ((PETTINGZOO_ID, "pis_env.aec:env"),
                          ("pis_yedili/pis_yedili_v1", "pis_env.aec_v1:env")):
        try:  # the registry keys ids spelled its own way (pis_yedili-v0): ask it
            pettingzoo.spec("aec", env_id)
        except PettingZooRegistryError:
            pettingzoo.register("aec", env_id, entry_point=entry)


_register()
