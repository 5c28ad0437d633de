"""Policy networks for MaskablePPO: an asymmetric actor-critic, and actor ablations.

**Privileged critic.**
With ``policy.privileged_critic: true`` the training observation is the policy input (the
observation and the mask) followed by privileged features that only the env knows: every
opponent's hand and the next cards of the stock. The actor network reads the first
``actor_dim`` inputs only, so the trained policy plays from public information (the saved
actor is exactly the ``mlp_extractor.policy_net`` + ``action_net`` that
``agents.ppo.NumpyPolicy`` runs); the critic reads everything, which removes most of the
luck from its value estimates and so most of the noise from PPO's advantages (a baseline
may depend on the hidden state without biasing the policy gradient).

**Hidden segments** (``policy.hide_from_actor``, :func:`hide_from_actor`): the actor's
first layer has zero weights on the columns of the named observation segments, and a
gradient hook keeps them zero, so the actor (and every saved policy or snapshot of it)
plays without that information while the environment and the critic are unchanged. That
is how the observation features are ablated.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn


class SplitMlpExtractor(nn.Module):
    """``policy_net`` on the first ``actor_dim`` features, ``value_net`` on all of them
    (the attribute names of SB3's MlpExtractor, so state-dict keys are the same)."""

    def __init__(self, feature_dim: int, actor_dim: int, net_arch, activation_fn):
        super().__init__()
        if isinstance(net_arch, dict):
            pi_arch, vf_arch = net_arch.get("pi", []), net_arch.get("vf", [])
        else:
            pi_arch = vf_arch = list(net_arch)
        self.actor_dim = actor_dim

        def mlp(inp, arch):
            layers, last = [], inp
            for width in arch:
                layers += [nn.Linear(last, width), activation_fn()]
                last = width
            return nn.Sequential(*layers), last

        self.policy_net, self.latent_dim_pi = mlp(actor_dim, pi_arch)
        self.value_net, self.latent_dim_vf = mlp(feature_dim, vf_arch)

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features[..., :self.actor_dim])

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features)


class PrivilegedCriticPolicy(MaskableActorCriticPolicy):
    """MaskableActorCriticPolicy whose actor sees only the first ``actor_dim`` inputs."""

    def __init__(self, *args, actor_dim: int, **kwargs):
        self.actor_dim = actor_dim
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = SplitMlpExtractor(self.features_dim, self.actor_dim,
                                               self.net_arch, self.activation_fn)

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data["actor_dim"] = self.actor_dim
        return data


def hidden_columns(num_players: int, num_deals: int, segments: Sequence[str],
                   layout_version: int = 0) -> np.ndarray:
    """The input columns (of the observation part, which comes first) of ``segments`` in
    observation layout ``layout_version``."""
    from pis_env.observation import Layout

    layout = Layout.of(num_players, num_deals, layout_version)
    cols = []
    for name in segments:
        if name not in layout.offsets:
            raise ValueError(f"no observation segment {name!r} at this table; the segments "
                             f"are {', '.join(layout.offsets)}")
        sl = layout.offsets[name]
        cols.extend(range(sl.start, sl.stop))
    return np.array(sorted(set(cols)), dtype=np.int64)


def hide_from_actor(policy, columns: np.ndarray) -> None:
    """Zero the actor's first-layer weights on ``columns`` and keep them zero (a gradient
    hook; Adam's update of a parameter whose gradient is always zero is zero). Call it
    after building or loading a model; with no columns it does nothing."""
    if len(columns) == 0:
        return
    layer = policy.mlp_extractor.policy_net[0]
    keep = torch.ones(layer.in_features, dtype=layer.weight.dtype)
    keep[torch.as_tensor(columns)] = 0.0
    with torch.no_grad():
        layer.weight.mul_(keep)
    layer.weight.register_hook(lambda grad: grad * keep)
