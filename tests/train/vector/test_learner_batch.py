"""``LearnerBatch`` (``train.vector.learner_batch``) on its own, below both vector envs:
its arguments and defaults, the opponents it builds and names, the learner's forfeits and
held games, and every finished match's report checked against the engine's own arrays
for that step (the learner's charge first, then the seats clockwise from its left)."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from pis_env.batched import kernels as K
from pis_env.privileged import privileged_size
from pis_env.rules import Rules
from train.common.league import win_share
from train.vector.learner_batch import (
    NUM_ACTIONS,
    AgentPolicy,
    Learner,
    LearnerBatch,
    name_of,
)


class Named:
    """A bot with a name and a layout of its own; it plays its first legal move."""

    name = "named"
    layout_version = 1

    def __init__(self):
        self.seen: list[dict] = []

    def act(self, observation):
        self.seen.append(observation)
        return int(np.flatnonzero(observation["action_mask"])[0])


class Plain:
    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[-1])


def first_legal(obs, masks):
    return masks.argmax(axis=1)


def watch_steps(batch: LearnerBatch) -> list[dict]:
    """The engine's ``info`` of every step from now on (copies), with its rewards."""
    infos: list[dict] = []
    step = batch.env.step

    def watched(actions):
        out = step(actions)
        infos.append({k: np.array(v, copy=True) for k, v in out[3].items()}
                     | {"engine_rewards": np.array(out[1], copy=True)})
        return out

    batch.env.step = watched
    return infos


def play(batch: LearnerBatch, steps: int, rng) -> list:
    """``steps`` steps of random legal learner moves; every step's ``ended``."""
    out = []
    for _ in range(steps):
        masks = batch.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        out.append(batch.step(actions).ended)
    return out


# ---------------------------------------------------------------------- arguments
def test_the_rules_come_from_options_a_dict_or_a_rules_object():
    assert LearnerBatch(2, num_players=3, seed=0).rules == Rules(num_players=3)
    assert LearnerBatch(2, {"num_players": 3}, seven_penalty="double", seed=0).rules == \
        Rules(num_players=3, seven_penalty="double")
    assert LearnerBatch(2, Rules(num_players=3), num_deals=2, seed=0).rules == \
        Rules(num_players=3, num_deals=2)
    with pytest.raises(ValueError) as bad:
        LearnerBatch(2, mix_per="deal", seed=0)
    assert str(bad.value) == "mix_per='deal': 'seat' or 'game'"
    with pytest.raises(ValueError) as bad:
        LearnerBatch(2, features=("mask",), seed=0)
    assert str(bad.value) == "features=('mask',): ('obs',) or ('obs', 'mask')"


def test_the_defaults():
    batch = LearnerBatch(4, seed=3)
    batch.reset()
    assert (batch.skip_forced, batch.win_bonus, batch.privileged) == (False, 0.0, False)
    assert batch.skip_forced is False and batch.env.skip_forced is False
    assert batch.layout_version == 0 and batch.size == batch.obs_size
    assert batch.num_envs == 4 and batch.multi_deal is False
    assert (batch.env.learner[:, K.L_SEAT] == 0).all() and batch._bot_factory is None
    assert LearnerBatch(2, num_deals=2, seed=0).multi_deal is True
    assert batch.reset().shape == (4, batch.obs_size)


def test_a_learner_given_as_an_object_and_as_keywords_is_refused():
    with pytest.raises(ValueError) as bad:
        LearnerBatch(2, learner=Learner(seat=1), win_bonus=0.5, skip_forced=True, seed=0)
    assert str(bad.value) == ("learner given as an object and skip_forced, win_bonus as "
                              "keywords: give one or the other")


def test_an_unseeded_batch_draws_a_63_bit_seed_and_a_seed_replays():
    seeds = [LearnerBatch(1).seed for _ in range(12)]
    assert all(isinstance(s, int) and 2**32 <= s < 2**63 for s in seeds)
    assert len(set(seeds)) == len(seeds)
    first = LearnerBatch(8, seed=5).reset()
    assert np.array_equal(first, LearnerBatch(8, seed=5).reset())
    assert not np.array_equal(first, LearnerBatch(8, seed=6).reset())


def test_a_random_learner_seat_is_drawn_for_each_match():
    for seat in (None, "random"):
        batch = LearnerBatch(64, num_players=3, learner_seat=seat, seed=1)
        batch.reset()
        assert set(batch.env.learner[:, K.L_SEAT].tolist()) == {0, 1, 2}


def test_the_policy_input_has_the_features_asked_for():
    for features, privileged, extra in ((("obs", "mask"), False, NUM_ACTIONS),
                                        (("obs",), True, privileged_size(3))):
        batch = LearnerBatch(3, num_players=3, features=features, privileged=privileged,
                             seed=2)
        assert batch.size == batch.obs_size + extra
        assert batch.reset().shape == (3, batch.size)
        ends = [e for e in play(batch, 200, np.random.default_rng(0)) if e.index.size]
        assert ends and ends[0].terminal_obs.shape[1] == batch.size
        if "mask" in features:  # a finished game has no legal move
            assert not ends[0].terminal_obs[:, batch.obs_size:].any()


def test_a_v1_opponent_in_the_mix_makes_the_engine_keep_the_public_record():
    batch = LearnerBatch(2, opponent_mix={AgentPolicy(Named()): 1.0}, seed=0)
    assert batch.env.game.public is not None
    assert LearnerBatch(2, seed=0).env.game.public is None


# ---------------------------------------------------------------------- opponents
def test_an_agent_as_a_batched_policy():
    named = Named()
    policy = AgentPolicy(named)
    assert (policy.name, policy.layout_version, repr(policy)) == (
        "named", 1, "AgentPolicy('named')")
    assert AgentPolicy(named, "given").name == "given"
    plain = AgentPolicy(Plain())
    assert (plain.name, plain.layout_version) == ("Plain", None)
    obs = np.zeros((2, 5), dtype=np.float32)
    masks = np.array([[0, 1, 1], [1, 0, 0]], dtype=np.int8)
    actions = policy(obs, masks)
    assert actions.dtype == np.int64 and actions.tolist() == [1, 0]
    assert [sorted(o) for o in named.seen] == [["action_mask", "observation"]] * 2
    assert plain(obs, masks).tolist() == [2, 0]


def test_the_names_a_match_reports_for_its_opponents():
    def a_function(obs, masks):
        return masks.argmax(axis=1)

    class Nameless:
        def __call__(self, obs, masks):
            return masks.argmax(axis=1)

    nameless = Nameless()
    assert name_of("heuristic") == "heuristic"
    assert name_of(AgentPolicy(Named())) == "named"
    assert name_of(a_function) == "a_function"
    assert name_of(nameless) == repr(nameless)


def test_other_agents_come_from_the_bot_factory_or_the_tables_agents():
    made = []

    def factory(name):
        made.append(name)
        return Plain()

    batch = LearnerBatch(2, num_players=3, opponent="mc", bot_factory=factory, seed=0)
    assert made == ["mc"] and isinstance(batch._bots["mc"].agent, Plain)
    own = LearnerBatch(2, num_players=3, opponent="mc", seed=0)._bots["mc"].agent
    reference = agents.make_for_table("mc", Rules(num_players=3).to_dict())
    assert type(own) is type(reference) and own.num_players == 3


def test_an_opponent_mix_drops_zero_weights_and_releases_unused_policies():
    def a_policy(obs, masks):
        return masks.argmax(axis=1)

    batch = LearnerBatch(4, opponent_mix={a_policy: 1.0}, seed=0)
    assert batch.mix == {"a_policy": 1.0}
    with pytest.raises(ValueError) as bad:
        batch.set_opponent_mix({"random": 0})
    assert str(bad.value) == "opponent_mix: the weights sum to 0"
    batch.reset()
    slot = batch.env.policies.index(a_policy)
    batch.set_opponent_mix({"random": 2, "greedy": 0})
    assert batch.mix == {"random": 2.0}
    assert batch.env.policies[slot] is a_policy  # the games still play it
    batch.reset()
    batch.set_opponent_mix({"random": 1})
    assert batch.env.policies[slot] is None and K.EXTERNAL + slot not in batch._names


# ---------------------------------------------------------------------- stepping
def test_an_action_outside_0_to_57_forfeits_the_match():
    batch = LearnerBatch(3, seed=4)
    batch.reset()
    legal = batch.action_masks().argmax(axis=1)
    actions = np.array([NUM_ACTIONS, -1, legal[2]])
    result = batch.step(actions)
    assert result.dones[:2].all() and not result.dones[2]
    ended = result.ended
    assert ended.index.tolist() == [0, 1] and ended.forfeited.all()
    assert ended.illegal_action.tolist() == [NUM_ACTIONS, -1]
    assert ended.end_reason.tolist() == [K.REASON_NAMES[K.ILLEGAL]] * 2
    assert ended.episode_length.tolist() == [1, 1]


def test_held_games_wait_and_count_no_decision():
    batch = LearnerBatch(3, seed=4)
    before = batch.reset()
    hold = np.array([True, False, False])
    bad = np.array([NUM_ACTIONS, *batch.action_masks().argmax(axis=1)[1:]])
    result = batch.step(bad, hold=hold)  # the held game's illegal action is ignored
    assert not result.dones.any() and result.rewards[0] == 0
    assert np.array_equal(result.obs[0], before[0])
    assert batch._ep_len.tolist() == [0, 1, 1]


def test_each_finished_match_is_reported_from_the_learners_seat():
    rules = Rules(num_players=3)
    batch = LearnerBatch(16, rules, opponent=["random", first_legal, "greedy"],
                         learner_seat="random", win_bonus=10.0, seed=8)
    batch.reset()
    infos = watch_steps(batch)
    rng = np.random.default_rng(1)
    lengths = np.zeros(16, dtype=np.int64)
    returns = np.zeros(16)
    reported = 0
    for _ in range(120):
        masks = batch.action_masks()
        result = batch.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        info, ended = infos[-1], result.ended
        lengths += 1
        returns += result.rewards
        assert result.truncated.dtype == bool and not result.truncated.any()
        for j, g in enumerate(ended.index):
            s = int(info["learner_seat"][g])
            charges = [int(info["charges"][g, (s + k) % 3]) for k in range(3)]
            assert ended.charges[j].tolist() == charges and ended.seat[j] == s
            assert ended.charges.dtype == np.int64 and ended.opponents.dtype == object
            assert ended.win[j] == (charges[0] == min(charges))
            assert ended.penalty[j] == charges[0] and ended.match_score is None
            names = {0: "random", 1: "first_legal", 2: "greedy"}
            assert ended.opponents[j].tolist() == [names[(s + k) % 3] for k in (1, 2)]
            bonus = 10.0 * win_share(charges)
            assert result.rewards[g] == pytest.approx(info["engine_rewards"][g] + bonus)
            assert bonus != 0
            assert ended.episode_length[j] == lengths[g]
            assert ended.episode_return[j] == pytest.approx(returns[g])
            lengths[g], returns[g] = 0, 0.0
            reported += 1
    assert reported >= 16


def test_a_match_of_several_deals_is_reported_by_its_totals():
    batch = LearnerBatch(8, num_players=2, num_deals=2, learner_seat=1, seed=3)
    batch.reset()
    infos = watch_steps(batch)
    rng = np.random.default_rng(2)
    seen = 0
    for _ in range(400):
        masks = batch.action_masks()
        ended = batch.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks])).ended
        for j, g in enumerate(ended.index):
            totals = infos[-1]["totals"][g]
            assert ended.charges[j].tolist() == [int(totals[1]), int(totals[0])]
            assert ended.match_score[j] == totals[1]
            seen += 1
    assert seen > 0


# ---------------------------------------------------------------------- round two
def test_the_arrays_handed_out_are_new_and_of_their_documented_types():
    batch = LearnerBatch(4, seed=9)
    first = batch.reset()
    kept = first.copy()
    assert LearnerBatch(2, seed=0).mix == {}
    for _ in range(3):
        result = batch.step(batch.action_masks().argmax(axis=1)[:, None])  # any shape [B]
    assert np.array_equal(first, kept)  # the engine's buffers moved on, the copy did not
    ends = [e for e in play(batch, 300, np.random.default_rng(3)) if e.index.size]
    ended = ends[0]
    assert result.obs.dtype == np.float32
    assert ended.episode_length.dtype == np.int64 and ended.winner.dtype == bool
    assert ended.end_reason.dtype == object and ended.seat.dtype == np.int64


def test_a_policy_file_opponent_plays_its_argmax_and_checks_the_table():
    spec = "ppo:models/ppo_2p.zip"
    policy = LearnerBatch(2, opponent=spec, seed=0)._bots[spec]
    assert policy.deterministic is True and policy.name == spec
    with pytest.raises(ValueError) as wrong:
        LearnerBatch(2, num_players=4, opponent=spec, seed=0)
    assert "trained for 2 players" in str(wrong.value)


def test_a_panel_style_is_seeded_from_the_batch_and_plays_its_table():
    def games(seed):
        batch = LearnerBatch(6, num_players=3, opponent="greedy_eps", seed=seed)
        batch.reset()
        return [e.charges.tolist() for e in play(batch, 150, np.random.default_rng(0))]

    assert games(4) == games(4)
    batch = LearnerBatch(6, num_players=3, opponent="greedy_eps", seed=4)
    batch.reset()
    reasons = {r for e in play(batch, 300, np.random.default_rng(1)) for r in e.end_reason}
    assert K.REASON_NAMES[K.ILLEGAL] not in reasons  # its moves are a 3-player table's


def test_an_agent_opponent_is_reported_by_the_name_it_was_given():
    batch = LearnerBatch(2, opponent="mc", bot_factory=lambda name: Plain(), seed=0)
    assert batch._bots["mc"].name == "mc"
    with pytest.raises(ValueError) as bad:
        LearnerBatch(2, opponent=3, seed=0)
    assert str(bad.value) == ("an opponent is 'random', 'greedy', an agent name or a "
                              "callable policy(obs, masks) -> actions, got 3")


def test_freed_policy_slots_are_reused_and_released_again():
    calls = {"a": 0, "b": 0, "c": 0, "d": 0}

    def policy(name):
        def play(obs, masks):
            calls[name] += 1
            return masks.argmax(axis=1)
        play.__name__ = name
        return play

    a, b, c, d = policy("a"), policy("b"), policy("c"), policy("d")
    batch = LearnerBatch(4, opponent_mix={a: 1.0, b: 1.0}, seed=0)
    batch.reset()
    assert batch.env.policies == [a, b]
    for _ in range(3):  # still played, then released, then nothing left to release
        batch.set_opponent_mix({"random": 1})
        batch.reset()
    assert batch.env.policies == [None, None]
    assert K.EXTERNAL not in batch._names and K.EXTERNAL + 1 not in batch._names
    batch.set_opponent_mix({c: 1.0, d: 1.0})
    assert batch.env.policies == [c, d]
    assert (batch._names[K.EXTERNAL], batch._names[K.EXTERNAL + 1]) == ("c", "d")
    batch.reset()
    ends = play(batch, 60, np.random.default_rng(0))
    assert calls["c"] > 0 and calls["d"] > 0
    assert {name for e in ends for name in e.opponents.ravel()} == {"c", "d"}


def test_an_opponents_illegal_move_ends_the_match_without_a_forfeit_by_the_learner():
    def passes(obs, masks):
        return np.full(len(obs), 57)  # "pass" whether it is legal or not

    batch = LearnerBatch(4, opponent=passes, seed=0)
    batch.reset()
    for _ in range(20):
        ended = batch.step(batch.action_masks().argmax(axis=1)).ended
        if ended.index.size:
            break
    assert ended.index.size and not ended.forfeited.any()
    assert set(ended.end_reason) == {K.REASON_NAMES[K.ILLEGAL]}
