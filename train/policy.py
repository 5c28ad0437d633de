"""An asymmetric actor-critic for MaskablePPO: the critic also sees the hidden cards.

With ``policy.privileged_critic: true`` the training observation is the policy input (the
observation and the mask) followed by privileged features that only the env knows: every
opponent's hand and the next cards of the stock. The actor network reads the first
``actor_dim`` inputs only, so the trained policy plays from public information (the saved
actor is exactly the ``mlp_extractor.policy_net`` + ``action_net`` that
``agents.ppo.NumpyPolicy`` runs); the critic reads everything, which removes most of the
luck from its value estimates and so most of the noise from PPO's advantages (a baseline
may depend on the hidden state without biasing the policy gradient).
"""

from __future__ import annotations

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
