"""RLModules for ``train/rllib/ppo.py``: the learner and the seated bots.

``MaskedPPOTorchRLModule`` is RLlib's default PPO module (separate actor and critic MLPs)
with the action mask applied as ``-inf`` logits outside the network, the way RLlib's own
action-masking example does it: the network sees only ``observations``; the mask's log is
added to the logits, so illegal actions get probability 0 in sampling, in the loss and in
the exported policy (``agents.ppo`` masks the same way). Unlike the example it never
mutates the batch it is given (the learner's GAE pass and the train pass read the same
batch).

``BotRLModule`` seats one of the project's bots (``agents.make``) as a non-trained policy:
its forward passes call ``act`` on each row. It must stay out of ``policies_to_train``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN

from train.vector.keys import MASK_KEY, OBS_KEY


def _split(batch: dict) -> tuple[Any, dict]:
    """(mask, a shallow copy of ``batch`` whose observations are the vectors only)."""
    obs = batch[Columns.OBS]
    if not isinstance(obs, dict) or MASK_KEY not in obs or OBS_KEY not in obs:
        raise ValueError(
            f"this module needs dict observations with keys {OBS_KEY!r} and {MASK_KEY!r} "
            "(wrap the env with train.rllib.env.MaskKeysWrapper)"
        )
    out = dict(batch)
    out[Columns.OBS] = obs[OBS_KEY]
    return obs[MASK_KEY], out


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """PPO's default torch module over ``observations``, logits masked by ``action_mask``."""

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs):
        if not isinstance(observation_space, gym.spaces.Dict) or set(
                observation_space.spaces) != {OBS_KEY, MASK_KEY}:
            raise ValueError(
                f"MaskedPPOTorchRLModule needs a Dict observation space with keys {OBS_KEY!r} "
                f"and {MASK_KEY!r}, got {observation_space}"
            )
        self.observation_space_with_mask = observation_space
        # The default networks are built for the observation vector alone.
        super().__init__(observation_space=observation_space[OBS_KEY], **kwargs)

    def setup(self):
        super().setup()
        self.observation_space = self.observation_space_with_mask

    @staticmethod
    def _masked(out: dict, mask) -> dict:
        import torch

        out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] + torch.clamp(
            torch.log(mask.float()), min=FLOAT_MIN)
        return out

    def _forward(self, batch: dict, **kwargs) -> dict:
        mask, batch = _split(batch)
        return self._masked(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        mask, batch = _split(batch)
        return self._masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict, embeddings=None):
        if embeddings is None:
            _, batch = _split(batch)
        return super().compute_values(batch, embeddings)


class BotRLModule(RLModule):
    """A project bot (``model_config["bot"]``, e.g. ``"heuristic"``) as a fixed policy.

    ``model_config["rules"]`` is the table's rules dict (``agents.make_for_table``)."""

    def setup(self):
        from agents import make_for_table

        given = self.model_config or {}  # RLlib's model_config: a plain dict
        if "bot" not in given or "rules" not in given:
            raise ValueError("BotRLModule needs model_config={'bot': NAME, 'rules': {...}}")
        self.bot = make_for_table(given["bot"], given["rules"], seed=given.get("seed"))

    def _forward(self, batch: dict, **kwargs) -> dict:
        obs = batch[Columns.OBS]
        vectors, masks = _numpy(obs[OBS_KEY]), _numpy(obs[MASK_KEY])
        actions = [self.bot.act({"observation": v, "action_mask": m.astype(np.int8)})
                   for v, m in zip(vectors, masks)]
        return {Columns.ACTIONS: np.asarray(actions, dtype=np.int64)}

    def _forward_train(self, batch: dict, **kwargs):
        raise NotImplementedError(
            f"{type(self).__name__} plays a fixed bot: keep it out of policies_to_train")


def _numpy(x) -> np.ndarray:
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)
