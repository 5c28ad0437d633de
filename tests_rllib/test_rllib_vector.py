"""RLlib on the batched vector env (``env=vector``, the default of train/rllib_ppo.py): a
run warms up, trains against the bots and its snapshots, checkpoints, resumes and exports
a policy ``agents.make("ppo", path=...)`` plays; a checkpoint of the other env is refused
on resume; the fragment and the learners' settings reach RLlib. What the remote env
runners sample (legal actions, the snapshots they play) is checked on a two-node cluster
in ``test_rllib_cluster.py``."""

from __future__ import annotations

import json

import pytest
import ray
import torch

import agents
import pis_env
from train.config import ConfigError
from train.rllib_config import load_config, rollout_fragment_length
from train.rllib_ppo import build_config, main, train

TINY = ["env=vector", "env_runners.num_env_runners=0", "env_runners.num_envs_per_env_runner=32",
        "ppo.train_batch_size_per_learner=512", "ppo.minibatch_size=256", "ppo.num_epochs=1",
        "model.fcnet_hiddens=[32, 32]", "stop.minutes=null", "stop.iterations=1",
        "checkpoint_every=1", "eval_deals=0", "pretrain.teacher=heuristic", "snapshots.every=1",
        "pretrain.decisions=3000", "pretrain.epochs=2", "pretrain.learning_rate=0.003"]


@pytest.fixture
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_config_sets_the_fragment_and_passes_the_learners():
    cfg = load_config(None, ["env_runners.num_env_runners=2",
                             "env_runners.num_envs_per_env_runner=128",
                             "ppo.train_batch_size_per_learner=8192", "learners.num_learners=2",
                             "learners.num_gpus_per_learner=0.5"])
    assert rollout_fragment_length(cfg) == 64  # 8192 x 2 learners / (128 envs x 2 runners)
    config = build_config(cfg)
    assert config.gym_env_vectorize_mode == "vector_entry_point"
    assert config.rollout_fragment_length == 64 and config.num_envs_per_env_runner == 128
    assert config.num_learners == 2 and config.num_gpus_per_learner == 0.5
    assert not config.is_multi_agent
    assert load_config(None, [])["env_runners"]["num_envs_per_env_runner"] == 256
    aec = load_config(None, ["env=aec", "opponents={heuristic: 1}"])
    assert aec["env_runners"]["num_envs_per_env_runner"] == 16
    with pytest.raises(ConfigError, match=r"needs env=vector.*'opponents=\{heuristic: 1, gre"):
        load_config(None, ["env=aec"])  # the default mix has self
    with pytest.raises(ConfigError, match="besides 'self'"):
        load_config(None, ["opponents={self: 1}"])
    with pytest.raises(ConfigError, match="rollout fragments of 4 steps"):
        load_config(None, ["env_runners.num_envs_per_env_runner=1024",
                           "ppo.train_batch_size_per_learner=4000"])
    with pytest.raises(ConfigError, match="env"):
        load_config(None, ["env=sync"])


def test_runs_warm_start_resume_export_and_play(local_ray, tmp_path):
    run = tmp_path / "run"
    cfg = load_config(None, TINY)
    logs: list[str] = []
    state = train(cfg, run, log=logs.append)
    assert state["env"] == "vector" and state["iterations"] == 1
    assert state["env_steps"] >= 512 and state["pretrain"]["decisions"] > 2500
    line = json.loads((run / "progress.jsonl").read_text().splitlines()[-1])
    assert line["learner_return"] is not None  # episodes (matches) ended in the sample
    assert line["snapshots"] == ["self@0", "self@1"]  # opponents.self: the default mix
    before = torch.load(run / "policy.pt", weights_only=True)

    # a checkpoint of the other env is refused, naming the env that resumes it
    with pytest.raises(ConfigError, match="env=vector"):
        train(load_config(run / "config.yaml", ["env=aec"]), run, resume=True)
    assert main(["--resume", str(run), "env=aec"]) == 2

    logs.clear()
    state = train(load_config(run / "config.yaml", ["stop.iterations=2"]), run, resume=True,
                  log=logs.append)
    assert state["iterations"] == 2 and state["env_steps"] >= 1024
    assert not any("pretrain" in x for x in logs)
    after = torch.load(run / "policy.pt", weights_only=True)
    assert not torch.equal(before["state_dict"]["action_net.weight"],
                           after["state_dict"]["action_net.weight"])  # PPO updated it

    bot = agents.make("ppo", path=str(run / "policy.pt"), num_players=2)
    env = pis_env.env()
    env.reset(seed=4)
    other = agents.make("greedy", num_players=2)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = (bot if agent == "player_1" else other).act(obs)
        assert obs["action_mask"][action] == 1
        env.step(action)


def test_an_aec_checkpoint_from_before_the_vector_env_is_refused(tmp_path, capsys):
    run = tmp_path / "old"
    (run / "checkpoint").mkdir(parents=True)
    (run / "state.json").write_text(json.dumps({"iterations": 3, "env_steps": 9, "minutes": 1}))
    (run / "config.yaml").write_text("name: rllib_ppo\n")  # no env key: the default, vector
    assert main(["--resume", str(run)]) == 2
    assert "written with env=aec" in capsys.readouterr().err
