"""``train.vector.sb3_vec_env.BatchedVecEnv``: the SB3 VecEnv API, masks through
MaskablePPO, terminal observations and rewards against the reference
``SingleAgentEnv`` on stacked deals, opponent mixes, torch snapshot opponents and the
``train`` factory."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv, VecNormalize

from pis_env.batched import kernels as K
from pis_env.cards import points_of
from pis_env.observation import Layout
from pis_env.wrappers import SingleAgentEnv
from tests.train.vector.reference_games import (
    lowest_legal,
    pick,
    reference_games,
    stacked_deals,
    step_reference,
)
from train.sb3.config import LeagueConfig, PolicyConfig, TrainConfig
from train.vector.sb3_vec_env import (
    AgentPolicy,
    BatchedVecEnv,
    TorchPolicy,
    make_league_vec_env,
)


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """Small forward passes on a busy machine: one thread (as train's torch_threads=1)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# ---------------------------------------------------------------------- VecEnv API
def test_vec_env_api():
    env = BatchedVecEnv(16, num_players=3, opponent="greedy", seed=0)
    assert isinstance(env, VecEnv) and env.num_envs == 16
    ref = SingleAgentEnv(num_players=3)
    assert env.observation_space == ref.observation_space
    assert env.action_space == ref.action_space
    obs = env.reset()
    assert obs.shape == (16, env.observation_space.shape[0]) and obs.dtype == np.float32
    assert all(env.observation_space.contains(o) for o in obs)
    masks = env.env_method("action_masks")
    assert len(masks) == 16 and all(m.dtype == bool and m.shape == (58,) for m in masks)
    assert [m.shape for m in env.env_method("action_masks", indices=[2, 5])] == [(58,)] * 2
    assert is_masking_supported(env) and env.has_attr("action_masks")
    np.testing.assert_array_equal(get_action_masks(env), env.action_masks())
    assert env.get_attr("render_mode") == [None] * 16
    assert env.get_attr("num_players", indices=[0, 1]) == [3, 3]
    assert not env.has_attr("no_such_attribute")
    with pytest.raises(AttributeError, match="no_such_attribute"):
        env.get_attr("no_such_attribute")
    env.set_attr("win_bonus", 0.5)
    assert env.get_attr("win_bonus", indices=0) == [0.5]
    assert env.env_is_wrapped(object) == [False] * 16
    assert env.seed(5) == list(range(5, 21))
    env.reset()
    obs, rewards, dones, infos = env.step(pick(env.action_masks(), 0))
    assert obs.dtype == np.float32 and rewards.dtype == np.float32 and dones.dtype == bool
    assert rewards.shape == dones.shape == (16,) and isinstance(infos, list) and len(infos) == 16
    env.close()


def test_seed_makes_runs_reproducible():
    def run(seed):
        env = BatchedVecEnv(32, num_players=2, opponent_mix={"random": 1, "greedy": 1},
                            learner_seat=None, seed=123)
        env.seed(seed)
        out = [env.reset()]
        for t in range(40):
            obs, rewards, dones, _ = env.step(pick(env.action_masks(), t))
            out += [obs, rewards, dones]
        return out

    a, b, c = run(1), run(1), run(2)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_vec_normalize_forwards_the_masks():
    env = VecNormalize(BatchedVecEnv(8, seed=0), norm_reward=False)
    env.reset()
    assert is_masking_supported(env)
    assert get_action_masks(env).shape == (8, 58)


# ---------------------------------------------------------------------- reference env
def run_reference_differential(num_envs: int, seed: int, *, features=("obs",),
                               skip_forced=False, mix=None, privileged=False,
                               version=0, **options) -> int:
    """First episode of every game against ``SingleAgentEnv`` on the same stacked deals,
    with the same (deterministic) opponents and learner actions: observations, masks,
    rewards, dones, terminal observations and end-of-episode infos agree (with
    ``privileged``, also the hidden-card features of ``train.common.league``). ``version``: the
    env version (its observation layout) on both sides."""
    deals = options.get("num_deals", 1)
    decks, dealers = stacked_deals(num_envs, seed, options.get("num_players", 2), deals)
    seat = 1
    env = BatchedVecEnv(num_envs, opponent="greedy", opponent_mix=mix, learner_seat=seat,
                        features=features, skip_forced=skip_forced, privileged=privileged,
                        seed=seed, layout_version=version, **options)
    assert env.layout_version == version
    obs = env.reset(decks=decks, dealers=dealers)
    with_mask = "mask" in features
    kinds = env.batched_env.opponent_kinds.copy()
    if privileged:
        from train.common.league import privileged_features

    def view(o, m, ref):
        parts = [o] + ([np.asarray(m, np.float32)] if with_mask else [])
        if privileged:
            parts.append(privileged_features(ref.aec.game, seat))
        return np.concatenate(parts)

    refs, first_obs, active = reference_games(kinds, decks, dealers, seat=seat,
                                              skip_forced=skip_forced, version=version,
                                              **options)
    for b in np.flatnonzero(active):
        ref = refs[b][0]
        np.testing.assert_array_equal(obs[b], view(first_obs[b], ref.action_masks(), ref))
    episodes, t = 0, 0
    while active.any():
        masks = env.action_masks()
        actions = pick(masks, t)
        t += 1
        obs, rewards, dones, infos = env.step(actions)
        for b in np.flatnonzero(active):
            ref, carry = refs[b]
            np.testing.assert_array_equal(masks[b], ref.action_masks())
            o, r, term, trunc, info = step_reference(ref, actions[b], skip_forced)
            refs[b][1] = 0.0
            assert rewards[b] == np.float32(carry + r), f"game {b} step {t}: reward"
            assert dones[b] == (term or trunc), f"game {b} step {t}: done"
            if dones[b]:
                episodes += 1
                active[b] = False
                d = infos[b]
                np.testing.assert_array_equal(d["terminal_observation"],
                                              view(o, np.zeros(58), ref))
                assert d["TimeLimit.truncated"] == trunc
                if not trunc:
                    assert d["penalty"] == info["penalty"] and d["winner"] == info["winner"]
                if deals > 1:
                    assert d["match_score"] == info["match_score"]
                assert d["seat"] == seat and d["end_reason"] != "illegal"
                assert "episode" in d
            else:
                assert infos[b] == {}
                np.testing.assert_array_equal(obs[b], view(o, ref.action_masks(), ref))
    return episodes


@pytest.mark.parametrize("options", [
    {"num_players": 2},
    {"num_players": 3, "num_deals": 2, "features": ("obs", "mask"), "skip_forced": True},
    {"num_players": 4, "max_turns": 30, "reward": "win",
     "mix": {"greedy": 1, lowest_legal: 1}},
    {"num_players": 3, "num_deals": 2, "features": ("obs", "mask"), "version": 1},
])
def test_rewards_and_observations_match_the_reference_env(options):
    assert run_reference_differential(48, seed=len(options), **options) > 30


def test_privileged_critic_features_match_train():
    from pis_env.privileged import privileged_features

    assert run_reference_differential(48, seed=5, num_players=3, features=("obs", "mask"),
                                      skip_forced=True, privileged=True) > 30
    # reshuffled stocks too (rewritten from position 0; shuffled by the engine's own RNG,
    # so compared with the reference position that BatchedGame.game_state rebuilds)
    env = BatchedVecEnv(32, num_players=2, privileged=True, empty_stock="reshuffle",
                        max_turns=400, learner_seat=None, seed=6)
    obs = env.reset()
    game, seats = env.batched_env.game, env.batched_env.learner[:, 0]
    reshuffled = 0
    for t in range(300):
        for b in range(32):
            expected = privileged_features(game.game_state(b), int(seats[b]))
            np.testing.assert_array_equal(obs[b, env.obs_size:], expected)
        reshuffled += int((game.st[:, K.SLEN] < 52).sum())
        obs, _, dones, infos = env.step(pick(env.action_masks(), t))
    assert reshuffled > 0


# ---------------------------------------------------------------------- MaskablePPO
class Watch(BaseCallback):
    """Checks every action against the mask MaskablePPO used, collects the infos."""

    def __init__(self):
        super().__init__()
        self.illegal = 0
        self.steps = 0
        self.ended: list[dict] = []

    def _on_step(self) -> bool:
        masks, actions = self.locals["action_masks"], self.locals["actions"]
        self.illegal += int((masks[np.arange(len(actions)), actions.ravel()] == 0).sum())
        self.steps += len(actions)
        self.ended += [i for i in self.locals["infos"] if "episode" in i]
        return True


def test_maskable_ppo_never_plays_an_illegal_action():
    env = BatchedVecEnv(64, num_players=2, opponent_mix={"random": 1, "greedy": 1},
                        learner_seat=None, features=("obs", "mask"), skip_forced=True,
                        seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=1024, n_epochs=1, seed=0,
                        device="cpu", policy_kwargs={"net_arch": [64, 64]})
    watch = Watch()
    model.learn(4096, callback=watch)
    assert watch.steps >= 4096 and watch.illegal == 0
    assert len(watch.ended) > 50
    assert not [i for i in watch.ended if i["end_reason"] == "illegal" or "illegal_action" in i]
    assert {o for i in watch.ended for o in i["league"]["opponents"]} == {"random", "greedy"}
    assert len(model.ep_info_buffer) > 50  # SB3's episode statistics are fed


def test_an_illegal_learner_action_forfeits_and_is_reported():
    env = BatchedVecEnv(4, num_players=2, opponent="greedy", seed=1)
    env.reset()
    masks = env.action_masks()
    actions = pick(masks, 0)
    actions[2] = int(np.flatnonzero(~masks[2])[0])
    hand = env.batched_env.game.hands()[2, 0]
    _, rewards, dones, infos = env.step(actions)
    assert dones[2] and infos[2]["end_reason"] == "illegal"
    assert infos[2]["illegal_action"] == actions[2]
    assert infos[2]["penalty"] == 3 * points_of(int(hand)) + 100
    assert rewards[2] < -1.0


def test_truncated_matches_are_marked_for_bootstrapping():
    env = BatchedVecEnv(32, num_players=2, max_turns=4, opponent="random", seed=2)
    env.reset()
    ended = []
    for t in range(10):
        _, rewards, dones, infos = env.step(pick(env.action_masks(), t))
        ended += [infos[i] for i in np.flatnonzero(dones)]
        assert (rewards[dones] == 0).all()
    assert ended and all(i["TimeLimit.truncated"] and "league" not in i for i in ended)
    assert all(i["terminal_observation"].shape == (env.observation_space.shape[0],)
               for i in ended)


# ---------------------------------------------------------------------- opponents
def test_mix_draws_each_match_its_own_opponents():
    env = BatchedVecEnv(256, num_players=3, opponent_mix={"random": 3, "greedy": 1},
                        learner_seat=None, seed=4)
    env.reset()
    kinds = env.batched_env.opponent_kinds
    start = kinds.copy()
    seen = []
    for t in range(120):
        _, _, dones, infos = env.step(pick(env.action_masks(), t))
        for b in np.flatnonzero(dones):
            # the finished match was played by the seats drawn when it started
            np.testing.assert_array_equal(env.batched_env.term_kinds[b], start[b])
            seen += infos[b]["league"]["opponents"]
        start[dones] = kinds[dones]
    share = seen.count("random") / len(seen)
    assert len(seen) > 2000 and 0.7 < share < 0.8

    per_game = BatchedVecEnv(256, num_players=4, opponent_mix={"random": 1, "greedy": 1},
                             mix_per="game", seed=5)
    per_game.reset()
    k = per_game.batched_env.opponent_kinds
    assert (k == k[:, :1]).all() and 0 < k[:, 0].mean() < 1


def test_set_opponent_mix_releases_unused_policies():
    calls = []

    def first(obs, masks):
        calls.append("first")
        return lowest_legal(obs, masks)

    def second(obs, masks):
        calls.append("second")
        return lowest_legal(obs, masks)

    env = BatchedVecEnv(32, num_players=2, opponent_mix={first: 1}, seed=6)
    env.reset()
    env.set_opponent_mix({second: 1})
    for t in range(500):
        env.step(pick(env.action_masks(), t))
        if not (env.batched_env.opponent_kinds == K.EXTERNAL).any():
            break
    env.set_opponent_mix({second: 1})  # "first" is no longer used by any game
    assert first not in env.batched_env.policies and second in env.batched_env.policies
    n_first = calls.count("first")
    for t in range(20):
        env.step(pick(env.action_masks(), t))
    assert calls.count("first") == n_first and calls.count("second") > 0


def test_torch_snapshot_opponent_plays_legally_and_matches_sb3():
    env = BatchedVecEnv(128, num_players=3, features=("obs", "mask"), seed=7)
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=256, n_epochs=1, seed=0,
                        device="cpu", policy_kwargs={"net_arch": [32, 32]})
    greedy = TorchPolicy.from_sb3(model, deterministic=True)
    # the snapshot's argmax is SB3's deterministic masked prediction
    obs = env.reset()
    masks = env.action_masks()
    expected, _ = model.predict(obs, action_masks=masks, deterministic=True)
    raw = obs[:, :env.obs_size]
    np.testing.assert_array_equal(greedy(raw, masks.astype(np.int8)), expected)

    checked = {"rows": 0}
    sampler = TorchPolicy.from_sb3(model, deterministic=False, seed=1)

    def checking(obs, masks):
        actions = sampler(obs, masks)
        assert (masks[np.arange(len(actions)), actions] == 1).all()
        checked["rows"] += len(actions)
        return actions

    env2 = BatchedVecEnv(128, num_players=3, opponent=checking, seed=8)
    env2.reset()
    ended = []
    for t in range(100):
        _, _, dones, infos = env2.step(pick(env2.action_masks(), t))
        ended += [infos[b] for b in np.flatnonzero(dones)]
    assert checked["rows"] > 10_000 and len(ended) > 100
    assert not [i for i in ended if i["end_reason"] == "illegal"]
    # the frozen copy does not follow later training
    before = greedy(raw, masks.astype(np.int8))
    with torch.no_grad():
        for p in model.policy.parameters():
            p.add_(1.0)
    np.testing.assert_array_equal(greedy(raw, masks.astype(np.int8)), before)


def test_torch_policy_from_numpy_policy_agrees_with_it(tmp_path):
    from agents.ppo import NumpyPolicy, make_metadata
    from train.common.checkpoint import export_weights

    env = BatchedVecEnv(64, num_players=2, features=("obs", "mask"), seed=9)
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=128, n_epochs=1, seed=0,
                        device="cpu", policy_kwargs={"net_arch": [16]})
    meta = make_metadata(rules={"num_players": 2}, net_arch={"pi": [16], "vf": [16]},
                         activation="tanh", features=["obs", "mask"])
    sd = {k: v.numpy().copy() for k, v in model.policy.state_dict().items()}
    numpy_policy = NumpyPolicy(meta, sd)
    snap = TorchPolicy.from_numpy_policy(numpy_policy, deterministic=True)
    env.reset()
    obs = env.batched_env.obs
    masks = env.batched_env.masks
    expected = [numpy_policy.act(o, m) for o, m in zip(obs, masks)]
    np.testing.assert_array_equal(snap(obs, masks), expected)
    # a weights-only export as an opponent "ppo:PATH": batched, deterministic
    path = tmp_path / "policy.pt"
    export_weights(model.policy.state_dict(), meta, path)
    played = BatchedVecEnv(64, num_players=2, opponent=f"ppo:{path}", seed=9)
    assert isinstance(played.batched_env.policies[0], TorchPolicy)
    played.reset()
    ended = []
    for t in range(60):
        _, _, dones, infos = played.step(pick(played.action_masks(), t))
        ended += [infos[b] for b in np.flatnonzero(dones)]
    assert ended and not [i for i in ended if i["end_reason"] == "illegal"]
    assert {o for i in ended for o in i["league"]["opponents"]} == {f"ppo:{path}"}


def test_heuristic_opponent_is_the_batched_port():
    from agents.heuristic.batched import HeuristicPolicy

    name = "heuristic"
    env = BatchedVecEnv(16, num_players=2, opponent=name, seed=10)
    assert isinstance(env.batched_env.policies[0], HeuristicPolicy)
    env.reset()
    ended = []
    for t in range(60):
        _, _, dones, infos = env.step(pick(env.action_masks(), t))
        ended += [infos[b] for b in np.flatnonzero(dones)]
    assert ended and all(i["league"]["opponents"] == [name] for i in ended)
    assert not [i for i in ended if i["end_reason"] == "illegal"]


# ---------------------------------------------------------------------- train factory
class FakeLeague:
    """What ``make_league_vec_env`` reads of ``train.common.league.League``."""

    def __init__(self, mix):
        self.mix = mix
        self.snapshots = []
        self.snapshot_deterministic = False

    def snapshot_weights(self):
        return np.full(len(self.snapshots), 1.0 / max(len(self.snapshots), 1))


def test_make_league_vec_env_follows_the_league():
    from agents.ppo import NumpyPolicy, make_metadata

    cfg = TrainConfig(n_envs=64, rules={"num_players": 2}, skip_forced=True, win_bonus=0.5,
                      policy=PolicyConfig(features=["obs", "mask"], privileged_critic=False),
                      league=LeagueConfig(learner_seat=None))
    league = FakeLeague({"greedy": 0.5, "self": 0.5})
    env = make_league_vec_env(cfg, league, seed=0)
    assert env.observation_space.shape == (env.obs_size + 58,)
    env.reset()  # no snapshot yet: greedy only
    meta = make_metadata(rules={"num_players": 2}, net_arch={"pi": [8], "vf": [8]},
                         activation="tanh", features=["obs", "mask"])
    rng = np.random.default_rng(0)
    size = env.obs_size + 58
    sd = {"mlp_extractor.policy_net.0.weight": rng.normal(size=(8, size)).astype(np.float32),
          "mlp_extractor.policy_net.0.bias": np.zeros(8, np.float32),
          "action_net.weight": rng.normal(size=(58, 8)).astype(np.float32),
          "action_net.bias": np.zeros(58, np.float32)}
    league.snapshots.append({"id": "snap@100", "step": 100, "policy": NumpyPolicy(meta, sd)})
    results = []
    for t in range(150):
        _, rewards, dones, infos = env.step(pick(env.action_masks(), t))
        for b in np.flatnonzero(dones):
            res = infos[b]["league"]
            results.append(res["opponents"][0])
            assert abs(infos[b]["episode"]["r"]) > 0.4 or res["charges"][0] == res["charges"][1]
    assert {"greedy", "snap@100"} <= set(results)
    assert not [i for i in results if i not in ("greedy", "snap@100")]


def test_make_league_vec_env_with_the_real_league():
    from train.common.league import League

    league = League({"random": 1.0, "heuristic": 1.0})
    cfg = TrainConfig(n_envs=16, rules={"num_players": 3}, skip_forced=False, win_bonus=0.0,
                      policy=PolicyConfig(features=["obs"], privileged_critic=False),
                      league=LeagueConfig(learner_seat=0))
    env = make_league_vec_env(cfg, league, seed=1)
    env.reset()
    for t in range(40):
        _, _, dones, infos = env.step(pick(env.action_masks(), t))
        for b in np.flatnonzero(dones):
            league.record(infos[b]["league"])
    assert set(league.scores) == {"random", "heuristic"}
    v1 = make_league_vec_env(replace(cfg, env_version=1), league, seed=1)
    assert v1.layout_version == 1 and v1.observation_space.shape == (
        Layout.of(3, 1, 1).size,)


def test_agent_policy_runs_any_bot_row_by_row():
    from agents.random_agent import RandomAgent

    env = BatchedVecEnv(8, num_players=3, opponent=AgentPolicy(RandomAgent(3, seed=0)), seed=4)
    env.reset()
    ended = []
    for t in range(80):
        _, _, dones, infos = env.step(pick(env.action_masks(), t))
        ended += [infos[b] for b in np.flatnonzero(dones)]
    assert ended and not [i for i in ended if i["end_reason"] == "illegal"]


# ---------------------------------------------------------------------- mixed tables
def _random_policy_file(tmp_path, version: int, rules: dict, seed: int):
    """A ``train/sb3/run.py`` weights-only policy file of random weights saved at ``version``."""
    from agents.ppo import make_metadata
    from train.common.checkpoint import export_weights

    meta = make_metadata(rules=rules, net_arch={"pi": [16], "vf": [16]}, activation="tanh",
                         features=["obs"], layout_version=version)
    size = Layout.of(rules["num_players"], rules["num_deals"], version).size
    rng = np.random.default_rng(seed)
    shapes = {"mlp_extractor.policy_net.0.weight": (16, size),
              "mlp_extractor.policy_net.0.bias": (16,),
              "action_net.weight": (58, 16), "action_net.bias": (58,)}
    sd = {k: torch.tensor(rng.normal(size=s), dtype=torch.float32) for k, s in shapes.items()}
    path = tmp_path / f"v{version}.pt"
    export_weights(sd, meta, path)
    return path


@pytest.mark.parametrize("learner_version", [0, 1])
def test_v0_and_v1_networks_at_one_table_each_see_their_own_layout(tmp_path, learner_version):
    """Issue 19's mixed tables: a ``ppo:`` policy saved at layout 0 and one saved at layout
    1 sit at one 3-player table with a learner of either layout. On stacked deals, every
    row each network is shown and every learner observation equal what the AEC env of
    that seat's version (``pis_yedili_v0`` / ``pis_yedili_v1``, an independent encoder,
    both stepped by the same actions) shows that seat."""
    from pis_env import pis_yedili_v0, pis_yedili_v1

    rules = {"num_players": 3, "num_deals": 2}
    paths = {v: _random_policy_file(tmp_path, v, rules, seed=v) for v in (0, 1)}
    env = BatchedVecEnv(1, opponent=["random", f"ppo:{paths[0]}", f"ppo:{paths[1]}"],
                        learner_seat=0, layout_version=learner_version, seed=0, **rules)
    benv = env.batched_env
    refs = {0: pis_yedili_v0.raw_env(**rules), 1: pis_yedili_v1.raw_env(**rules)}
    shown = {0: 0, 1: 0}

    def seat_view(version: int, seat: int):
        want = refs[version].observe(f"player_{seat}")
        return want["observation"], want["action_mask"]

    class Checked:
        """A seat's network, its every input checked against its version's AEC env."""

        def __init__(self, policy, seat: int):
            self.policy, self.seat = policy, seat
            self.layout_version = policy.layout_version

        def __call__(self, obs, masks):
            actions = self.policy(obs, masks)
            if refs[0].game.match_over:  # the next match (auto-reset): not a stacked one
                return actions
            assert refs[0].agent_selection == f"player_{self.seat}"
            want_obs, want_mask = seat_view(self.layout_version, self.seat)
            np.testing.assert_array_equal(obs[0], want_obs)
            np.testing.assert_array_equal(masks[0], want_mask)
            shown[self.layout_version] += 1
            for ref in refs.values():
                ref.step(int(actions[0]))
            return actions

    for seat, version in ((1, 0), (2, 1)):
        i = benv.opponent_kinds[0, seat] - K.EXTERNAL
        assert benv.policies[i].layout_version == version
        benv.policies[i] = Checked(benv.policies[i], seat)
    decks, dealers = stacked_deals(8, 5, 3, 2)
    matches = 0
    for m in range(len(decks)):
        for ref in refs.values():
            ref.reset(options={"deck": decks[m].tolist(), "dealer": int(dealers[m])})
        obs = env.reset(decks=decks[m:m + 1], dealers=dealers[m:m + 1])
        for t in range(400):
            assert refs[0].agent_selection == "player_0"
            want_obs, want_mask = seat_view(learner_version, 0)
            np.testing.assert_array_equal(obs[0], want_obs)
            np.testing.assert_array_equal(env.action_masks()[0], want_mask.astype(bool))
            action = pick(env.action_masks(), t)
            for ref in refs.values():
                ref.step(int(action[0]))
            obs, _, dones, infos = env.step(action)
            if dones[0]:
                assert refs[0].game.match_over
                np.testing.assert_array_equal(infos[0]["terminal_observation"],
                                              seat_view(learner_version, 0)[0])
                matches += 1
                break
    assert matches == len(decks) and min(shown.values()) > 100


def test_a_v1_agent_row_by_row_at_a_v0_table_is_shown_v1(tmp_path):
    """``AgentPolicy`` forwards its agent's ``layout_version``: a v1 ``PPOAgent`` (which
    refuses any other layout) plays a v0 learner's table; a layout-1 policy that joins a
    table keeping no public record is refused, naming the way out."""
    from agents.ppo import PPOAgent

    rules = {"num_players": 3, "num_deals": 1}
    agent = PPOAgent(_random_policy_file(tmp_path, 1, rules, seed=3), 3, 1)
    env = BatchedVecEnv(8, opponent=AgentPolicy(agent), learner_seat=0, seed=2, **rules)
    assert env.layout_version == 0 and env.batched_env.game.public is not None
    env.reset()
    ended = 0
    for t in range(40):
        _, _, dones, _ = env.step(pick(env.action_masks(), t))
        ended += int(dones.sum())
    assert ended > 3
    plain = BatchedVecEnv(4, opponent="greedy", seed=2, **rules)
    with pytest.raises(ValueError, match="public_record=True"):
        plain.set_opponent_mix({AgentPolicy(agent): 1.0})


def test_model_set_opponents_play_on_their_numba_ports():
    """A league of the opponent panel's model set trains at the batched engine's speed: each
    style is its ``PanelPolicy`` port (not the Python bot, one game at a time)."""
    from agents.panel.batched import PanelPolicy
    from train.vector.learner_batch import LearnerBatch

    mix = {"hoarder": 1, "greedy_eps": 1, "heuristic": 1}
    batch = LearnerBatch(16, num_players=2, opponent_mix=mix, features=("obs", "mask"),
                         seed=3)
    assert isinstance(batch._bots["hoarder"], PanelPolicy)
    assert (batch._bots["greedy_eps"].name, batch._bots["greedy_eps"].epsilon > 0) == (
        "greedy_eps", True)
    for _ in range(50):
        legal = batch.env.masks
        batch.step(np.argmax(legal, axis=1))
