"""The hidden-cards head (``policy.hidden_cards_head``): an auxiliary loss on the actor's
latent that predicts the opponents' hands, which changes how the actor learns and never
what it plays from."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents.ppo import NUM_ACTIONS
from pis_env.observation import Layout
from pis_env.privileged import privileged_size
from train.sb3 import config as C
from train.sb3.policy import PrivilegedCriticPolicy
from train.sb3.run import run

from .test_train import play_deals, tiny_config

PLAYERS = 2
ACTOR = Layout.of(PLAYERS, 1, 0).size + NUM_ACTIONS
SIZE = ACTOR + privileged_size(PLAYERS)
WEIGHT = 0.7


def make_policy(hidden_cards) -> PrivilegedCriticPolicy:
    torch.manual_seed(3)
    space = gym.spaces.Box(0.0, 1.0, (SIZE,), np.float32)
    return PrivilegedCriticPolicy(space, gym.spaces.Discrete(NUM_ACTIONS), lambda _: 1e-3,
                                  net_arch=[16, 16], actor_dim=ACTOR,
                                  hidden_cards=hidden_cards)


def batch(rows: int = 64):
    rng = np.random.default_rng(5)
    obs = torch.as_tensor(rng.integers(0, 2, (rows, SIZE)), dtype=torch.float32)
    masks = rng.random((rows, NUM_ACTIONS)) < 0.3
    masks[:, 0] = True
    actions = torch.zeros(rows, dtype=torch.int64)
    return obs, actions, masks


def test_the_head_adds_its_loss_to_the_actors_gradient_and_changes_no_output():
    hands = (ACTOR, ACTOR + 52 * (PLAYERS - 1))
    plain, head = make_policy(None), make_policy((*hands, WEIGHT))
    head.load_state_dict({**head.state_dict(), **plain.state_dict()})
    obs, actions, masks = batch()
    out_plain = plain.evaluate_actions(obs, actions, masks)
    out_head = head.evaluate_actions(obs, actions, masks)
    for a, b in zip(out_plain, out_head, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    # the reference: PPO's stand-in loss plus the weighted cross-entropy written out by hand
    values, log_prob, entropy = out_plain
    latent = plain.mlp_extractor.forward_actor(obs)
    logits = latent @ head.hidden_cards_head.linear.weight.detach().T \
        + head.hidden_cards_head.linear.bias.detach()
    target = obs[:, ACTOR:ACTOR + 52]
    bce = -(target * torch.log(torch.sigmoid(logits))
            + (1 - target) * torch.log(1 - torch.sigmoid(logits))).mean()
    (log_prob.sum() + values.sum() + entropy.sum() + WEIGHT * bce).backward()
    values, log_prob, entropy = out_head
    (log_prob.sum() + values.sum() + entropy.sum()).backward()
    assert head.hidden_cards_loss == pytest.approx(WEIGHT * bce.item(), rel=1e-5)
    for name, p in plain.mlp_extractor.policy_net.named_parameters():
        q = dict(head.mlp_extractor.policy_net.named_parameters())[name]
        torch.testing.assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-6)
    assert head.hidden_cards_head.linear.weight.grad.abs().sum() > 0


def test_the_head_learns_the_hands_from_what_the_actor_reads():
    """Targets that are a function of the actor's input (every "hand" card is the row's
    first input): the head's loss falls far below a constant prediction's."""
    head = make_policy((ACTOR, ACTOR + 52, 1.0))
    obs, actions, masks = batch(256)
    obs[:, ACTOR:ACTOR + 52] = obs[:, :1]
    rate = float(obs[:, 0].mean())
    constant = -(rate * np.log(rate) + (1 - rate) * np.log(1 - rate))
    for _ in range(300):
        head.optimizer.zero_grad()
        _, log_prob, _ = head.evaluate_actions(obs, actions, masks)
        (0.0 * log_prob.sum()).backward()
        head.optimizer.step()
    assert head.hidden_cards_loss < 0.5 * constant


@pytest.mark.parametrize("extra,why", [
    (["policy.privileged_critic=false"],
     "policy.privileged_critic is false (the hands are its targets)"),
    (["policy.normalize_obs=true"],
     "policy.normalize_obs is true (its targets are the raw 0/1 hands)"),
])
def test_a_head_without_its_targets_is_refused(extra, why):
    with pytest.raises(C.ConfigError) as err:
        C.build(None, ["policy.hidden_cards_head=0.5", *extra])
    assert str(err.value) == f"policy.hidden_cards_head=0.5: {why}"


def test_a_run_with_the_head_trains_saves_a_playable_policy_and_starts_from_one_without(
        tmp_path):
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    losses: list[float] = []

    class Watch(BaseCallback):
        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            losses.append(self.model.policy.hidden_cards_loss)

    plain = run(tiny_config(tmp_path, "policy.privileged_critic=true",
                            "total_timesteps=512", name="plain"), verbose=False)
    cfg = tiny_config(tmp_path, "policy.privileged_critic=true",
                      "policy.hidden_cards_head=0.5", "total_timesteps=1024",
                      f"init_policy={plain['policy']}", name="head")
    summary = run(cfg, callbacks=[Watch()], verbose=False)
    assert losses[0] is None and all(x is not None and x > 0 for x in losses[1:])
    assert play_deals(summary["policy"], PLAYERS) > 0
    model = MaskablePPO.load(summary["policy"], device="cpu")
    assert model.policy.hidden_cards == (ACTOR, ACTOR + 52, 0.5)
