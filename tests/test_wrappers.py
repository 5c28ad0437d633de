"""The gymnasium single-agent view used with SB3."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3.common.env_checker import check_env

import pis_env
from pis_env.engine import DRAW, PASS
from pis_env.wrappers import SingleAgentEnv

from .test_env import stacked


@pytest.mark.parametrize("options", [{}, {"num_players": 4}, {"num_deals": 2, "reward": "win"}])
def test_check_env_passes(options):
    env = gym.make("PisYedili-v0", learner_seat=None, **options).unwrapped
    check_env(env)


def _first_legal(observation: dict) -> int:
    return int(np.flatnonzero(observation["action_mask"])[0])


def test_learner_gets_the_reward_when_an_opponent_ends_the_deal():
    deck = stacked(
        [["2C", "3C", "4C", "5C", "6C", "9C", "7C"], ["2D", "3D", "4D", "5D", "6D", "9D", "10D"]],
        rest_first=["8H", "10H", "QH", "KH", "AH", "8S"],
    )
    order = iter(pis_env.parse_card(c) for c in ["2C", "3C", "4C", "5C", "6C", "9C", "7C"])
    env = SingleAgentEnv(opponents=lambda obs: next(order), learner_seat=1)
    obs, info = env.reset(options={"deck": deck, "dealer": 1})
    assert info["seat"] == 1
    rewards, done = [], False
    while not done:
        action = DRAW if env.action_masks()[DRAW] and not env.action_masks()[PASS] else PASS
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        done = terminated or truncated
    assert all(isinstance(r, float) for r in rewards)
    assert rewards[-1] == -3.0 and sum(rewards[:-1]) == 0.0
    assert info["penalty"] == 300 and not env.action_masks().any()


def test_rotating_seat_and_opponent_sampler():
    seen_seats = set()
    calls = []

    def sampler(rng):
        calls.append(rng)
        return [_first_legal] * 2

    env = SingleAgentEnv(opponent_sampler=sampler, learner_seat=None, num_players=3)
    env.reset(seed=0)
    for _ in range(30):
        obs, info = env.reset()
        seen_seats.add(info["seat"])
        assert env.observation_space.contains(obs)
    assert seen_seats == {0, 1, 2} and len(calls) == 31


def test_illegal_action_ends_the_episode_with_the_offender_charged():
    env = SingleAgentEnv()
    env.reset(seed=1)
    legal = set(np.flatnonzero(env.action_masks()).tolist())
    bad = next(a for a in range(58) if a not in legal)
    obs, reward, terminated, truncated, info = env.step(bad)
    assert terminated and info["illegal_action"] == bad and reward <= -1.0


def test_bad_arguments():
    with pytest.raises(ValueError, match="opponents"):
        SingleAgentEnv(opponents=[_first_legal], num_players=3)
    with pytest.raises(ValueError, match="learner_seat"):
        SingleAgentEnv(learner_seat=2)
    with pytest.raises(TypeError, match="act"):
        SingleAgentEnv(opponents=[3])


def test_maskable_ppo_smoke_run():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = SingleAgentEnv(learner_seat=None, num_players=3)
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, seed=0)
    model.learn(2048)
    obs, _ = env.reset(seed=3)
    for _ in range(200):
        action, _ = model.predict(obs, action_masks=env.action_masks())
        obs, reward, terminated, truncated, _ = env.step(int(action))
        assert "illegal_action" not in _
        if terminated or truncated:
            obs, _ = env.reset()
