"""The league's opponents (``train.common.league.League``), without training: the win
share a win bonus scales, a snapshot's seat (sampled or greedy), the mix and the pool (its
prioritised weights, its draws, its checkpoint), the pool's sync to a worker and its
checkpointed scores. The learner's env is ``test_league_env.py``'s."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from agents.ppo import NumpyPolicy, make_metadata
from pis_env.engine import NUM_ACTIONS
from train.common.league import League, SnapshotAgent, win_share
from train.sb3.config import LeagueConfig


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


# ---------------------------------------------------------------------- the mix and the pool
def test_the_mix_is_normalised_and_its_zero_weights_dropped():
    league = League({"heuristic": 3, "greedy": 1, "random": 0}, pool_size=4,
                    prioritized=False, priority_power=1.5, window=7,
                    snapshot_deterministic=True)
    assert league.mix == {"heuristic": 0.75, "greedy": 0.25}
    assert (league.pool_size, league.prioritized, league.priority_power, league.window,
            league.snapshot_deterministic) == (4, False, 1.5, 7, True)
    assert not league.uses_pool
    assert League({"heuristic": 1, "self": 1}).uses_pool
    defaults = League({"heuristic": 1})
    assert (defaults.pool_size, defaults.prioritized, defaults.priority_power,
            defaults.window, defaults.snapshot_deterministic) == (10, True, 2.0, 500, False)


def test_a_league_is_built_from_its_config_section():
    league = League.from_config(LeagueConfig(
        opponents={"heuristic": 1, "self": 3}, pool_size=5, prioritized=False,
        priority_power=3.0, window=9, snapshot_deterministic=True))
    assert league.mix == {"heuristic": 0.25, "self": 0.75}
    assert (league.pool_size, league.prioritized, league.priority_power, league.window,
            league.snapshot_deterministic) == (5, False, 3.0, 9, True)


def test_the_pool_keeps_its_newest_snapshots_and_forgets_the_scores_of_the_dropped():
    league = League({"self": 1}, pool_size=2)
    assert league.add_snapshot(100, flat_policy()) == "snap@100"
    league.add_snapshot(200, flat_policy())
    league.record({"opponents": ["snap@100", "snap@200"], "charges": [0, 5, 5]})
    first = league.snapshot_weights()
    league.add_snapshot(300, flat_policy())
    assert [(s["id"], s["step"]) for s in league.snapshots] == [("snap@200", 200),
                                                                ("snap@300", 300)]
    assert set(league.scores) == {"snap@200"}
    assert len(league.snapshot_weights()) == 2 and first is not league.snapshot_weights()
    replaced = flat_policy()
    league.add_snapshot(200, replaced)  # the same step again: replaced, moved to the end
    assert [s["id"] for s in league.snapshots] == ["snap@300", "snap@200"]
    assert league.policy_of("snap@200") is replaced
    assert isinstance(league.snapshots[1]["step"], int)
    league.add_snapshot(400, flat_policy())  # evicts snap@300, which never had a score
    assert [s["id"] for s in league.snapshots] == ["snap@200", "snap@400"]


def test_a_score_is_the_recent_mean_shrunk_towards_the_prior():
    league = League({"heuristic": 1})
    assert league.score("heuristic") == 0.5
    league.record({"opponents": ["heuristic"], "charges": [0, 3]})   # won: 1
    league.record({"opponents": ["heuristic"], "charges": [3, 3]})   # tie: 0.5
    league.record({"opponents": ["heuristic"], "charges": [4, 3]})   # lost: 0
    assert list(league.scores["heuristic"]) == [1.0, 0.5, 0.0]
    assert league.score("heuristic") == pytest.approx((1 + 0.5 + 0 + 0.5 * 2) / 5)
    assert league.score("heuristic", prior=0.0, prior_games=1.0) == pytest.approx(1.5 / 4)
    league.record({"opponents": ["heuristic"], "charges": [0, 3]})
    assert league.score("heuristic") == pytest.approx((2.5 + 0.5 * 2) / 6)
    assert league.score("never-met", prior=0.2) == pytest.approx(0.2)


def test_a_score_counts_only_the_window_of_recent_results():
    league = League({"heuristic": 1}, window=3)
    for charges in ([9, 0], [9, 0], [0, 9], [0, 9], [0, 9]):
        league.record({"opponents": ["heuristic"], "charges": charges})
    assert list(league.scores["heuristic"]) == [1.0, 1.0, 1.0]


def test_prioritised_weights_favour_the_snapshots_the_learner_loses_to():
    league = League({"self": 1}, priority_power=2.0)
    assert league.snapshot_weights().shape == (0,)
    for step in (1, 2, 3):
        league.add_snapshot(step, flat_policy())
    for _ in range(6):
        league.record({"opponents": ["snap@1", "snap@3"], "charges": [0, 9, 9]})  # beats
        league.record({"opponents": ["snap@2"], "charges": [9, 0]})              # loses
    scores = [league.score(f"snap@{s}") for s in (1, 2, 3)]
    raw = np.array([(1 - s) ** 2 + 1e-3 for s in scores])
    np.testing.assert_allclose(league.snapshot_weights(), raw / raw.sum())
    assert league.snapshot_weights() is league.snapshot_weights()  # cached until a change
    flat = League({"self": 1}, prioritized=False)
    for step in (1, 2, 3, 4):
        flat.add_snapshot(step, flat_policy())
    np.testing.assert_array_equal(flat.snapshot_weights(), np.full(4, 0.25))


def test_seats_are_drawn_from_the_mix_and_snapshots_by_their_weights():
    league = League({"heuristic": 0.6, "greedy": 0.2, "self": 0.2}, priority_power=2.0)
    for step in (1, 2):
        league.add_snapshot(step, flat_policy())
    for _ in range(20):
        league.record({"opponents": ["snap@1"], "charges": [0, 9]})  # snap@1: beaten
    keys = league.sample_keys(np.random.default_rng(0), 20000)
    counts = {k: keys.count(k) / len(keys) for k in set(keys)}
    assert set(counts) == {"heuristic", "greedy", "snap@1", "snap@2"}
    assert counts["heuristic"] == pytest.approx(0.6, abs=0.015)
    assert counts["greedy"] == pytest.approx(0.2, abs=0.015)
    w = league.snapshot_weights()
    assert counts["snap@2"] == pytest.approx(0.2 * w[1], abs=0.015)
    assert counts["snap@1"] == pytest.approx(0.2 * w[0], abs=0.01)
    assert league.sample_keys(np.random.default_rng(0), 0) == []
    two = League({"heuristic": 0.5, "greedy": 0.5}).sample_keys(np.random.default_rng(0), 400)
    assert 150 < two.count("greedy") < 250
    # a mix of one name draws only the snapshots, one draw per seat (an independent replay)
    pool = League({"self": 1}, prioritized=False)
    for step in (1, 2, 3):
        pool.add_snapshot(step, flat_policy())
    rng = np.random.default_rng(8)
    expected = [f"snap@{1 + rng.choice(3, p=np.full(3, 1 / 3))}" for _ in range(30)]
    assert pool.sample_keys(np.random.default_rng(8), 30) == expected
    assert League({"greedy": 1}).sample_keys(np.random.default_rng(0), 3) == ["greedy"] * 3


def test_self_with_an_empty_pool_gives_its_share_to_the_rest_or_is_refused():
    league = League({"heuristic": 0.5, "self": 0.5})
    assert set(league.sample_keys(np.random.default_rng(1), 200)) == {"heuristic"}
    with pytest.raises(RuntimeError) as err:
        League({"self": 1}).sample_keys(np.random.default_rng(1), 1)
    assert str(err.value) == "the league's mix is only 'self' and the pool is empty"


def test_a_checkpointed_league_plays_its_snapshots_as_before():
    league = league_with_pool()
    rng = np.random.default_rng(5)
    meta = make_metadata(rules={"num_players": 2}, net_arch={"pi": [4, 3], "vf": [4]},
                         activation="tanh", features=["obs"])
    state = {"mlp_extractor.policy_net.0.weight": rng.normal(size=(4, meta["input_size"])),
             "mlp_extractor.policy_net.0.bias": rng.normal(size=4),
             "mlp_extractor.policy_net.2.weight": rng.normal(size=(3, 4)),
             "mlp_extractor.policy_net.2.bias": rng.normal(size=3),
             "action_net.weight": rng.normal(size=(NUM_ACTIONS, 3)),
             "action_net.bias": rng.normal(size=NUM_ACTIONS)}
    league.add_snapshot(400, NumpyPolicy(meta, state))
    saved = league.state_dict()
    import torch
    assert all(isinstance(v, torch.Tensor) for s in saved["snapshots"]
               for v in s["state"].values())
    assert saved["scores"] == {k: list(v) for k, v in league.scores.items()}
    restored = League({"self": 1}, window=4)
    restored._weights = np.ones(1)
    restored.load_state_dict(saved)
    assert restored._weights is None
    assert [(s["id"], s["step"]) for s in restored.snapshots] == [
        (s["id"], s["step"]) for s in league.snapshots]
    assert restored.scores == league.scores
    obs = {"observation": rng.integers(0, 2, meta["layout_size"]).astype(np.int8),
           "action_mask": np.ones(NUM_ACTIONS, np.int8)}
    for before, after in zip(league.snapshots, restored.snapshots):
        assert after["policy"].meta == before["policy"].meta
        for (w0, b0), (w1, b1) in zip(before["policy"].layers, after["policy"].layers):
            np.testing.assert_array_equal(w0, w1)
            np.testing.assert_array_equal(b0, b1)
        moves = [SnapshotAgent(p["policy"], np.random.default_rng(9), False).act(obs)
                 for p in (before, after)]
        assert moves[0] == moves[1]
