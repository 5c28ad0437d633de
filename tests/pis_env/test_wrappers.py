"""The gymnasium single-agent view used with SB3."""

from __future__ import annotations

import inspect

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


# ---------------------------------------------------------------------- details, one by one
def test_the_uniform_random_opponent_is_reproducible_from_its_seed():
    from pis_env.wrappers import UniformRandomPolicy

    observation = {"action_mask": np.ones(58, dtype=np.int8)}
    first, second, other = (UniformRandomPolicy(3), UniformRandomPolicy(3),
                            UniformRandomPolicy(4))
    moves = [first.act(observation) for _ in range(20)]
    assert moves == [second.act(observation) for _ in range(20)]
    assert moves != [other.act(observation) for _ in range(20)]


def test_a_bot_name_as_opponent_is_refused_saying_what_to_pass():
    with pytest.raises(TypeError) as error:
        SingleAgentEnv(opponents="heuristic")
    assert str(error.value) == (
        "opponents='heuristic': the single-agent view takes agent objects, e.g. "
        "opponents=agents.make('heuristic', num_players=n); bot names and {name: weight} "
        "mixes are for gymnasium.make_vec, whose batched engine plays them")


def test_the_learner_sits_at_seat_0_by_default():
    assert SingleAgentEnv(num_players=3).reset(seed=0)[1]["seat"] == 0


def test_the_league_sampler_draws_from_the_envs_own_generator():
    seen = []

    def sampler(rng):
        seen.append(rng)
        return _first_legal

    env = SingleAgentEnv(opponent_sampler=sampler)
    env.reset(seed=0)
    assert seen == [env.np_random]


class SeedRecorder:
    """An opponent that remembers the seeds its resets were given."""

    def __init__(self):
        self.seeds = []

    def reset(self, seed=None):
        self.seeds.append(seed)

    def act(self, observation):
        return _first_legal(observation)


def test_opponents_are_reseeded_from_the_whole_63_bit_range():
    recorder = SeedRecorder()
    env = SingleAgentEnv(opponents=recorder)
    for seed in range(30):
        env.reset(seed=seed)
    unseeded = SingleAgentEnv(opponents=SeedRecorder())
    unseeded.np_random = np.random.default_rng(0)
    for _ in range(30):
        unseeded.reset()
    for seeds in (recorder.seeds, unseeded.opponents[0].seeds):
        assert len(set(seeds)) == 30 and max(seeds) > 2**62 and max(seeds) < 2**63


def test_an_unseeded_first_reset_follows_the_envs_generator():
    """The deal and the opponents' seeds of an unseeded first reset come from
    ``np_random``: set it, and the episode is reproducible."""
    def first_episode():
        recorder = SeedRecorder()
        env = SingleAgentEnv(opponents=recorder)
        env.np_random = np.random.default_rng(11)
        obs, _ = env.reset()
        return obs, recorder.seeds, env.game.hands

    (obs_a, seeds_a, hands_a), (obs_b, seeds_b, hands_b) = first_episode(), first_episode()
    assert np.array_equal(obs_a, obs_b) and seeds_a == seeds_b and hands_a == hands_b


def test_the_seeds_of_an_unseeded_first_reset_span_63_bits(monkeypatch):
    seeds = []
    original = pis_env.aec.raw_env.reset

    def spy(self, seed=None, options=None):
        seeds.append(seed)
        return original(self, seed=seed, options=options)

    monkeypatch.setattr(pis_env.aec.raw_env, "reset", spy)
    opponent_seeds = []
    for k in range(30):
        recorder = SeedRecorder()
        env = SingleAgentEnv(opponents=recorder)
        env.np_random = np.random.default_rng(k)
        env.reset()
        env.reset()  # later unseeded resets let the table's own generator go on
        opponent_seeds.append(recorder.seeds[0])
    assert seeds[1::2] == [None] * 30
    assert len(set(seeds[::2])) == 30 and 2**62 < max(seeds[::2]) < 2**63
    # and the opponents' seed stream is seeded from 63 bits of it too: 30 envs, 30 streams
    assert len(set(opponent_seeds)) == 30


def test_action_masks_are_booleans():
    env = SingleAgentEnv()
    env.reset(seed=0)
    assert env.action_masks().dtype == np.bool_


def test_the_full_view_is_drawn_from_the_learners_seat_after_the_deal_too():
    for seed in range(40):
        env = SingleAgentEnv(opponents=_first_legal, learner_seat=1,
                             render_mode="rgb_array", render_view="full")
        env.reset(seed=seed)
        done = False
        while not done:
            *_, terminated, truncated, _ = env.step(int(env.action_masks().argmax()))
            done = terminated or truncated
        if env.aec.agent_selection != "player_1":
            break
    else:
        raise AssertionError("no deal ended with another seat to move")
    frame = env.render()
    assert np.array_equal(frame, env.aec.render_seat(1, reveal=True))
    assert not np.array_equal(frame, env.aec.render_seat(0, reveal=True))


def test_an_illegal_opponent_move_is_reported_word_for_word():
    cheater = Cheater()
    env = SingleAgentEnv(opponents=cheater, learner_seat=1, opponent_illegal="raise")
    for seed in range(10):
        try:
            env.reset(seed=seed)
            while env.action_masks().any():
                env.step(int(env.action_masks().argmax()))
        except pis_env.IllegalActionError as error:
            message = str(error)
            break
    legal = message.split("(legal: ")[1].rstrip(")")
    assert message == (f"opponent {cheater!r} at player_0 returned the illegal action 57 "
                       f"(legal: {legal})")
    assert legal.startswith("[") and "56" in legal and "57" not in legal


def _cheaters_first_warning():
    """The warning of a cheating opponent's first illegal move (reset and step are called
    from this file, so the warning should point here)."""
    env = SingleAgentEnv(opponents=Cheater(), learner_seat=1)
    with pytest.warns(RuntimeWarning) as caught:
        for seed in range(10):
            env.reset(seed=seed)
            while env.action_masks().any():
                env.step(int(env.action_masks().argmax()))
    return caught[0]


def test_the_illegal_move_warning_points_at_the_callers_line():
    warning = _cheaters_first_warning()
    lines, first = inspect.getsourcelines(_cheaters_first_warning)
    assert warning.filename == __file__ and first <= warning.lineno < first + len(lines)


def test_the_illegal_move_warning_says_what_follows():
    assert str(_cheaters_first_warning().message).endswith(
        ": it forfeits the deal; info['opponent_illegal_actions'] counts these (warned "
        "once per opponent)")


def test_an_opponents_zero_d_array_action_is_legal():
    """``model.predict`` returns a 0-d array: it is played like the integer it holds."""
    env = SingleAgentEnv(opponents=lambda obs: np.array(_first_legal(obs)), learner_seat=1)
    for seed in range(3):
        _, info = env.reset(seed=seed)
        while env.action_masks().any():
            *_, info = env.step(int(env.action_masks().argmax()))
        assert info["opponent_illegal_actions"] == 0


@pytest.mark.parametrize("action,legal", [
    (0, True), (57, True), (np.int64(3), True), (np.array(3), True),
    (58, False), (-1, False), (True, False), (np.bool_(True), False), (3.0, False),
    ("3", False), (None, False), (np.array([3]), False),
])
def test_only_an_integer_id_with_a_legal_mask_entry_is_legal(action, legal):
    from pis_env.wrappers import _is_legal

    mask = np.zeros(58, dtype=np.int8)
    mask[[0, 1, 3, 57]] = 1
    assert _is_legal(mask, action) is legal


def test_the_v1_env_takes_its_render_mode_and_view():
    from pis_env import pis_yedili_v1

    env = pis_yedili_v1.env(render_mode="ansi", render_view="full")
    assert env.unwrapped.render_mode == "ansi" and env.unwrapped.render_view == "full"
    parallel = pis_yedili_v1.parallel_env(render_mode="ansi", render_view="full",
                                          num_players=3)
    table = parallel.aec_env.unwrapped
    assert (table.render_mode, table.render_view, table.rules.num_players) == ("ansi",
                                                                               "full", 3)
    assert pis_yedili_v1.parallel_env().aec_env.unwrapped.render_view == "current"


def test_bad_arguments_are_refused_word_for_word():
    cases = [
        ({"opponent_illegal": "ignore"},
         "opponent_illegal='ignore': allowed values are 'warn', 'raise'"),
        ({"learner_seat": 3, "num_players": 3},
         "learner_seat=3: must be a seat index in 0..2, or None"),
        ({"opponents": [_first_legal], "num_players": 3},
         "need 2 opponents for 3 players, got 1"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as error:
            SingleAgentEnv(**kwargs)
        assert str(error.value) == message


def test_before_the_first_reset_no_action_is_legal():
    env = SingleAgentEnv()
    assert env.action_masks().dtype == np.bool_ and not env.action_masks().any()
    assert env.legal_mask.dtype == np.int8 and env.legal_mask.shape == (58,)
