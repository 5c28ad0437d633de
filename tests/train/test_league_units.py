"""The league's parts one by one, without training: the win share a win bonus scales, a
snapshot's seat (sampled or greedy), the pool's sync to a worker, its checkpointed
scores, and a bot seated at its own layout."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from agents.ppo import NumpyPolicy, make_metadata
from pis_env.engine import NUM_ACTIONS
from train.common.league import AtOwnLayout, League, SnapshotAgent, win_share


@pytest.mark.parametrize("charges, share", [
    ([3, 5], 1.0), ([5, 3], -1.0), ([4, 4], 0.0), ([2, 2, 5], 0.5), ([2, 5, 2, 9], 0.5),
    ([9, 0, 0, 1], -1 / 2),
])
def test_the_win_share_splits_plus_one_among_the_lowest_and_minus_one_among_the_rest(
        charges, share):
    assert win_share(charges) == pytest.approx(share)
    assert win_share(tuple(charges)) == pytest.approx(share)


def flat_policy() -> NumpyPolicy:
    """Zero weights: every legal move has the same logit."""
    meta = make_metadata(rules={"num_players": 2}, net_arch={"pi": [4], "vf": [4]},
                         activation="tanh", features=["obs"])
    state = {"mlp_extractor.policy_net.0.weight": np.zeros((4, meta["input_size"])),
             "mlp_extractor.policy_net.0.bias": np.zeros(4),
             "action_net.weight": np.zeros((NUM_ACTIONS, 4)),
             "action_net.bias": np.zeros(NUM_ACTIONS)}
    return NumpyPolicy(meta, state)


def observation(policy: NumpyPolicy) -> dict:
    mask = np.zeros(NUM_ACTIONS, np.int8)
    mask[[4, 17, 40]] = 1
    return {"observation": np.zeros(policy.meta["layout_size"], np.int8), "action_mask": mask}


def test_a_sampling_snapshot_plays_every_legal_move_with_its_own_generator():
    policy = flat_policy()
    obs = observation(policy)
    agent = SnapshotAgent(policy, np.random.default_rng(3), False)
    moves = [agent.act(obs) for _ in range(300)]
    counts = np.bincount(moves, minlength=NUM_ACTIONS)
    assert set(np.flatnonzero(counts)) == {4, 17, 40}
    assert counts[[4, 17, 40]].min() > 60  # uniform: 100 each
    again = SnapshotAgent(policy, np.random.default_rng(3), False)
    assert [again.act(obs) for _ in range(300)] == moves


def test_a_greedy_snapshot_plays_its_argmax():
    policy = flat_policy()
    agent = SnapshotAgent(policy, np.random.default_rng(3), True)
    assert {agent.act(observation(policy)) for _ in range(50)} == {4}  # the first of ties


def test_an_unknown_snapshot_is_a_key_error_naming_it():
    with pytest.raises(KeyError) as err:
        League({"heuristic": 1.0}).policy_of("snap@9")
    assert err.value.args == ("snap@9",)


def league_with_pool() -> League:
    league = League({"heuristic": 0.5, "self": 0.5}, pool_size=3, window=4)
    for step in (100, 200, 300):
        league.add_snapshot(step, flat_policy())
    league.record({"opponents": ["snap@100", "snap@200"], "charges": [3, 9, 1]})
    return league


def test_a_worker_gets_the_pools_weights_and_with_the_pool_its_snapshots():
    learner = league_with_pool()
    worker = League({"heuristic": 0.5, "self": 0.5})
    worker.apply_payload(learner.sync_payload(with_pool=True))
    assert [s["id"] for s in worker.snapshots] == ["snap@100", "snap@200", "snap@300"]
    np.testing.assert_array_equal(worker.snapshot_weights(), learner.snapshot_weights())
    assert worker.snapshot_weights().dtype == np.float64
    learner.record({"opponents": ["snap@300"], "charges": [0, 5]})
    kept = worker.snapshots
    worker.apply_payload(learner.sync_payload(with_pool=False))
    assert worker.snapshots is kept
    np.testing.assert_array_equal(worker.snapshot_weights(), learner.snapshot_weights())


def test_restored_scores_keep_the_window():
    league = League({"heuristic": 1.0}, window=3)
    league.load_state_dict({"snapshots": [], "scores": {"heuristic": [1.0, 0.0, 0.5, 1.0]}})
    assert league.scores == {"heuristic": deque([0.0, 0.5, 1.0])}
    assert league.scores["heuristic"].maxlen == 3
    league.record({"opponents": ["heuristic"], "charges": [0, 4]})
    assert list(league.scores["heuristic"]) == [0.5, 1.0, 1.0]


def test_a_bot_at_its_own_layout_is_reset_with_the_seed_given():
    class Recorder:
        layout_version = 0
        seeds: list = []

        def reset(self, seed=None):
            self.seeds.append(seed)

    bot = Recorder()
    AtOwnLayout(bot, aec=None).reset(seed=11)
    AtOwnLayout(bot, aec=None).reset()
    assert bot.seeds == [11, None]
