"""The keys of the dict observation that the vector envs and RLlib share.

RLlib's action-masking modules read ``{"observations": ..., "action_mask": ...}``
(PettingZoo's AEC env says ``observation``); this module imports nothing of the project,
so every side may import it.
"""

OBS_KEY = "observations"
MASK_KEY = "action_mask"
