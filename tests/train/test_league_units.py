"""The league's parts one by one, without training: the win share a win bonus scales, a
snapshot's seat (sampled or greedy), the mix and the pool (its prioritised weights, its
draws, its checkpoint), the pool's sync to a worker, its checkpointed scores, and the
learner's env (its observation, an episode's report, the win bonus, forced moves, seeds,
a match's totals, a bot seated at its own layout)."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from agents.ppo import NumpyPolicy, make_metadata
from pis_env.engine import NUM_ACTIONS
from train.common.league import AtOwnLayout, League, SnapshotAgent, win_share
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


# ---------------------------------------------------------------------- the learner's env
def play(env, rng, seed=None):
    """One episode of random legal moves: (steps, rewards, the last info, every mask
    the learner was shown)."""
    obs, _ = env.reset(seed=seed)
    masks, rewards, done = [env.action_masks().copy()], [], False
    while not done:
        obs, reward, terminated, truncated, info = env.step(
            int(rng.choice(np.flatnonzero(env.action_masks()))))
        rewards.append(reward)
        assert obs.dtype == np.float32 and obs.shape == env.observation_space.shape
        assert type(terminated) is bool and type(truncated) is bool
        done = terminated or truncated
        if not done:
            masks.append(env.action_masks().copy())
    assert "illegal_action" not in info  # every move reached the table as played
    assert isinstance(info["episode"]["t"], float)
    return rewards, info, masks


def test_the_observation_is_the_tables_then_the_mask_then_the_hidden_cards():
    from pis_env.privileged import privileged_features, privileged_size
    from train.common.league import LeagueEnv

    for players in (2, 3):
        plain = LeagueEnv(League({"random": 1}), {"num_players": players}, features=("obs",))
        size = plain.inner.observation_space.shape[0]
        assert plain.observation_space.shape == (size,) and plain.actor_dim == size
        env = LeagueEnv(League({"random": 1}), {"num_players": players}, privileged=True)
        assert env.actor_dim == size + NUM_ACTIONS
        assert env.observation_space.shape == (size + NUM_ACTIONS + privileged_size(players),)
        assert env.observation_space.dtype == np.float32
        assert env.action_space == env.inner.action_space
        obs, _ = env.reset(seed=3)
        inner_obs = env.inner.aec.observe(env.inner.learner)["observation"]
        np.testing.assert_array_equal(obs[:size], inner_obs)
        np.testing.assert_array_equal(obs[size:size + NUM_ACTIONS], env.action_masks())
        np.testing.assert_array_equal(obs[size + NUM_ACTIONS:],
                                      privileged_features(env.inner.game, env.inner.seat))
        assert plain.reset(seed=3)[0].shape == (size,)
        masked = LeagueEnv(League({"random": 1}), {"num_players": players})
        obs, info = masked.reset(seed=3)
        assert obs.shape == masked.observation_space.shape == (size + NUM_ACTIONS,)
        assert obs.dtype == np.float32 and isinstance(info, dict)
        space = env.observation_space
        assert (space.low.min(), space.low.max(), space.high.min(), space.high.max()) == (
            0, 0, 1, 1)


def test_an_episode_reports_its_opponents_charges_and_return():
    from train.common.league import LeagueEnv

    league = League({"random": 0.5, "greedy": 0.5})
    env = LeagueEnv(league, {"num_players": 3}, seed=4)
    rng = np.random.default_rng(0)
    for seed in range(6):
        rewards, info, _ = play(env, rng, seed=seed)
        game, seat = env.inner.aec.game, env.inner.seat
        result = info["league"]
        assert set(result) == {"opponents", "charges", "win"}
        assert len(result["opponents"]) == 2 and set(result["opponents"]) <= {"random", "greedy"}
        assert result["charges"] == [int(game.charges[(seat + k) % 3]) for k in range(3)]
        assert result["win"] == (result["charges"][0] == min(result["charges"]))
        assert info["episode"]["l"] == len(rewards)
        assert info["episode"]["r"] == pytest.approx(sum(rewards))
        assert 0 <= info["episode"]["t"] < 60
    seats = set()
    for seed in range(40):
        env.reset(seed=seed)
        seats.add(env.inner.seat)
    assert seats == {0, 1, 2}  # the learner's seat is drawn
    fixed = LeagueEnv(league, {"num_players": 3}, learner_seat=2)
    fixed.reset(seed=1)
    assert fixed.inner.seat == 2


def test_the_win_bonus_is_added_to_the_last_reward_and_the_return():
    from train.common.league import LeagueEnv, win_share

    runs = []
    for bonus in (0.0, 10.0):
        env = LeagueEnv(League({"random": 1}), {"num_players": 2}, seed=4, win_bonus=bonus)
        runs.append(play(env, np.random.default_rng(1), seed=7))
    (plain, info0, _), (bonused, info1, _) = runs
    share = win_share(info0["league"]["charges"])
    assert share != 0 and info0["league"] == info1["league"]
    assert bonused[:-1] == plain[:-1]
    assert bonused[-1] == pytest.approx(plain[-1] + 10.0 * share)
    assert info1["episode"]["r"] == pytest.approx(info0["episode"]["r"] + 10.0 * share)
    shares = set()
    for seed in range(6):  # at three players a lost deal's share is -1/2
        plain_env = LeagueEnv(League({"random": 1}), {"num_players": 3}, seed=4)
        bonus_env = LeagueEnv(League({"random": 1}), {"num_players": 3}, seed=4,
                              win_bonus=10.0)
        p, i0, _ = play(plain_env, np.random.default_rng(seed), seed=seed)
        b, i1, _ = play(bonus_env, np.random.default_rng(seed), seed=seed)
        share = win_share(i0["league"]["charges"])
        shares.add(share)
        assert b[-1] == pytest.approx(p[-1] + 10.0 * share)
    assert shares - {1.0, -1.0}


def test_skipping_forced_moves_shows_only_real_decisions_and_keeps_their_rewards():
    from train.common.league import LeagueEnv

    rng = np.random.default_rng(2)
    forced_seen = 0
    for skip in (False, True):
        env = LeagueEnv(League({"random": 1}), {"num_players": 2}, seed=1, skip_forced=skip)
        for seed in range(8):
            rewards, info, masks = play(env, rng, seed=seed)
            forced = sum(int(m.sum()) == 1 for m in masks)
            if skip:
                assert forced == 0
            else:
                forced_seen += forced
            charges = info["league"]["charges"]
            # the forced moves' rewards are kept: the deal's rewards sum to the learner's
            # deal reward (the default "points": the other's charge minus its own, / 100)
            assert sum(rewards) == pytest.approx((charges[1] - charges[0]) / 100, abs=1e-9)
    assert forced_seen > 0  # without the skip the learner does meet forced moves


def test_the_same_seed_deals_the_same_episode_and_bots_are_kept_per_seat():
    from train.common.league import LeagueEnv

    def episode(env):
        rewards, info, masks = play(env, np.random.default_rng(3), seed=11)
        return rewards, info["league"], [m.tolist() for m in masks]

    a = LeagueEnv(League({"random": 1, "greedy": 1}), {"num_players": 3}, seed=0)
    b = LeagueEnv(League({"random": 1, "greedy": 1}), {"num_players": 3}, seed=99)
    assert episode(a) == episode(b)  # reset(seed) reseeds the opponents too
    bots = dict(a._bots)
    assert bots and all(bot is not None for bot in bots.values())
    for seed in range(12, 20):
        a.reset(seed=seed)
    assert all(a._bots[key] is bot for key, bot in bots.items())
    assert a._bot("greedy", 1) is a._bot("greedy", 1)
    assert {seat for _, seat in a._bots} == {0, 1}
    assert a._bot("random", 0) is not a._bot("random", 1)


def test_sampling_snapshots_play_the_same_episode_for_the_same_seed():
    from train.common.league import LeagueEnv

    league = League({"self": 1})
    league.add_snapshot(5, flat_policy())
    runs = []
    for env_seed in (0, 1):
        env = LeagueEnv(league, {"num_players": 2}, seed=env_seed)
        runs.append([play(env, np.random.default_rng(3), seed=seed)[1]["league"]
                     for seed in (21, 22, 23)])
    assert runs[0] == runs[1]
    env = LeagueEnv(league, {"num_players": 2}, seed=0)
    other = [play(env, np.random.default_rng(3), seed=seed)[1]["league"]
             for seed in (21, 22, 23)]
    assert other == runs[0]
    env.reset()  # unseeded: still plays
    assert env.action_masks().any()


def test_the_first_decision_can_be_forced_unless_forced_moves_are_skipped():
    from train.common.league import LeagueEnv

    for skip, expected in ((False, True), (True, False)):
        env = LeagueEnv(League({"random": 1}), {"num_players": 2}, seed=0, skip_forced=skip)
        assert env.skip_forced is skip
        firsts = []
        for seed in range(60):
            _, info = env.reset(seed=seed)
            assert isinstance(info, dict)
            firsts.append(int(env.action_masks().sum()) == 1)
        assert any(firsts) is expected
    assert LeagueEnv(League({"random": 1}), {"num_players": 2}).skip_forced is False


def test_reset_options_reach_the_table():
    from train.common.league import LeagueEnv

    env = LeagueEnv(League({"random": 1}), {"num_players": 3}, seed=0)
    for dealer in (0, 1, 2):
        env.reset(seed=1, options={"dealer": dealer})
        assert env.inner.aec.game.dealer == dealer


def test_snapshots_take_their_seats_with_the_leagues_determinism():
    from train.common.league import LeagueEnv

    league = League({"self": 1}, snapshot_deterministic=True)
    league.add_snapshot(5, flat_policy())
    env = LeagueEnv(league, {"num_players": 3}, seed=0)
    opponents = env._sample(np.random.default_rng(0))
    assert [type(o) for o in opponents] == [SnapshotAgent, SnapshotAgent]
    assert all(o.policy is league.policy_of("snap@5") and o.deterministic for o in opponents)
    assert env._keys == ["snap@5", "snap@5"]
    sampling = League({"self": 1})
    sampling.add_snapshot(5, flat_policy())
    agent = LeagueEnv(sampling, {"num_players": 2}, seed=0)._sample(np.random.default_rng(0))[0]
    obs = observation(agent.policy)
    assert len({agent.act(obs) for _ in range(50)}) == 3  # it samples, with the env's stream
    payload = League({"self": 1})
    payload.add_snapshot(9, flat_policy())
    env.league_sync(payload.sync_payload(with_pool=True))
    assert [s["id"] for s in env.league.snapshots] == ["snap@9"]


def test_a_match_table_reports_the_match_totals():
    from train.common.league import LeagueEnv

    env = LeagueEnv(League({"random": 1}), {"num_players": 2, "num_deals": 2}, seed=0)
    assert env.multi_deal
    _, info, _ = play(env, np.random.default_rng(4), seed=2)
    game, seat = env.inner.aec.game, env.inner.seat
    assert info["league"]["charges"] == [int(game.totals[(seat + k) % 2]) for k in range(2)]
    assert not LeagueEnv(League({"random": 1}), {"num_players": 2}).multi_deal
    for skip in (False, True):  # each deal's reward counts, also one a forced move ends
        env = LeagueEnv(League({"random": 1}), {"num_players": 2, "num_deals": 3}, seed=0,
                        skip_forced=skip)
        for seed in range(4):
            rewards, info, _ = play(env, np.random.default_rng(seed), seed=seed)
            totals = info["league"]["charges"]
            assert sum(r != 0 for r in rewards) >= 2
            assert sum(rewards) == pytest.approx((totals[1] - totals[0]) / 100, abs=1e-9)
            assert info["episode"]["r"] == pytest.approx(sum(rewards))


def test_the_env_classes_of_each_layout_and_the_refusal_of_another():
    from pis_env import pis_yedili_v1, wrappers
    from train.common.league import learner_env_class, table_env_class

    assert learner_env_class(0) is wrappers.SingleAgentEnv
    assert learner_env_class(1) is pis_yedili_v1.SingleAgentEnv
    assert table_env_class(0) is wrappers.SingleAgentEnv.aec_class
    assert table_env_class(1) is pis_yedili_v1.SingleAgentEnv.aec_class
    assert table_env_class(0) is not table_env_class(1)
    with pytest.raises(ValueError) as err:
        learner_env_class(2)
    assert str(err.value) == "env_version=2: allowed values are 0, 1"


class Bot:
    def __init__(self, **attrs):
        self.__dict__.update(attrs)


@pytest.mark.parametrize("attrs, table, needs", [
    ({}, 1, False),                                        # no layout: reads any table
    ({"layout_version": 1}, 1, False),
    ({"layout_version": 0}, 1, True),                      # a v0 network at a v1 table
    ({"layout_version": 0, "reads_later_layouts": True}, 1, False),
    ({"layout_version": 1, "reads_later_layouts": True}, 0, True),  # never an earlier one
    ({"layout_version": 1}, 0, True),
])
def test_who_needs_to_be_shown_its_own_layout(attrs, table, needs):
    from train.common.league import needs_own_layout

    assert needs_own_layout(Bot(**attrs), table) is needs


def test_a_v0_network_at_a_v1_table_is_seated_at_its_own_layout():
    from train.common.league import LeagueEnv

    env = LeagueEnv(League({"ppo:models/ppo_2p.zip": 1}), {"num_players": 2}, seed=0,
                    env_version=1)
    bot = env._bot("ppo:models/ppo_2p.zip", 0)
    assert isinstance(bot, AtOwnLayout) and bot.layout_version == 0
    assert repr(bot) == f"AtOwnLayout({bot.agent!r})"
    assert bot.aec is env.inner.aec
    _, info, _ = play(env, np.random.default_rng(0), seed=1)  # it plays legal moves
    assert "league" in info
    same = LeagueEnv(League({"ppo:models/ppo_2p.zip": 1}), {"num_players": 2}, seed=0)
    assert not isinstance(same._bot("ppo:models/ppo_2p.zip", 0), AtOwnLayout)
