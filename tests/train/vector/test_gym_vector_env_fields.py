"""``PisYediliVectorEnv``'s fields one by one: the arguments it hands its core, the
spaces, the shapes it accepts and refuses in words, the end-of-match infos with their
fill values and masks, and opponents seated clockwise from the learner's left. The
differential test against the single-agent view (``test_gym_vector_env.py``) plays the games;
this file reads what that test does not."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from tests.train.vector.reference_games import pick
from train.vector.gym_vector_env import MASK_KEY, MAX_ENVS, OBS_KEY, PisYediliVectorEnv
from train.vector.learner_batch import Learner
from train.vector.sb3_vec_env import BatchedVecEnv


def play_until_ends(env: PisYediliVectorEnv, steps: int = 400):
    """Step random legal moves until some match ends; that step's infos and the games
    that ended."""
    for t in range(steps):
        masks = env.action_masks()
        _, _, terms, truncs, infos = env.step(pick(masks, t))
        ended = terms | truncs
        if ended.any():
            return infos, ended
    raise AssertionError("no match ended")


def test_the_gymnasium_and_sb3_vector_envs_take_one_learner_description():
    """``Learner`` describes the learner's seat for every vector env over the batched
    engine; the keywords are read into the same object, and both at once are refused."""
    learner = Learner(seat=1, features=("obs", "mask"), skip_forced=True, win_bonus=0.5,
                      privileged=True, layout_version=1)
    gym_env = PisYediliVectorEnv(2, "random", learner=learner, seed=0)
    sb3_env = BatchedVecEnv(2, learner=learner, seed=0)
    assert gym_env.core.learner == learner == sb3_env.core.learner
    keywords = PisYediliVectorEnv(2, "random", learner_seat=1, features=("obs", "mask"),
                                  skip_forced=True, win_bonus=0.5, privileged=True,
                                  layout_version=1, seed=0)
    assert keywords.core.learner == learner
    with pytest.raises(ValueError, match="learner given as an object and skip_forced"):
        PisYediliVectorEnv(2, "random", learner=learner, skip_forced=False)


def test_the_arguments_reach_the_core():
    def factory(spec):
        raise AssertionError("not asked for")

    env = PisYediliVectorEnv(3, "greedy", learner_seat=None, features=("obs", "mask"),
                             privileged=True, skip_forced=True, win_bonus=2.5,
                             mix_per="game", seed=17, layout_version=1, bot_factory=factory,
                             num_players=3, num_deals=2)
    core = env.core
    assert (env.num_envs, core.num_envs, env.num_players, core.num_players) == (3, 3, 3, 3)
    assert core.features == ("obs", "mask") and core.privileged and core.skip_forced
    assert (core.win_bonus, core.mix_per, core.seed, core.layout_version) == (2.5, "game",
                                                                                17, 1)
    assert core._bot_factory is factory and core.rules.num_deals == 2
    assert env.render_mode is None
    assert env.single_observation_space == gym.spaces.Box(0.0, 1.0, (core.size,),
                                                          dtype=np.float32)
    assert PisYediliVectorEnv().num_envs == 1


def test_the_dict_observation_space_and_its_float_mask():
    env = PisYediliVectorEnv(2, "random", observation="dict", seed=0)
    assert env.single_observation_space == gym.spaces.Dict({
        OBS_KEY: gym.spaces.Box(0.0, 1.0, (env.core.size,), dtype=np.float32),
        MASK_KEY: gym.spaces.Box(0.0, 1.0, (58,), dtype=np.float32)})
    obs, _ = env.reset()
    assert obs[MASK_KEY].dtype == np.float32
    np.testing.assert_array_equal(obs[MASK_KEY], env.action_masks().astype(np.float32))
    assert env.observation_space.contains(obs)


def test_masks_before_reset_are_all_false_booleans():
    masks = PisYediliVectorEnv(4, "random").action_masks()
    assert masks.dtype == bool and masks.shape == (4, 58) and not masks.any()


@pytest.mark.parametrize("bad", [0, MAX_ENVS + 1, True, 2.0, "4"])
def test_num_envs_is_an_integer_in_range(bad):
    with pytest.raises(ValueError) as e:
        PisYediliVectorEnv(bad)
    assert str(e.value) == f"num_envs={bad!r}: an integer in 1..{MAX_ENVS}"


def test_actions_are_one_per_game():
    env = PisYediliVectorEnv(3, "random", seed=1)
    env.reset()
    column = pick(env.action_masks(), 0).reshape(3, 1)
    env.step(column)  # (B, 1) is accepted, as gymnasium's samplers give it
    for shape in ((3, 2), (2,), (1, 3)):
        with pytest.raises(ValueError) as e:
            env.step(np.zeros(shape, np.int64))
        assert str(e.value) == f"actions: shape (3,), got {shape}"


def test_a_step_where_no_match_ends_has_no_infos():
    env = PisYediliVectorEnv(4, "random", seed=3)
    env.reset()
    _, _, terms, truncs, infos = env.step(pick(env.action_masks(), 0))
    assert not (terms | truncs).any() and infos == {}


def test_the_infos_of_ended_matches_fill_the_others_with_neutral_values():
    env = PisYediliVectorEnv(64, "greedy", seed=5, num_deals=2)
    env.reset()
    infos, ended = play_until_ends(env)
    assert 0 < ended.sum() < 64
    for key, fill, dtype in (("seat", 0, np.int64), ("penalty", 0, np.int64),
                             ("winner", False, bool), ("match_score", 0, np.int64),
                             ("end_reason", None, object)):
        assert infos[key].dtype == dtype, key
        np.testing.assert_array_equal(infos["_" + key], ended)
        assert all(v == fill for v in infos[key][~ended]), key
    assert infos["end_reason"][ended].tolist() and None not in infos["end_reason"][ended]
    charged = infos["_charges"]
    np.testing.assert_array_equal(charged, ended)  # none truncated: every one scored
    assert infos["charges"].dtype == np.int64 and infos["charges"].shape == (64, 2)
    assert (infos["charges"][~charged] == 0).all()
    assert infos["opponents"].dtype == object
    assert all(list(o) == ["greedy"] for o in infos["opponents"][charged])
    assert all(list(o) == [None] for o in infos["opponents"][~charged])
    assert infos["win"].dtype == bool and not infos["win"][~charged].any()
    np.testing.assert_array_equal(infos["_win"], charged)
    for b in np.flatnonzero(charged):  # the learner's match: least charged wins
        charges = infos["charges"][b]
        assert infos["win"][b] == (charges[0] <= charges[1])
        assert infos["match_score"][b] == charges[0]


def test_a_forfeit_reports_its_action_and_zero_elsewhere():
    env = PisYediliVectorEnv(4, "greedy", seed=1)
    env.reset()
    masks = env.action_masks()
    actions = pick(masks, 0)
    actions[1] = int(np.flatnonzero(~masks[1])[-1])
    _, _, terms, _, infos = env.step(actions)
    assert infos["illegal_action"].dtype == np.int64
    assert infos["illegal_action"].tolist() == [0, actions[1], 0, 0]
    assert infos["_illegal_action"].tolist() == [False, True, False, False]


def test_a_list_of_opponents_sits_clockwise_from_the_learners_left():
    env = PisYediliVectorEnv(32, ["greedy", "heuristic"], learner_seat=1, seed=2,
                             num_players=3)
    env.reset()
    infos, ended = play_until_ends(env)
    listed = [list(o) for o in infos["opponents"][infos["_charges"]]]
    assert listed and all(o == ["greedy", "heuristic"] for o in listed), listed
    assert (infos["seat"][ended] == 1).all()


def test_the_defaults_and_the_largest_size(monkeypatch):
    import train.vector.gym_vector_env as module

    env = PisYediliVectorEnv(2)
    assert not env.core.skip_forced and env.core.layout_version == 0
    assert env.core.features == ("obs",) and env.core.mix_per == "seat"
    monkeypatch.setattr(module, "MAX_ENVS", 4)
    assert PisYediliVectorEnv(4).num_envs == 4
    with pytest.raises(ValueError, match=r"^num_envs=5: an integer in 1\.\.4$"):
        PisYediliVectorEnv(5)


def test_a_list_of_opponents_needs_a_fixed_seat_in_words():
    with pytest.raises(ValueError) as e:
        PisYediliVectorEnv(2, ["greedy", "random"], num_players=3, learner_seat=None)
    assert str(e.value) == ("opponents as a sequence need a fixed learner_seat; with "
                            "learner_seat=None pass one opponent or a {opponent: weight} mix")
    with pytest.raises(ValueError) as e:
        PisYediliVectorEnv(2, ["greedy"], num_players=3)
    assert str(e.value) == ("opponents: need 2 for 3 players (clockwise from the learner's "
                            "left), got 1")


def test_a_new_mix_seats_its_opponents_in_the_matches_that_follow():
    env = PisYediliVectorEnv(16, "random", seed=4)
    env.reset()
    env.set_opponent_mix({"greedy": 1.0})
    assert env.core.mix == {"greedy": 1.0}
    ended_once = np.zeros(16, bool)
    later = []  # the opponents of matches that began after the change
    for t in range(400):
        _, _, terms, truncs, infos = env.step(pick(env.action_masks(), t))
        done = terms | truncs
        later += [o[0] for o in infos["opponents"][done & ended_once]] if done.any() else []
        ended_once |= done
    assert len(later) > 10 and set(later) == {"greedy"}
