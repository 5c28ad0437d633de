"""Training on ``pis_yedili_v1`` (``env_version: 1``): what the learner is shown, what its
files record, where its policy plays, and the errors of mixing layouts (a v0 checkpoint,
initial policy or data set in a v1 run). v0 network opponents keep their own layout.

Every reference here is another code path than the one under test: the learner's and the
opponents' observations are compared with a ``pis_yedili_v1`` / ``pis_yedili_v0`` AEC env
stepped through the same moves by the test itself."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

import agents
from agents.ppo import PolicyLoadError, PPOAgent, read_policy
from agents.tournament import run_tournament
from pis_env import NUM_ACTIONS, pis_yedili_v0, pis_yedili_v1
from pis_env.observation import Layout
from train.common.checkpoint import CheckpointError, IncompatibleCheckpointError, latest_checkpoint
from train.common.league import League, LeagueEnv
from train.sb3 import config as C
from train.sb3.run import run

from .test_train import tiny_config

ROOT = Path(__file__).resolve().parents[3]
V0_POLICY = str(ROOT / "models" / "ppo_2p.zip")  # the shipped v3 bot: layout 0
L0, L1 = Layout.of(2, 1, 0).size, Layout.of(2, 1, 1).size


@pytest.fixture(scope="module")
def v1_run(tmp_path_factory):
    """A tiny v1 run: heuristic imitation, then PPO against random, its own snapshots and
    the v0 shipped network."""
    tmp = tmp_path_factory.mktemp("v1run")
    cfg = tiny_config(tmp, "env_version=1", "total_timesteps=1024",
                      f"league.opponents={{random: 1, self: 1, 'ppo:{V0_POLICY}': 1}}",
                      "pretrain.teacher=heuristic", "pretrain.decisions=400",
                      "pretrain.epochs=1", "policy.privileged_critic=true")
    summary = run(cfg, verbose=False)
    assert summary["status"] == "finished"
    return summary


def reference_observations(module, rules: dict, seed: int, history, seats):
    """The observation ``module``'s AEC env (``pis_yedili_v0``/``v1``) shows ``seat`` before
    each move of ``history`` that ``seats`` names: the same deal (``seed``) stepped through
    the same actions."""
    env = module.env(**rules)
    env.reset(seed=seed)
    out = []
    for player, action in history:
        if player in seats:
            out.append(env.observe(env.possible_agents[player])["observation"])
        env.step(int(action))
    return out


# ---------------------------------------------------------------------- the run's files
def test_a_v1_run_records_layout_1_everywhere(v1_run):
    for path in (v1_run["policy"], v1_run["policy_pt"]):
        meta, arrays = read_policy(path)
        assert (meta["layout_version"], meta["layout_size"]) == (1, L1), path
        first = arrays["mlp_extractor.policy_net.0.weight"]
        assert first.shape[1] == L1 + NUM_ACTIONS  # the actor reads the v1 observation
    ckpt = latest_checkpoint(Path(v1_run["run_dir"]))
    state = json.loads((ckpt / "state.json").read_text())
    assert (state["layout_version"], state["layout_size"]) == (1, L1)
    saved = yaml.safe_load((Path(v1_run["run_dir"]) / "config.yaml").read_text())
    assert saved["env_version"] == 1
    with zipfile.ZipFile(v1_run["policy"]) as archive:
        assert json.loads(archive.read("pis_yedili.json"))["layout_version"] == 1


def test_a_v1_policy_plays_at_v1_tables_only(v1_run):
    bots = [agents.make("ppo", path=v1_run["policy"], seed=s) for s in range(2)]
    assert bots[0].layout_version == 1
    env = pis_yedili_v1.env(num_players=2)
    for deal in range(3):
        env.reset(seed=deal)
        while not env.unwrapped.game.deal_over:
            obs = env.observe(env.agent_selection)
            action = bots[env.possible_agents.index(env.agent_selection)].act(obs)
            assert obs["action_mask"][action] == 1
            env.step(action)
    v0 = pis_yedili_v0.env(num_players=2)
    v0.reset(seed=0)
    with pytest.raises(ValueError, match=r"layout version 1 .*layout version 0"):
        bots[0].act(v0.observe(v0.agent_selection))
    # a tournament seats it at its own layout next to a v0 network and a rule-based bot
    result = run_tournament([f"ppo:{v1_run['policy']}", f"ppo:{V0_POLICY}", "heuristic"],
                            num_players=2, deals=4, seed=1, workers=1, progress=False)
    assert all(result.stats[a].games == 16 for a in result.agents)


# ---------------------------------------------------------------------- what is shown
def test_the_learner_sees_v1_and_a_v0_network_opponent_sees_v0(monkeypatch):
    """LeagueEnv at env_version 1 against the shipped v0 network: the learner's
    observations are those a ``pis_yedili_v1`` env of the same deal and moves shows, the
    opponent's those a ``pis_yedili_v0`` env shows."""
    seen_by_opponent: list[np.ndarray] = []
    real_act = PPOAgent.act

    def spy(self, observation):
        seen_by_opponent.append(np.array(observation["observation"]))
        return real_act(self, observation)

    monkeypatch.setattr(PPOAgent, "act", spy)
    rules = {"num_players": 2}
    env = LeagueEnv(League({f"ppo:{V0_POLICY}": 1.0}), rules, features=("obs",),
                    learner_seat=0, seed=5, env_version=1)
    assert env.observation_space.shape == (L1,)
    rng = np.random.default_rng(0)
    for seed in range(100, 103):
        seen_by_opponent.clear()
        obs, _ = env.reset(seed=seed)
        shown, done = [obs], False
        while not done:
            obs, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(
                env.action_masks()))))
            done = term or trunc
            if not done:
                shown.append(obs)
        history = list(env.inner.game.history)
        learner = reference_observations(pis_yedili_v1, rules, seed, history, {0})
        np.testing.assert_array_equal(np.array(shown), np.array(learner))
        opponent = reference_observations(pis_yedili_v0, rules, seed, history, {1})
        assert len(opponent) > 0 and all(o.shape == (L0,) for o in seen_by_opponent)
        np.testing.assert_array_equal(np.array(seen_by_opponent), np.array(opponent))


# ---------------------------------------------------------------------- layout mixing errors
def test_resuming_a_v0_checkpoint_into_a_v1_run_is_a_clear_error(tmp_path):
    summary = run(tiny_config(tmp_path, "total_timesteps=512"), verbose=False)
    run_dir = Path(summary["run_dir"])
    before = sorted(p.name for p in (run_dir / "checkpoints").iterdir())
    config_text = (run_dir / "config.yaml").read_text()
    with pytest.raises(C.ConfigError, match="cannot change env_version"):
        run(resume=run_dir, overrides=["env_version=1"], verbose=False)
    assert (run_dir / "config.yaml").read_text() == config_text  # nothing saved
    # a config edited by hand: the checkpoint itself says layout 0
    saved = yaml.safe_load(config_text)
    saved["env_version"] = 1
    (run_dir / "config.yaml").write_text(yaml.safe_dump(saved))
    with pytest.raises(IncompatibleCheckpointError,
                       match=r"layout version 0 \(pis_yedili_v0.*layout version 1 "
                             r"\(env_version=1"):
        run(resume=run_dir, verbose=False)
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == before


def test_a_v0_initial_policy_or_data_in_a_v1_run_is_refused_up_front(tmp_path):
    with pytest.raises(C.ConfigError,
                       match=r"layout version 0 .*layout version 1.*init_widen=true"):
        run(tiny_config(tmp_path, "env_version=1", f"init_policy={V0_POLICY}",
                        name="init"), verbose=False)
    assert not (tmp_path / "init").exists()
    data = tmp_path / "v0.npz"
    np.savez(data, obs=np.zeros((3, L0), np.float32), mask=np.ones((3, 58), np.int8),
             privileged=np.zeros((3, 4), np.float32), action=np.zeros(3, np.int16),
             returns=np.zeros(3, np.float32))
    with pytest.raises(C.ConfigError, match=r"layout version 0's size.*env_version=1"):
        run(tiny_config(tmp_path, "env_version=1", f"pretrain.data=[{data}]", name="data"),
            verbose=False)
    assert not (tmp_path / "data").exists()


def test_env_version_key():
    assert C.build(None, []).env_version == 0  # shipped recipes reproduce
    assert "env_version: int = 0  (one of 0, 1)" in C.help_text()
    with pytest.raises(C.ConfigError, match="env_version=2: allowed values are 0, 1"):
        C.build(None, ["env_version=2"])
    # v1's own segments may be hidden from the actor only when training on v1
    C.build(None, ["env_version=1", "policy.hide_from_actor=[event_seat]"])
    with pytest.raises(C.ConfigError, match="unknown observation segment"):
        C.build(None, ["policy.hide_from_actor=[event_seat]"])


def test_a_v1_policy_is_refused_by_a_v0_run(v1_run, tmp_path):
    with pytest.raises((C.ConfigError, CheckpointError, PolicyLoadError),
                       match=r"layout version 1 .*layout version 0"):
        run(tiny_config(tmp_path, f"init_policy={v1_run['policy']}"), verbose=False)


def test_init_widen_starts_a_v1_network_that_plays_as_the_v0_one(tmp_path):
    """``init_widen``: the shipped v0 network, widened with zero weights on v1's new
    columns, chooses at v1 positions what it chooses at the same v0 positions (each from
    its own env), and a v1 run starts from it."""
    from agents.ppo import NumpyPolicy, load_policy
    from train.common.checkpoint import read_initial_policy

    cfg = tiny_config(tmp_path, "env_version=1", f"init_policy={V0_POLICY}",
                      "init_widen=true", "policy.net_arch=[256,256]",
                      "policy.privileged_critic=true", "total_timesteps=512", name="wide")
    state, norm = read_initial_policy(V0_POLICY, cfg)
    meta, _ = read_policy(V0_POLICY)
    wide = NumpyPolicy({**meta, "layout_version": 1, "layout_size": L1,
                        "input_size": L1 + NUM_ACTIONS},
                       {k: v.numpy() for k, v in state.items()})
    old = load_policy(V0_POLICY, 2)
    rng = np.random.default_rng(2)
    count = 0
    for deal in range(4):
        v0, v1 = pis_yedili_v0.env(num_players=2), pis_yedili_v1.env(num_players=2)
        v0.reset(seed=deal)
        v1.reset(seed=deal)
        while not v0.unwrapped.game.deal_over:
            a, b = v0.observe(v0.agent_selection), v1.observe(v1.agent_selection)
            np.testing.assert_allclose(
                wide.probabilities(b["observation"], b["action_mask"]),
                old.probabilities(a["observation"], a["action_mask"]), atol=1e-6)
            count += 1
            action = int(rng.choice(np.flatnonzero(a["action_mask"])))
            v0.step(action)
            v1.step(action)
    assert count > 50 and norm is None
    summary = run(cfg, verbose=False)
    assert read_policy(summary["policy"])[0]["layout_version"] == 1


def test_a_v1_run_on_the_batched_engine(tmp_path):
    """vec_env=batched at env_version 1: the heuristic teacher's warm start, the shipped
    v0 network and the learner's snapshots as opponents, a policy of layout 1."""
    from train.vector.sb3_vec_env import make_league_vec_env

    cfg = C.build(None, [
        "n_envs=32", "ppo.n_steps=32", "ppo.batch_size=1024", "eval.deals=0",
        "log.tensorboard=false", "log.progress=false", "max_minutes=null",
        f"league.opponents={{self: 1, 'ppo:{V0_POLICY}': 1}}", "league.snapshot_every=1024",
        "pretrain.decisions=1000", "pretrain.epochs=1", "env_version=1",
        "total_timesteps=2048", f"run_dir={tmp_path / 'batched'}"])
    games = make_league_vec_env(cfg, League.from_config(cfg.league), 0)
    assert games.layout_version == 1 and games.obs_size == L1
    summary = run(cfg, verbose=False)
    meta, _ = read_policy(summary["policy"])
    assert (meta["layout_version"], meta["layout_size"]) == (1, L1)


def test_the_v4_recipe_resolves_and_passes_preflight():
    """configs/ppo_2p_v4.yaml: a v1 run from the widened v3 bot, checked as a run is
    before its directory exists (every opponent seated, the initial policy read)."""
    from train.common.preflight import check_run

    cfg = C.build(ROOT / "configs" / "ppo_2p_v4.yaml")
    assert (cfg.env_version, cfg.init_widen, cfg.pretrain.teacher) == (1, True, None)
    assert cfg.max_minutes <= 120 and cfg.run_dir == "runs/v4_2p"
    check_run(cfg)


def v0_games(cfg: dict, league, seed: int):
    """A VecEnv factory that ignores env_version (the v0 table whatever the config says)."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    return DummyVecEnv([lambda: LeagueEnv(league, cfg.rules, features=("obs", "mask"),
                                          seed=seed)])


def test_a_vec_env_of_another_layout_is_refused(tmp_path):
    cfg = tiny_config(tmp_path, "env_version=1", f"vec_env={__name__}:v0_games",
                      "total_timesteps=512")
    with pytest.raises(C.ConfigError, match=rf"{L0 + NUM_ACTIONS} entries.*needs "
                                            rf"{L1 + NUM_ACTIONS}.*pis_yedili_v1"):
        run(cfg, verbose=False, trusted_modules=[__name__])


@pytest.mark.parametrize("overrides", [[], ["init_policy=null", "pretrain.teacher=heuristic"]])
def test_the_best_response_recipe_plays_the_frozen_bot_alone(overrides):
    """configs/best_response_2p.yaml, from the bot and from the heuristic's imitation: a
    30-minute v1 run whose only opponent, and only evaluation opponent, is the shipped
    bot, checked as a run is before its directory exists."""
    from train.common.preflight import check_run

    cfg = C.build(ROOT / "configs" / "best_response_2p.yaml", overrides)
    frozen = "ppo:models/ppo_2p.zip"
    assert cfg.league.opponents == {frozen: 1.0} and cfg.eval.opponents == [frozen]
    assert cfg.max_minutes == 30 and cfg.env_version == 1
    check_run(cfg)
