"""The gymnasium single-agent view used with SB3."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3.common.env_checker import check_env

import pis_env
from pis_env.engine import DRAW, PASS
from pis_env.wrappers import SingleAgentEnv
from tests.conftest import stacked_deck


@pytest.mark.parametrize("options", [{}, {"num_players": 4}, {"num_deals": 2, "reward": "win"}])
def test_check_env_passes(options):
    env = gym.make("PisYedili-v0", learner_seat=None, **options).unwrapped
    check_env(env)


def _first_legal(observation: dict) -> int:
    return int(np.flatnonzero(observation["action_mask"])[0])


def test_learner_gets_the_reward_when_an_opponent_ends_the_deal():
    deck, _ = stacked_deck(
        [["2C", "3C", "4C", "5C", "6C", "9C", "7C"], ["2D", "3D", "4D", "5D", "6D", "9D", "10D"]],
        stock=["8H", "10H", "QH", "KH", "AH", "8S"], dealer=1,
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
    # Names are the batched engine's (make_vec); the single-agent view says what to pass.
    for named in ("heuristic", {"heuristic": 1.0}):
        with pytest.raises(TypeError, match=r"agents.make\('heuristic'.*gymnasium.make_vec"):
            gym.make("PisYedili-v0", opponents=named)


def test_maskable_ppo_smoke_run():
    """MaskablePPO learns on the single-agent view (two rollouts, two updates: enough to
    run its masked rollout and update paths) and then predicts only legal actions."""
    import sb3_contrib
    env = SingleAgentEnv(learner_seat=None, num_players=3)
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=128,
                                    n_epochs=2, seed=0)
    model.learn(512)
    assert model.num_timesteps == 512 and model._n_updates == 4
    obs, _ = env.reset(seed=3)
    for _ in range(200):
        action, _ = model.predict(obs, action_masks=env.action_masks())
        obs, reward, terminated, truncated, _ = env.step(int(action))
        assert "illegal_action" not in _
        if terminated or truncated:
            obs, _ = env.reset()


# ---------------------------------------------------------------------- seeding
@pytest.mark.parametrize("options", [{}, {"num_players": 4}, {"num_deals": 2}])
def test_gymnasium_check_env_passes(options):
    """gymnasium's checker steps two resets from one seed and compares them: the
    opponents' play must come from the reset seed too."""
    from gymnasium.utils.env_checker import check_env as gym_check_env

    gym_check_env(gym.make("PisYedili-v0", learner_seat=None, **options).unwrapped)


def _run(env, episodes: int = 3, seed: int = 7) -> list:
    """Observations and rewards of a few episodes, the first reset seeded, then unseeded."""
    out = []
    for e in range(episodes):
        obs, info = env.reset(seed=seed if e == 0 else None)
        out.append(obs.copy())
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(int(env.action_masks().argmax()))
            out += [obs.copy(), reward]
            done = terminated or truncated
    return out


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_reset_seed_reproduces_the_opponents_play():
    import agents

    # the default random opponents, at a table where they move before the learner
    assert _same(_run(SingleAgentEnv(num_players=4, learner_seat=2)),
                 _run(SingleAgentEnv(num_players=4, learner_seat=2)))
    # agents built with different seeds are reseeded from the reset seed
    a = SingleAgentEnv(opponents=agents.make("random", num_players=3, seed=1), num_players=3)
    b = SingleAgentEnv(opponents=agents.make("random", num_players=3, seed=2), num_players=3)
    first = _run(a)
    assert _same(first, _run(b))
    assert _same(first, _run(a))  # the same env again, from the same seed
    assert not _same(first, _run(b, seed=8))


class OldStyleAgent:
    """An opponent with a plain ``reset()`` (no seed): it keeps working in the view."""

    def __init__(self):
        self.resets = 0

    def reset(self):
        self.resets += 1

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[-1])


def test_opponents_without_a_seeded_reset_still_work():
    old = OldStyleAgent()
    env = SingleAgentEnv(opponents=[old, _first_legal], num_players=3)
    _run(env, episodes=2)
    assert old.resets == 2


def test_learner_seat_must_be_a_seat_index():
    for bad in (1.5, "1", True, 3, -1):
        with pytest.raises(ValueError, match="learner_seat"):
            SingleAgentEnv(learner_seat=bad, num_players=3)
    assert SingleAgentEnv(learner_seat=np.int64(2), num_players=3).learner_seat == 2


# ---------------------------------------------------------------------- illegal opponents
class Cheater:
    """Passes before drawing whenever it can: an illegal move at its first decision."""

    def act(self, observation):
        return PASS if not observation["action_mask"][PASS] else DRAW


def test_an_illegal_opponent_move_warns_once_and_is_counted():
    cheater = Cheater()
    env = SingleAgentEnv(opponents=cheater, learner_seat=1)
    with pytest.warns(RuntimeWarning, match="illegal action 57") as caught:
        for seed in range(3):
            obs, info = env.reset(seed=seed)  # player_0 (the cheater) may move first
            done = info["opponent_illegal_actions"] > 0
            while not done:
                obs, reward, terminated, truncated, info = env.step(
                    int(env.action_masks().argmax()))
                done = terminated or truncated
            assert info["opponent_illegal_actions"] == 1  # the cheater forfeited the deal
            assert info["penalty"] == 0 and not env.action_masks().any()
    assert len([w for w in caught if issubclass(w.category, RuntimeWarning)]) == 1
    clean = SingleAgentEnv(learner_seat=1)
    assert clean.reset(seed=0)[1]["opponent_illegal_actions"] == 0


def test_an_illegal_opponent_move_can_raise():
    env = SingleAgentEnv(opponents=Cheater(), learner_seat=1, opponent_illegal="raise")
    with pytest.raises(pis_env.IllegalActionError, match="illegal action 57"):
        for seed in range(3):
            env.reset(seed=seed)
            while env.action_masks().any():
                env.step(int(env.action_masks().argmax()))
    with pytest.raises(ValueError, match="opponent_illegal"):
        SingleAgentEnv(opponent_illegal="ignore")
