"""PPO training: smoke run, interrupt and resume, saved policies, config and file errors.

Every training here is tiny (a few thousand steps of a small network against random
opponents) so the module runs in seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import agents
from agents.ppo import PolicyLoadError, read_policy
from pis_env import raw_env
from pis_env.observation import LAYOUT_VERSION, Layout
from tests.train.conftest import chance_accuracy
from train.common.checkpoint import CheckpointError, latest_checkpoint
from train.sb3 import config as C
from train.sb3.run import run

ROOT = Path(__file__).resolve().parents[3]

TINY = [
    "vec_env=dummy", "n_envs=2", "ppo.n_steps=256", "ppo.batch_size=256", "ppo.n_epochs=1",
    "policy.net_arch=[32,32]", "eval.deals=0", "log.tensorboard=false", "log.progress=false",
    "league.opponents={random: 1}", "checkpoint.every=1024", "league.snapshot_every=512",
    "pretrain.teacher=null", "max_minutes=null", "policy.privileged_critic=false",
    "win_bonus=0",
]


def tiny_config(tmp_path: Path, *extra: str, name: str = "run") -> dict:
    return C.build(None, [*TINY, f"run_dir={tmp_path / name}", *extra])


class StopAt:
    """An SB3 callback raising KeyboardInterrupt (like Ctrl-C) at a step count."""

    def __new__(cls, step: int):
        from stable_baselines3.common.callbacks import BaseCallback

        class _Stop(BaseCallback):
            def _on_step(self) -> bool:
                if self.num_timesteps >= step:
                    raise KeyboardInterrupt
                return True

        return _Stop()


def play_deals(policy_path, num_players: int, deals: int = 3) -> int:
    """Plays whole deals with the policy in every seat; the env raises on illegal moves."""
    env = raw_env(num_players=num_players)
    bots = [agents.make("ppo", path=str(policy_path), num_players=num_players, seed=s)
            for s in range(num_players)]
    moves = 0
    for d in range(deals):
        env.reset(seed=d)
        while not env.game.deal_over:
            agent = env.agent_selection
            obs = env.observe(agent)
            action = bots[env.possible_agents.index(agent)].act(obs)
            assert obs["action_mask"][action] == 1
            env.step(action)
            moves += 1
    return moves


@pytest.fixture(scope="module")
def trained_2p(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("train2p")
    cfg = tiny_config(tmp, "total_timesteps=2048", "league.opponents={random: 1, self: 1}")
    summary = run(cfg, verbose=False)
    return summary


# ---------------------------------------------------------------------- smoke + policy
def test_smoke_run_writes_everything(trained_2p):
    s = trained_2p
    assert s["status"] == "finished"
    assert s["num_timesteps"] == 2048
    run_dir = Path(s["run_dir"])
    for name in ("config.yaml", "policy.zip", "policy.pt", "summary.json"):
        assert (run_dir / name).is_file(), name
    saved = C.load_file(run_dir / "config.yaml")
    assert saved["total_timesteps"] == 2048
    assert saved["rules"]["num_players"] == 2  # the resolved rules are saved in full
    state = json.loads((latest_checkpoint(run_dir) / "state.json").read_text())
    assert state["num_timesteps"] == 2048
    assert state["layout_version"] == LAYOUT_VERSION  # what a resume checks against
    assert state["layout_size"] == Layout.of(2).size
    assert state["rules"]["draw_rule"] == "free"


@pytest.mark.parametrize("suffix", ["zip", "pt"])
def test_saved_policy_plays_legal_2p(trained_2p, suffix):
    path = Path(trained_2p["run_dir"]) / f"policy.{suffix}"
    assert play_deals(path, 2) > 0
    # stochastic play is legal too
    bot = agents.make("ppo", path=str(path), deterministic=False, seed=1)
    env = raw_env()
    env.reset(seed=5)
    while not env.game.deal_over:
        env.step(bot.act(env.observe(env.agent_selection)))


def test_zip_and_pt_agree_with_the_sb3_policy(trained_2p):
    import torch
    from sb3_contrib import MaskablePPO

    run_dir = Path(trained_2p["run_dir"])
    model = MaskablePPO.load(run_dir / "policy.zip", device="cpu")
    a_zip = agents.make("ppo", path=str(run_dir / "policy.zip"))
    a_pt = agents.make("ppo", path=str(run_dir / "policy.pt"))
    env = raw_env()
    for seed in range(3):
        env.reset(seed=seed)
        while not env.game.deal_over:
            obs = env.observe(env.agent_selection)
            x = np.concatenate([obs["observation"], obs["action_mask"].astype(np.float32)])
            with torch.no_grad():
                dist = model.policy.get_distribution(torch.as_tensor(x[None]),
                                                     action_masks=obs["action_mask"][None])
                expected = int(dist.distribution.probs.argmax())
            assert a_zip.act(obs) == a_pt.act(obs) == expected
            env.step(expected)


def test_policy_for_4_players(tmp_path, monkeypatch):
    cfg = tiny_config(tmp_path, "total_timesteps=1024", "num_players=4",
                      "league.opponents={random: 1, self: 1}")
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temp))
    s = run(cfg, verbose=False)
    assert s["status"] == "finished"
    assert list(temp.glob("SB3-*")) == []  # no folder left behind by SB3's default logger
    assert play_deals(s["policy"], 4) > 0
    assert play_deals(s["policy_pt"], 4) > 0
    with pytest.raises(PolicyLoadError, match="4 players"):
        agents.make("ppo", path=s["policy"], num_players=2)


def test_export_command(trained_2p, tmp_path):
    from train.common.export import main

    out = tmp_path / "exported.pt"
    assert main([trained_2p["run_dir"], str(out)]) == 0
    meta, state = read_policy(out)
    meta0, state0 = read_policy(Path(trained_2p["run_dir"]) / "policy.zip")
    assert meta == meta0
    assert all(np.array_equal(state[k], state0[k]) for k in state0)


def test_same_seed_same_weights(tmp_path):
    a = run(tiny_config(tmp_path, "total_timesteps=1024", name="a"), verbose=False)
    b = run(tiny_config(tmp_path, "total_timesteps=1024", name="b"), verbose=False)
    _, wa = read_policy(a["policy_pt"])
    _, wb = read_policy(b["policy_pt"])
    assert all(np.array_equal(wa[k], wb[k]) for k in wa)


# ---------------------------------------------------------------------- resume
def test_interrupt_then_resume_continues(tmp_path):
    import torch

    cfg = tiny_config(tmp_path, "total_timesteps=3072", "league.opponents={random: 1, self: 1}")
    first = run(cfg, callbacks=[StopAt(1200)], verbose=False)
    assert first["status"] == "interrupted"
    run_dir = Path(first["run_dir"])
    ckpt = latest_checkpoint(run_dir)
    state = json.loads((ckpt / "state.json").read_text())
    stopped = state["num_timesteps"]
    assert stopped == 1024  # the partial rollout is discarded with its steps
    pool = torch.load(ckpt / "league.pt", weights_only=True)
    assert [s["id"] for s in pool["snapshots"]] == ["snap@0", "snap@512", "snap@1024"]
    saved_opt = torch.load(ckpt / "optimizer.pt", weights_only=True)["optimizer"]
    assert saved_opt["state"]  # Adam moments exist: they must come back on resume
    assert not (ckpt / "model.zip").exists()  # nothing pickled in a checkpoint

    seen = {}
    from stable_baselines3.common.callbacks import BaseCallback

    class Probe(BaseCallback):
        def _on_training_start(self) -> None:
            seen["start"] = self.model.num_timesteps
            opt = self.model.policy.optimizer.state_dict()
            seen["opt_equal"] = all(
                torch.equal(opt["state"][k]["exp_avg"], saved_opt["state"][k]["exp_avg"])
                for k in saved_opt["state"])

        def _on_step(self) -> bool:
            return True

    second = run(resume=run_dir, callbacks=[Probe()], verbose=False)
    assert second["status"] == "finished"
    assert seen["start"] == stopped
    assert seen["opt_equal"]
    assert second["num_timesteps"] == 3072
    pool = torch.load(latest_checkpoint(run_dir) / "league.pt", weights_only=True)
    ids = [s["id"] for s in pool["snapshots"]]
    assert ids[:3] == ["snap@0", "snap@512", "snap@1024"] and "snap@2560" in ids
    # nothing is left half-written
    assert not list((run_dir / "checkpoints").glob(".tmp-*"))


def test_resume_can_extend_a_finished_run(trained_2p, tmp_path):
    import shutil

    run_dir = tmp_path / "extended"
    shutil.copytree(trained_2p["run_dir"], run_dir)
    s = run(resume=run_dir, overrides=["total_timesteps=2560"], verbose=False)
    assert s["num_timesteps"] == 2560
    with pytest.raises(C.ConfigError, match="cannot change"):
        run(resume=run_dir, overrides=["num_players=3"], verbose=False)


# ---------------------------------------------------------------------- config errors
@pytest.mark.parametrize("override, words", [
    ("learnin_rate=0.1", ["learnin_rate", "learning_rate"]),
    ("ppo.n_step=64", ["ppo.n_step", "ppo.n_steps"]),
    ("total_timestep=5", ["total_timesteps"]),
    ("rules.draw_rul=one", ["draw_rule"]),
    ("leage.opponents={random: 1}", ["league.opponents"]),
])
def test_unknown_key_names_the_nearest(override, words):
    with pytest.raises(C.ConfigError) as e:
        C.build(None, [override])
    for w in words:
        assert w in str(e.value)


@pytest.mark.parametrize("override, words", [
    ("n_envs=abc", ["n_envs", "int"]),
    ("n_envs=0", ["n_envs", "> 0"]),
    ("ppo.gamma=1.5", ["ppo.gamma"]),
    ("policy.activation=sigmoid", ["tanh", "relu"]),
    ("policy.net_arch=[64,-1]", ["net_arch"]),
    ("rules.draw_rule=sometimes", ["draw_rule", "until_playable"]),
    ("num_players=9", ["num_players"]),
    ("league.opponents={heuristc: 1}", ["heuristic"]),
    ("eval.opponents=[randm]", ["random"]),
    ("vec_env=threads", ["dummy", "subproc"]),
    ("log.progress=maybe", ["log.progress", "bool"]),
])
def test_bad_values_are_clear(override, words):
    with pytest.raises(C.ConfigError) as e:
        C.build(None, [override])
    for w in words:
        assert w in str(e.value)


def test_overrides_and_files(tmp_path):
    cfg = C.build(None, ["learning_rate=1e-4", "rules.seven_penalty=double", "num_players=3",
                         "total_timesteps=2e5"])
    assert cfg.ppo.learning_rate == 1e-4
    assert cfg.total_timesteps == 200000 and isinstance(cfg.total_timesteps, int)
    assert cfg.rules["seven_penalty"] == "double" and cfg.rules["num_players"] == 3
    rules = tmp_path / "r.yaml"
    rules.write_text("draw_rule: one\nnum_players: 3\n")
    cfg = C.build(None, [f"rules={rules}", "num_players=null"])
    assert cfg.rules["draw_rule"] == "one" and cfg.num_players == 3
    base = tmp_path / "base.yaml"
    base.write_text("seed: 7\nppo:\n  n_epochs: 3\n")
    child = tmp_path / "child.yaml"
    child.write_text("extends: base.yaml\nppo:\n  batch_size: 128\n")
    cfg = C.build(child)
    assert (cfg.seed, cfg.ppo.n_epochs, cfg.ppo.batch_size) == (7, 3, 128)
    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo:\n  learnig_rate: 1\n")
    with pytest.raises(C.ConfigError, match="ppo.learning_rate"):
        C.build(bad)


@pytest.mark.parametrize("name", ["ppo_2p.yaml", "ppo_4p.yaml", "ppo_2p_long.yaml",
                                  "ppo_4p_long.yaml"])
def test_shipped_configs_resolve(name):
    """Each shipped PPO config builds, for the table its name promises."""
    cfg = C.build(ROOT / "configs" / name)
    assert cfg.rules["num_players"] == int(name[len("ppo_")])
    assert cfg.total_timesteps > 0 and cfg.n_envs >= 1


def test_default_config_is_the_embedded_default():
    assert C.build(ROOT / "configs" / "ppo_2p.yaml") == C.build(None)


@pytest.mark.parametrize("players", [2, 4])
def test_expert_iteration_configs_that_made_the_shipped_bots_resolve(players):
    """configs/expert_iteration_{2p,4p}.yaml (the recipe of models/ppo_{2p,4p}.zip) load
    through expert iteration's config loader; the bot they start from exists and plays at
    their table; each iteration's train stage resolves to a PPO config for that table."""
    from train.expert import iteration as EI

    cfg = EI.load_config(ROOT / "configs" / f"expert_iteration_{players}p.yaml")
    assert cfg.iterations >= 1 and cfg.games >= 1
    init = ROOT / cfg.init_policy
    assert init.is_file(), init
    assert read_policy(str(init))[0]["num_players"] == players
    stage = EI.ppo_config(cfg)
    assert stage.rules["num_players"] == players
    assert stage.pretrain.epochs == cfg.ppo["pretrain"]["epochs"]  # overrides apply


# ---------------------------------------------------------------------- file errors
def test_missing_and_corrupt_policy_files(trained_2p, tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.zip"):
        agents.make("ppo", path=str(tmp_path / "nope.zip"))
    src = Path(trained_2p["run_dir"]) / "policy.zip"
    data = src.read_bytes()
    cut = tmp_path / "cut.zip"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(PolicyLoadError, match="cut.zip"):
        agents.make("ppo", path=str(cut))
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a torch file at all")
    with pytest.raises(PolicyLoadError, match="junk.pt"):
        agents.make("ppo", path=str(junk))
    # an SB3 archive whose weights are damaged
    bad = tmp_path / "bad_weights.zip"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(bad, "w") as zout:
        for item in zin.namelist():
            content = zin.read(item)
            zout.writestr(item, b"garbage" if item == "policy.pth" else content)
    with pytest.raises(PolicyLoadError, match="corrupt"):
        agents.make("ppo", path=str(bad))


def _rewrite_meta(src: Path, dst: Path, **changes) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.namelist():
            content = zin.read(item)
            if item == "pis_yedili.json":
                meta = json.loads(content)
                meta.update(changes)
                content = json.dumps(meta).encode()
            zout.writestr(item, content)


def test_layout_mismatch_is_refused(trained_2p, tmp_path):
    src = Path(trained_2p["run_dir"]) / "policy.zip"
    with pytest.raises(PolicyLoadError, match="2 players"):
        agents.make("ppo", path=str(src), num_players=3)
    old = tmp_path / "old_layout.zip"
    _rewrite_meta(src, old, layout_version=-1)
    with pytest.raises(PolicyLoadError, match="layout version"):
        agents.make("ppo", path=str(old))
    plain = tmp_path / "plain.zip"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(plain, "w") as zout:
        for item in zin.namelist():
            if item != "pis_yedili.json":
                zout.writestr(item, zin.read(item))
    # without the project's metadata the archive is read as any SB3 model would be: its
    # input (observation, privileged features and mask) fits no observation layout
    with pytest.raises(PolicyLoadError, match="no observation layout"):
        agents.make("ppo", path=str(plain))


def test_checkpoint_errors(trained_2p, tmp_path):
    import shutil

    with pytest.raises(CheckpointError, match="not found"):
        latest_checkpoint(tmp_path / "missing")
    run_dir = tmp_path / "copy"
    shutil.copytree(trained_2p["run_dir"], run_dir)
    state_path = latest_checkpoint(run_dir) / "state.json"
    state = json.loads(state_path.read_text())
    state["layout_version"] = state["layout_version"] + 1
    state_path.write_text(json.dumps(state))
    with pytest.raises(CheckpointError, match="layout version"):
        run(resume=run_dir, verbose=False)
    state_path.write_text("{ not json")  # the older checkpoint is used, with a warning
    with pytest.warns(UserWarning, match="skipped: .*corrupt state.json"):
        assert run(resume=run_dir, verbose=False)["status"] == "finished"
    for path in (run_dir / "checkpoints").glob("step_*"):
        (path / "state.json").write_text("{ not json")
    with pytest.raises(CheckpointError, match="no intact checkpoint"):
        run(resume=run_dir, verbose=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.yaml").write_text((run_dir / "config.yaml").read_text())
    with pytest.raises(CheckpointError, match="no checkpoint"):
        run(resume=empty, verbose=False)


# ---------------------------------------------------------------------- entry points
@pytest.mark.parametrize("argv", [
    [str(ROOT / "train" / "ppo.py")],
    ["-m", "train.sb3.run"],
])
def test_entry_points_run_from_any_directory(tmp_path, argv):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, *argv, "--print-config", "num_players=3"],
                         cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "num_players: 3" in out.stdout
    bad = subprocess.run([sys.executable, *argv, "--print-config", "lerning_rate=1"],
                         cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2
    assert "ppo.learning_rate" in bad.stderr


# ---------------------------------------------------------------------- warm start, reward
def test_pretrain_then_ppo(tmp_path, imitation_data):
    """Imitating greedy beats picking uniformly among the legal moves on the same
    decisions (about 0.49) by a margin a pretraining that learns nothing cannot reach."""
    cfg = tiny_config(tmp_path, "total_timesteps=512", "pretrain.teacher=greedy",
                      "pretrain.decisions=3000", "pretrain.epochs=2", "win_bonus=0.5")
    s = run(cfg, verbose=False)
    assert s["status"] == "finished"
    state = json.loads((latest_checkpoint(Path(s["run_dir"])) / "state.json").read_text())
    (data,) = imitation_data
    chance = chance_accuracy(data)
    print(f"imitation accuracy {state['pretrain']['accuracy']:.3f}, chance {chance:.3f}")
    assert state["pretrain"]["accuracy"] > chance + 0.15


def test_win_share():
    from train.common.league import win_share as _win_share

    assert _win_share([0, 30]) == 1.0
    assert _win_share([30, 0]) == -1.0
    assert _win_share([0, 0]) == 0.0
    assert _win_share([0, 5, 0, 9]) == 0.5
    assert _win_share([5, 0, 9, 7]) == -1.0 / 3


def test_league_sampling_and_priorities():
    from agents.ppo import NumpyPolicy
    from train.common.league import League

    league = League({"random": 1.0, "self": 1.0}, pool_size=2)
    rng = np.random.default_rng(0)
    assert set(league.sample_keys(rng, 50)) == {"random"}  # empty pool: bots only
    dummy = NumpyPolicy.__new__(NumpyPolicy)
    for step in (0, 10, 20):
        league.add_snapshot(step, dummy)
    assert [s["id"] for s in league.snapshots] == ["snap@10", "snap@20"]
    for _ in range(50):  # the learner beats snap@10, loses to snap@20
        league.record({"opponents": ["snap@10"], "charges": [0, 20], "win": True})
        league.record({"opponents": ["snap@20"], "charges": [20, 0], "win": False})
    w = league.snapshot_weights()
    assert w[1] > 10 * w[0]
    keys = league.sample_keys(rng, 400)
    assert keys.count("snap@20") > keys.count("snap@10") and "random" in keys


def test_privileged_critic_policy(tmp_path):
    """The critic sees the hidden cards; the saved actor still plays from the observation."""
    import torch
    from sb3_contrib import MaskablePPO

    cfg = tiny_config(tmp_path, "total_timesteps=1024", "policy.privileged_critic=true",
                      "pretrain.teacher=greedy", "pretrain.decisions=1000",
                      "pretrain.epochs=1")
    first = run(cfg, callbacks=[StopAt(600)], verbose=False)
    assert first["status"] == "interrupted"
    s = run(resume=first["run_dir"], verbose=False)
    assert s["num_timesteps"] == 1024
    model = MaskablePPO.load(s["policy"], device="cpu")
    assert model.observation_space.shape[0] > model.policy.actor_dim
    bot = agents.make("ppo", path=s["policy"])
    env = raw_env()
    env.reset(seed=3)
    while not env.game.deal_over:
        obs = env.observe(env.agent_selection)
        x = np.concatenate([obs["observation"], obs["action_mask"].astype(np.float32)])
        padded = np.zeros(model.observation_space.shape[0], np.float32)
        padded[:x.size] = x  # the hidden part does not matter to the actor
        with torch.no_grad():
            dist = model.policy.get_distribution(torch.as_tensor(padded[None]),
                                                 action_masks=obs["action_mask"][None])
        action = bot.act(obs)
        assert action == int(dist.distribution.probs.argmax())
        env.step(action)
    assert play_deals(s["policy_pt"], 2) > 0


def test_hide_from_actor_ablation(tmp_path):
    """Hidden segments stay out of the actor through pretraining, PPO and a resume: its
    first-layer weights on them are zero in the saved policy, so it plays the same
    whatever those segments hold."""
    from agents.ppo import load_policy
    from pis_env.observation import Layout

    cfg = tiny_config(tmp_path, "total_timesteps=1024", "pretrain.teacher=greedy",
                      "pretrain.decisions=1000", "pretrain.epochs=1",
                      "policy.hide_from_actor=[discard, drew_on_suit]")
    first = run(cfg, callbacks=[StopAt(600)], verbose=False)
    s = run(resume=first["run_dir"], verbose=False)
    layout = Layout.of(2)
    w = load_policy(s["policy"]).layers[0][0]  # [inputs, hidden]
    for name in ("discard", "drew_on_suit"):
        assert not w[layout.offsets[name]].any()
    assert w[layout.offsets["hand"]].any() and w[layout.offsets["top_card"]].any()
    with pytest.raises(C.ConfigError, match="hide_from_actor.*discard"):
        C.build(None, ["policy.hide_from_actor=[discards]"])


@pytest.mark.parametrize("skip_forced", [False, True])
def test_league_env_never_hands_over_a_finished_deal(skip_forced):
    """At 7 players the opener can draw the stock dry before the learner moves."""
    from train.common.league import League, LeagueEnv

    env = LeagueEnv(League({"random": 1.0}), {"num_players": 7}, seed=0,
                    skip_forced=skip_forced)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    for _ in range(3000):
        mask = env.action_masks()
        assert mask.any()
        _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            env.reset()


def test_subproc_vec_env_gets_the_pool(tmp_path):
    """With SubprocVecEnv the workers' league copies are refreshed with new snapshots."""
    import torch

    cfg = tiny_config(tmp_path, "total_timesteps=2048", "vec_env=subproc",
                      "league.opponents={random: 1, self: 3}")
    s = run(cfg, verbose=False)
    assert s["status"] == "finished"
    pool = torch.load(latest_checkpoint(Path(s["run_dir"])) / "league.pt", weights_only=True)
    played = set(pool["scores"]) - {"random", "snap@0"}
    assert played, "the workers never played a snapshot taken after the start"
