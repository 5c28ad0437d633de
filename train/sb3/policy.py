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

**Hidden-cards head** (``policy.hidden_cards_head``, :class:`HiddenCardsHead`): a linear
head on the actor's last hidden layer predicts every opponent's hand, the first part of
the privileged features, with a binary cross-entropy added to PPO's loss. It is an
auxiliary task: it asks the actor's features to carry a belief over the hidden cards,
which the actor cannot read directly. The head is not part of the played policy: the
saved actor is still ``policy_net`` + ``action_net``.
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


class _AddLossGradient(torch.autograd.Function):
    """The identity on ``latent`` whose backward also gives ``loss`` a gradient of 1: so
    ``loss`` joins whatever loss is backpropagated through ``latent``. SB3's ``train()``
    has no hook for an extra loss; the actor's latent reaches PPO's loss in every update."""

    @staticmethod
    def forward(ctx, latent: torch.Tensor, loss: torch.Tensor) -> torch.Tensor:
        return latent.view_as(latent)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        return grad, torch.ones((), dtype=grad.dtype, device=grad.device)


class HiddenCardsHead(nn.Module):
    """The auxiliary head: logits of the opponents' hands from the actor's latent, and
    ``weight`` times their binary cross-entropy against ``features[..., targets]``."""

    def __init__(self, latent_dim: int, targets: tuple[int, int], weight: float):
        super().__init__()
        self.start, self.stop = targets
        self.weight = weight
        self.linear = nn.Linear(latent_dim, self.stop - self.start)

    def loss(self, latent: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        target = features[..., self.start:self.stop]
        return self.weight * nn.functional.binary_cross_entropy_with_logits(
            self.linear(latent), target)


class PrivilegedCriticPolicy(MaskableActorCriticPolicy):
    """MaskableActorCriticPolicy whose actor sees only the first ``actor_dim`` inputs,
    optionally with the hidden-cards head (``hidden_cards``: the column range of the
    opponents' hands in the input, and the loss weight)."""

    def __init__(self, *args, actor_dim: int,
                 hidden_cards: tuple[int, int, float] | None = None, **kwargs):
        self.actor_dim = actor_dim
        self.hidden_cards = hidden_cards
        #: The head's last loss (weighted), for the training log; None before an update.
        self.hidden_cards_loss: float | None = None
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = SplitMlpExtractor(self.features_dim, self.actor_dim,
                                               self.net_arch, self.activation_fn)
        if self.hidden_cards is not None:  # built here, so the optimizer gets its weights
            start, stop, weight = self.hidden_cards
            self.hidden_cards_head = HiddenCardsHead(self.mlp_extractor.latent_dim_pi,
                                                     (start, stop), weight)

    def evaluate_actions(self, obs, actions, action_masks=None):
        """SB3's evaluation of a minibatch in ``train()``, plus the head's loss joined
        to the actor's latent (:class:`_AddLossGradient`)."""
        if self.hidden_cards is None:
            return super().evaluate_actions(obs, actions, action_masks)
        features = self.extract_features(obs)
        latent_pi, latent_vf = self.mlp_extractor(features)
        loss = self.hidden_cards_head.loss(latent_pi, features)
        self.hidden_cards_loss = float(loss.detach())
        latent_pi = _AddLossGradient.apply(latent_pi, loss)
        distribution = self._get_action_dist_from_latent(latent_pi)
        if action_masks is not None:
            distribution.apply_masking(action_masks)
        return (self.value_net(latent_vf), distribution.log_prob(actions),
                distribution.entropy())

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data["actor_dim"] = self.actor_dim
        data["hidden_cards"] = self.hidden_cards
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
