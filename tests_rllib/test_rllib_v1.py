"""RLlib on ``PisYedili-Events-v0`` (``env_version=1``): the vector env samples the v1
observation (the v0 one followed by the public record of the deal), the warm start
imitates the heuristic there, the snapshots and the exported policy are v1 networks,
the policy file records layout 1 and ``agents.make("ppo", path=...)`` plays it at a v1
table; a checkpoint of the other layout is refused on resume."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from teacher_agreement import agreement_with_teacher

import agents
import pis_env
from agents.ppo import read_policy
from pis_env.observation import Layout
from train.rllib.config import load_config
from train.rllib.env import OBS_KEY, make_env
from train.rllib.ppo import evaluate, learner_spec, main, train
from train.sb3.config import ConfigError

V0, V1 = (Layout.of(2, 1, v).size for v in (0, 1))
TINY = ["env_version=1", "env_runners.num_env_runners=0",
        "env_runners.num_envs_per_env_runner=32", "ppo.train_batch_size_per_learner=512",
        "ppo.minibatch_size=256", "ppo.num_epochs=1", "model.fcnet_hiddens=[32, 32]",
        "stop.minutes=null", "stop.iterations=1", "checkpoint_every=1", "eval_deals=0",
        "snapshots.every=1", "pretrain.teacher=heuristic", "pretrain.decisions=3000",
        "pretrain.epochs=2", "pretrain.learning_rate=0.003"]


def test_a_v1_run_samples_v1_and_exports_a_layout_1_policy(local_ray, tmp_path):
    run = tmp_path / "run"
    cfg = load_config(None, TINY)
    state = train(cfg, run, log=lambda s: None)
    assert state["env_version"] == 1 and state["env"] == "vector"
    assert state["iterations"] == 1 and state["env_steps"] >= 512
    assert state["pretrain"]["collector"] == "batched"
    line = json.loads((run / "progress.jsonl").read_text().splitlines()[-1])
    assert line["snapshots"] == ["self@0", "self@1"] and line["learner_return"] is not None

    meta, weights = read_policy(run / "policy.pt")
    assert meta["layout_version"] == 1 and meta["layout_size"] == V1
    assert weights["mlp_extractor.policy_net.0.weight"].shape[1] == V1

    # the warm start learned the heuristic at the v1 table, far above chance
    agreement, chance = agreement_with_teacher(run / "policy-pretrain.pt", env_version=1,
                                               num_players=2)
    print(f"v1 imitation agreement {agreement:.3f}, chance {chance:.3f}")
    assert agreement > chance + 0.15

    bot = agents.make("ppo", path=str(run / "policy.pt"), num_players=2)
    assert bot.layout_version == 1
    env = pis_env.pis_yedili_v1.env()
    env.reset(seed=4)
    other = agents.make("greedy", num_players=2)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        assert obs["observation"].shape == (V1,)
        action = (bot if agent == "player_1" else other).act(obs)
        assert obs["action_mask"][action] == 1
        env.step(action)
    assert env.unwrapped.game.deal_over
    with pytest.raises(ValueError, match="layout"):  # a v0 table is not this policy's
        v0 = pis_env.env()
        v0.reset(seed=0)
        bot.act(v0.observe(v0.agent_selection))

    # the run's evaluation seats it in duplicate-deal tournaments (eval.json)
    out = evaluate(run, replace(cfg, eval_deals=10, eval_opponents=["greedy"]), workers=1,
                   log=lambda s: None)
    assert json.loads((run / "eval.json").read_text()) == out
    assert out["greedy"]["deals"] == 10
    assert 0 <= out["greedy"]["low"] <= out["greedy"]["win_rate"] <= out["greedy"]["high"] <= 1


def test_the_aec_path_and_the_module_read_the_v1_observation():
    cfg = load_config(None, ["env_version=1", "env=aec", "opponents={heuristic: 1}"])
    assert learner_spec(cfg).observation_space[OBS_KEY].shape == (V1,)
    v0 = learner_spec(load_config(None, ["env=aec", "opponents={heuristic: 1}"]))
    assert v0.observation_space[OBS_KEY].shape == (V0,)
    env = make_env({"rules": cfg.rules, "env_version": 1})
    obs, _ = env.reset(seed=0)
    (row,) = obs.values()
    expected = pis_env.pis_yedili_v1.env()
    expected.reset(seed=0)
    np.testing.assert_array_equal(row[OBS_KEY],
                                  expected.observe(expected.agent_selection)["observation"])


@pytest.mark.parametrize("saved, override, match", [
    ({"env": "vector", "env_version": 1}, "env_version=0", "resume it with env_version=1"),
    ({"env": "vector"}, "env_version=1", "written with env_version=0"),  # from before v1
])
def test_a_checkpoint_of_the_other_layout_is_refused(tmp_path, capsys, saved, override, match):
    run = tmp_path / "run"
    (run / "checkpoint").mkdir(parents=True)
    (run / "state.json").write_text(json.dumps({**saved, "iterations": 3, "env_steps": 9,
                                                "minutes": 1}))
    version = saved.get("env_version", 0)
    (run / "config.yaml").write_text(f"name: rllib_ppo\nenv_version: {version}\n")
    assert main(["--resume", str(run), override]) == 2
    assert match in capsys.readouterr().err
    with pytest.raises(ConfigError, match="env_version=2: allowed values are 0, 1"):
        load_config(None, ["env_version=2"])
