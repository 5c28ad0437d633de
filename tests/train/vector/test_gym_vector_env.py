"""``train.vector.gym_vector_env.PisYediliVectorEnv``, the gymnasium ``VectorEnv`` over the batched
engine: the same games as the single-agent view ``pis_env.wrappers.SingleAgentEnv`` (an
independent path: the Python engine) on stacked deals, step by step, with gymnasium's
next-step auto-reset; ``make_vec``'s choice of vector env; gymnasium's vector wrappers; a
CleanRL-style masked PPO loop."""

from __future__ import annotations

import sys

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import pis_env  # noqa: F401  (registers PisYedili-v0)
from agents.greedy import GreedyAgent
from pis_env import pis_yedili_v1
from pis_env.cards import points_of
from pis_env.wrappers import SingleAgentEnv
from tests.train.vector.reference_games import (
    lowest_legal,
    pick,
    reference_games,
    stacked_deals,
    step_reference,
)
from train.vector.gym_vector_env import MASK_KEY, OBS_KEY, PisYediliVectorEnv


# ---------------------------------------------------------------------- reference env
def run_reference_differential(num_envs: int, seed: int, *, observation="flat", mix=None,
                               skip_forced=False, version=0, **options) -> tuple[int, int]:
    """The first match of every game against ``SingleAgentEnv`` on the same stacked deals,
    with the same deterministic opponents and learner actions: observations, masks,
    rewards, terminations, truncations and end-of-match infos agree at every step; the
    step after a match's end is gymnasium's next-step reset (reward 0, the action ignored,
    the new match's first decision). Returns the matches compared and how many of them
    were truncated. ``version``: the env version (its layout) on both sides."""
    deals = options.get("num_deals", 1)
    decks, dealers = stacked_deals(num_envs, seed, options.get("num_players", 2), deals)
    seat = 1
    env = PisYediliVectorEnv(num_envs, mix if mix else "greedy", learner_seat=seat,
                             observation=observation, skip_forced=skip_forced, seed=seed,
                             layout_version=version, **options)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, _ = env.reset(options={"decks": decks, "dealers": dealers})
    kinds = env.core.env.opponent_kinds.copy()

    def flat(o):
        return o[OBS_KEY] if observation == "dict" else o

    def check_obs(o, b, ref_obs, ref_mask):
        np.testing.assert_array_equal(flat(o)[b], ref_obs)
        if observation == "dict":
            np.testing.assert_array_equal(o[MASK_KEY][b], np.asarray(ref_mask, np.float32))

    refs, first_obs, active = reference_games(kinds, decks, dealers, seat=seat,
                                              skip_forced=skip_forced, version=version,
                                              **options)
    for b in np.flatnonzero(active):
        check_obs(obs, b, first_obs[b], refs[b][0].action_masks())
    episodes, truncated, t = 0, 0, 0
    waiting_reset = np.zeros(num_envs, dtype=bool)
    while active.any() or waiting_reset.any():
        masks = env.action_masks()
        actions = pick(masks, t)
        actions[waiting_reset] = 57  # ignored at the reset step (it would be illegal)
        t += 1
        obs, rewards, terms, truncs, infos = env.step(actions)
        for b in np.flatnonzero(waiting_reset):
            assert rewards[b] == 0 and not terms[b] and not truncs[b], f"game {b}: reset step"
            assert env.action_masks()[b].any() and not infos.get("_seat", [False] * 99)[b]
        waiting_reset[:] = False
        for b in np.flatnonzero(active):
            ref, carry = refs[b]
            np.testing.assert_array_equal(masks[b], ref.action_masks())
            o, r, term, trunc, info = step_reference(ref, actions[b], skip_forced)
            refs[b][1] = 0.0
            assert rewards[b] == np.float32(carry + r), f"game {b} step {t}: reward"
            assert terms[b] == term and truncs[b] == trunc, f"game {b} step {t}: end"
            # the final position too: next-step auto-reset shows it, mask all False
            check_obs(obs, b, o, ref.action_masks())
            np.testing.assert_array_equal(env.action_masks()[b], ref.action_masks())
            if term or trunc:
                episodes += 1
                truncated += trunc
                active[b] = False
                waiting_reset[b] = True
                assert infos["_seat"][b] and infos["seat"][b] == seat
                assert infos["end_reason"][b] != "illegal"
                if not trunc:
                    assert infos["penalty"][b] == info["penalty"]
                    assert infos["winner"][b] == info["winner"]
                    assert infos["_charges"][b] and infos["charges"][b][0] == info["penalty"] \
                        or deals > 1
                    assert list(infos["opponents"][b]) == [
                        "greedy" if isinstance(x, GreedyAgent) else "lowest_legal"
                        for x in ref.opponents]
                else:
                    assert not infos.get("_charges", np.zeros(num_envs, bool))[b]
                if deals > 1:
                    assert infos["match_score"][b] == info["match_score"]
                    assert infos["charges"][b][0] == info["match_score"] or trunc
            else:
                assert not infos or not infos["_seat"][b]
    return episodes, truncated


@pytest.mark.parametrize("options", [
    {"num_players": 2},
    {"num_players": 3, "num_deals": 2, "observation": "dict", "skip_forced": True},
    {"num_players": 4, "max_turns": 50, "reward": "win",
     "mix": {"greedy": 1, lowest_legal: 1}},
])
def test_plays_the_same_games_as_the_single_agent_view(options):
    episodes, truncated = run_reference_differential(32, seed=len(options), **options)
    assert episodes > 20
    assert (truncated > 3) == ("max_turns" in options) and truncated < episodes


@pytest.mark.parametrize("options", [
    {"num_players": 2},
    {"num_players": 3, "num_deals": 2, "observation": "dict", "skip_forced": True},
])
def test_v1_plays_the_same_games_as_the_v1_single_agent_view(options):
    """PisYedili-Events-v0: the engine writes the v1 layout, the vectors the v1 view gives."""
    episodes, truncated = run_reference_differential(32, seed=len(options), version=1,
                                                     **options)
    assert episodes > 20 and truncated == 0


@pytest.mark.parametrize("num_players", [2, 3])
def test_the_numba_heuristic_plays_at_v1_tables_as_at_v0(num_players):
    """The batched heuristic reads v0 rows: at a v1 learner's table it is shown them and
    plays the same games (the v1 observations begin with the v0 ones at every step)."""
    envs = [PisYediliVectorEnv(16, "heuristic", learner_seat=None, seed=5,
                               num_players=num_players, layout_version=v) for v in (0, 1)]
    (obs0, _), (obs1, _) = (e.reset(seed=5) for e in envs)
    width = obs0.shape[1]
    assert obs1.shape[1] > width
    ended = 0
    for t in range(300):
        np.testing.assert_array_equal(obs1[:, :width], obs0, err_msg=f"step {t}")
        masks = envs[0].action_masks()
        np.testing.assert_array_equal(envs[1].action_masks(), masks)
        actions = pick(masks, t)
        (obs0, r0, d0, _, _), (obs1, r1, d1, _, _) = (e.step(actions) for e in envs)
        np.testing.assert_array_equal(r1, r0)
        np.testing.assert_array_equal(d1, d0)
        ended += int(d0.sum())
    assert ended > 16


# ---------------------------------------------------------------------- API
def test_make_vec_returns_it_with_gymnasium_spaces():
    env = gym.make_vec("PisYedili-v0", num_envs=16, vectorization_mode="vector_entry_point",
                       opponents="heuristic", num_players=3, seed=0)
    assert isinstance(env, PisYediliVectorEnv) and env.num_envs == 16
    assert gym.make_vec("PisYedili-v0", num_envs=2, opponents="greedy").__class__ \
        is PisYediliVectorEnv  # the id's default mode
    ref = SingleAgentEnv(num_players=3)
    assert env.single_observation_space == ref.observation_space
    assert env.single_action_space == ref.action_space
    obs, infos = env.reset(seed=1)
    assert obs.shape == (16, ref.observation_space.shape[0]) and obs.dtype == np.float32
    assert env.observation_space.contains(obs) and infos == {}
    masks = env.action_masks()
    assert masks.shape == (16, 58) and masks.dtype == bool and masks.any(axis=1).all()
    actions = pick(masks, 0)
    assert env.action_space.contains(actions)
    obs, rewards, terms, truncs, infos = env.step(actions)
    assert rewards.shape == terms.shape == truncs.shape == (16,)
    assert terms.dtype == truncs.dtype == bool
    with pytest.raises(ValueError, match="num_envs"):
        PisYediliVectorEnv(0)
    with pytest.raises(ValueError, match="observation"):
        PisYediliVectorEnv(2, observation="image")
    with pytest.raises(ValueError, match="need 2"):
        PisYediliVectorEnv(2, ["greedy"], num_players=3)
    with pytest.raises(ValueError, match="fixed learner_seat"):
        PisYediliVectorEnv(2, ["greedy", "random"], num_players=3, learner_seat=None)
    with pytest.raises(ValueError, match="decks"):
        env.reset(options={"deck": []})


def test_make_vec_of_v1_returns_it_with_the_v1_observation_space():
    env = gym.make_vec("PisYedili-Events-v0", num_envs=8, vectorization_mode="vector_entry_point",
                       opponents="greedy", num_players=3, seed=0)
    assert isinstance(env, PisYediliVectorEnv) and env.core.layout_version == 1
    ref = pis_yedili_v1.SingleAgentEnv(num_players=3)
    assert env.single_observation_space == ref.observation_space
    assert env.single_observation_space != SingleAgentEnv(num_players=3).observation_space
    obs, _ = env.reset(seed=0)
    assert obs.shape == (8, ref.observation_space.shape[0])
    assert gym.make_vec("PisYedili-Events-v0", num_envs=2, opponents="greedy").__class__ \
        is PisYediliVectorEnv  # the id's default mode
    assert gym.make_vec("PisYedili-v0", num_envs=2).core.layout_version == 0


def test_python_bots_keep_working_through_make_vec():
    """A registered vector entry point is make_vec's default: Python agents as opponents
    still get the single-agent view, row by row (gymnasium's SyncVectorEnv)."""
    greedy = GreedyAgent(2, 1)
    env = gym.make_vec("PisYedili-v0", num_envs=4, opponents=greedy)
    assert isinstance(env, SyncVectorEnv)
    assert all(e.unwrapped.opponents == [greedy] for e in env.envs)
    obs, _ = env.reset(seed=0)
    for t in range(30):
        masks = np.stack(env.call("action_masks"))
        obs, rewards, terms, truncs, infos = env.step(pick(masks, t))
    one_arg = gym.make_vec("PisYedili-v0", num_envs=2,
                           opponents=lambda o: int(np.flatnonzero(o["action_mask"])[0]))
    assert isinstance(one_arg, SyncVectorEnv)
    assert isinstance(gym.make_vec("PisYedili-v0", num_envs=2, opponents=lowest_legal),
                      PisYediliVectorEnv)  # policy(obs, masks): batched


def test_without_the_batched_engine_the_error_says_what_to_do(monkeypatch):
    monkeypatch.setitem(sys.modules, "train.vector.gym_vector_env", None)  # no numba
    with pytest.warns(RuntimeWarning, match=r"SyncVectorEnv.*pis-yedili\[fast\]"):
        env = gym.make_vec("PisYedili-v0", num_envs=2)  # the single-agent view can play this
    assert isinstance(env, SyncVectorEnv)
    with pytest.raises(ImportError, match=r"pis-yedili\[fast\].*vectorization_mode='sync'"):
        gym.make_vec("PisYedili-v0", num_envs=2, opponents="greedy")


def test_reset_seed_makes_runs_reproducible():
    def run(seed):
        env = PisYediliVectorEnv(24, {"random": 1, "greedy": 1}, learner_seat=None,
                                 num_players=3)
        out = list(env.reset(seed=seed)[:1])
        for t in range(40):
            obs, rewards, terms, truncs, _ = env.step(pick(env.action_masks(), t))
            out += [obs, rewards, terms, truncs]
        return out

    a, b, c = run(1), run(1), run(2)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_an_illegal_action_forfeits_and_is_reported():
    env = PisYediliVectorEnv(4, "greedy", seed=1)
    env.reset()
    masks = env.action_masks()
    actions = pick(masks, 0)
    actions[2] = int(np.flatnonzero(~masks[2])[0])
    hand = env.core.env.game.hands()[2, 0]
    _, rewards, terms, _, infos = env.step(actions)
    assert terms[2] and infos["end_reason"][2] == "illegal"
    assert infos["_illegal_action"].tolist() == [False, False, True, False]
    assert infos["illegal_action"][2] == actions[2]
    assert infos["penalty"][2] == 3 * points_of(int(hand)) + 100 and rewards[2] < -1.0
    # one forfeit per step among 64 games: the others that end then report no illegal action
    env = PisYediliVectorEnv(64, "greedy", seed=2)
    env.reset()
    others = 0
    for t in range(60):
        masks = env.action_masks()
        actions = pick(masks, t)
        cheat = t % 64
        if masks[cheat].any():
            actions[cheat] = int(np.flatnonzero(~masks[cheat])[0])
        _, _, terms, truncs, infos = env.step(actions)
        ended = np.flatnonzero(terms | truncs)
        for b in ended:
            forfeit = b == cheat and masks[cheat].any()
            assert infos.get("_illegal_action", np.zeros(64, bool))[b] == forfeit
            assert (infos["end_reason"][b] == "illegal") == forfeit
            others += not forfeit
    assert others > 20


# ---------------------------------------------------------------------- wrappers
def test_gymnasium_vector_wrappers_run_on_it():
    env = gym.wrappers.vector.RecordEpisodeStatistics(
        PisYediliVectorEnv(32, "greedy", learner_seat=None, seed=3))
    env = gym.wrappers.vector.NormalizeReward(env)
    env.reset(seed=3)
    base = env.unwrapped
    returns = np.zeros(32)
    recorded, ours = [], []
    for t in range(80):
        obs, rewards, terms, truncs, infos = env.step(pick(base.action_masks(), t))
        returns += base.core.env.rewards  # the raw rewards (NormalizeReward scales its own)
        done = terms | truncs
        if "episode" in infos:
            ended = infos["_episode"]
            np.testing.assert_array_equal(ended, done)
            recorded += infos["episode"]["r"][ended].tolist()
            ours += returns[ended].tolist()
        returns[done] = 0.0
        assert np.isfinite(rewards).all()
    assert len(recorded) > 30
    np.testing.assert_allclose(recorded, ours, rtol=1e-5)


# ---------------------------------------------------------------------- CleanRL-style PPO
def test_a_cleanrl_style_masked_ppo_loop_runs_and_plays_legally():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    num_envs, num_steps = 64, 16
    envs = gym.wrappers.vector.RecordEpisodeStatistics(
        gym.make_vec("PisYedili-v0", num_envs=num_envs, vectorization_mode="vector_entry_point",
                     opponents={"random": 1, "greedy": 1}, learner_seat=None, seed=0))
    size = envs.single_observation_space.shape[0]
    actor = torch.nn.Sequential(torch.nn.Linear(size, 32), torch.nn.Tanh(),
                                torch.nn.Linear(32, 58))
    critic = torch.nn.Sequential(torch.nn.Linear(size, 32), torch.nn.Tanh(),
                                 torch.nn.Linear(32, 1))
    opt = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=3e-3)

    def dist(obs, mask):
        logits = torch.where(mask, actor(obs), torch.tensor(-1e8))
        return torch.distributions.Categorical(logits=logits)

    next_obs = torch.tensor(envs.reset(seed=0)[0])
    next_mask = torch.tensor(envs.unwrapped.action_masks())
    forfeits, episodes, played = 0, 0, 0
    for _update in range(3):
        obs_b, mask_b, act_b, logp_b, rew_b, val_b, live_b = [], [], [], [], [], [], []
        for _ in range(num_steps):
            live = next_mask.any(dim=1)  # False: a next-step reset, its action is ignored
            with torch.no_grad():
                d = dist(next_obs, next_mask | ~live[:, None])
                action = d.sample()
                value = critic(next_obs).squeeze(1)
            played += int(live.sum())
            assert next_mask[live].gather(1, action[live, None]).all()
            obs_b.append(next_obs), mask_b.append(next_mask), live_b.append(live)
            act_b.append(action), logp_b.append(d.log_prob(action)), val_b.append(value)
            obs, reward, term, trunc, infos = envs.step(action.numpy())
            rew_b.append(torch.tensor(reward, dtype=torch.float32))
            if "end_reason" in infos:
                forfeits += int((infos["end_reason"][infos["_end_reason"]] == "illegal").sum())
            if "episode" in infos:
                episodes += int(infos["_episode"].sum())
            next_obs = torch.tensor(obs)
            next_mask = torch.tensor(envs.unwrapped.action_masks())
        # returns to go within the fragment (a match's last reward closes it)
        returns = torch.zeros(num_envs)
        ret_b = []
        for r, live in zip(reversed(rew_b), reversed(live_b)):
            returns = torch.where(live, r + 0.99 * returns, torch.zeros(num_envs))
            ret_b.append(returns)
        ret_b.reverse()
        live = torch.stack(live_b).flatten()
        obs_t = torch.stack(obs_b).flatten(0, 1)[live]
        mask_t = torch.stack(mask_b).flatten(0, 1)[live]
        act_t = torch.stack(act_b).flatten()[live]
        old_logp = torch.stack(logp_b).flatten()[live]
        ret_t = torch.stack(ret_b).flatten()[live]
        adv = ret_t - torch.stack(val_b).flatten()[live]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        for _epoch in range(2):
            d = dist(obs_t, mask_t)
            ratio = (d.log_prob(act_t) - old_logp).exp()
            pg = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
            v = ((critic(obs_t).squeeze(1) - ret_t) ** 2).mean()
            loss = pg + 0.5 * v - 0.01 * d.entropy().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            assert torch.isfinite(loss)
    assert played > 2500 and episodes > 50 and forfeits == 0
