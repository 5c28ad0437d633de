"""RLlib PPO (train/rllib_ppo.py), run in .venv-rllib (``make test-rllib``): a run of a
few hundred env steps trains, checkpoints, resumes, and exports a policy that
``agents.make("ppo", path=...)`` plays with the same logits as the RLlib module."""

from __future__ import annotations

import json

import numpy as np
import pytest
import ray
import torch

import agents
import pis_env
from train.rllib_config import load_config
from train.rllib_env import MaskKeysWrapper, make_aec_env
from train.rllib_export import export_module
from train.rllib_ppo import LEARNER, SeatMapping, build_algorithm, learner_state, train

TINY = ["env_runners.num_env_runners=0", "env_runners.num_envs_per_env_runner=2",
        "ppo.train_batch_size_per_learner=200", "ppo.minibatch_size=100", "ppo.num_epochs=1",
        "model.fcnet_hiddens=[32, 32]", "stop.minutes=null", "stop.iterations=1",
        "checkpoint_every=1", "eval_deals=0"]


@pytest.fixture
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_wrapper_renames_keys_and_casts_the_mask():
    env = make_aec_env({"num_players": 3})
    env.reset(seed=1)
    agent = env.agent_selection
    obs = env.observe(agent)
    assert set(obs) == {"observations", "action_mask"}
    assert obs["action_mask"].dtype == np.float32
    assert env.observation_space(agent).contains(obs)
    raw = pis_env.env(num_players=3)
    raw.reset(seed=1)
    np.testing.assert_array_equal(raw.observe(agent)["observation"], obs["observations"])
    assert isinstance(env, MaskKeysWrapper)


def test_seat_mapping_one_learner_seat_per_episode():
    mapping = SeatMapping(4, {"heuristic": 1, "greedy": 1}, seed=0)
    seats = [[mapping(f"player_{s}", f"episode-{e}") for s in range(4)] for e in range(40)]
    assert all(row.count(LEARNER) == 1 for row in seats)
    assert {row.index(LEARNER) for row in seats} == {0, 1, 2, 3}
    assert seats[3] == [mapping(f"player_{s}", "episode-3") for s in range(4)]  # stable
    assert {"bot_heuristic", "bot_greedy"} <= {p for row in seats for p in row}


def test_train_resume_export_and_play(local_ray, tmp_path):
    run = tmp_path / "run"
    cfg = load_config(None, TINY)
    state = train(cfg, run)
    assert state["iterations"] == 1 and state["env_steps"] >= 200
    assert (run / "checkpoint").is_dir() and (run / "policy.pt").is_file()
    before = torch.load(run / "policy.pt", weights_only=True)

    cfg2 = load_config(run / "config.yaml", ["stop.iterations=2"])
    state = train(cfg2, run, resume=True)
    assert state["iterations"] == 2 and state["env_steps"] >= 400
    lines = (run / "progress.jsonl").read_text().splitlines()
    assert [json.loads(x)["iteration"] for x in lines] == [1, 2]
    after = torch.load(run / "policy.pt", weights_only=True)
    assert not torch.equal(before["state_dict"]["action_net.weight"],
                           after["state_dict"]["action_net.weight"])  # it learned

    bot = agents.make("ppo", path=str(run / "policy.pt"), num_players=2)
    other = agents.make("heuristic", num_players=2, seed=0)
    env = pis_env.env()
    env.reset(seed=3)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        player = bot if agent == "player_0" else other
        action = player.act(obs)
        assert obs["action_mask"][action] == 1
        env.step(action)
    assert env.unwrapped.game.deal_over


def test_exported_policy_has_the_modules_logits(local_ray, tmp_path):
    cfg = load_config(None, TINY)
    algo = build_algorithm(cfg)
    try:
        path = export_module(learner_state(algo), cfg["rules"], cfg["model"], tmp_path / "p.pt")
        module = algo.get_module(LEARNER)
        env = make_aec_env(cfg["rules"])
        env.reset(seed=0)
        obs, masks = [], []
        for _ in range(20):
            o = env.observe(env.agent_selection)
            obs.append(o["observations"])
            masks.append(o["action_mask"])
            env.step(int(np.flatnonzero(o["action_mask"])[0]))
        batch = {"obs": {"observations": torch.tensor(np.array(obs)),
                         "action_mask": torch.tensor(np.array(masks))}}
        with torch.no_grad():
            logits = module.forward_inference(batch)["action_dist_inputs"].numpy()
    finally:
        algo.stop()
    policy = agents.make("ppo", path=str(path)).policy
    mine = policy.logits(policy.inputs(np.array(obs), np.array(masks)))
    legal = np.array(masks) > 0
    np.testing.assert_allclose(mine[legal], logits[legal], rtol=1e-4, atol=1e-4)
    assert (logits[~legal] < -1e30).all()  # the mask as -inf logits


@pytest.mark.parametrize("override, match", [
    ("bogus=1", "unknown config key 'bogus'"),
    ("env_runners.num_env_runners=-1", "num_env_runners"),
    ("model.fcnet_activation=swish", "fcnet_activation"),
    ("opponents={mc: 0}", "weight"),
    ("opponents={human: 1}", "built-in bot"),
    ("rules.num_deals=4", "single deals"),
    ("stop.minutes=0", "stop.minutes"),
])
def test_bad_config_is_a_clear_error(override, match):
    with pytest.raises(ValueError, match=match):
        load_config(None, [override])


def test_export_refuses_other_architectures():
    with pytest.raises(ValueError, match="not a default RLlib PPO module"):
        export_module({"foo.weight": np.zeros((2, 2))}, {"num_players": 2}, {}, "/tmp/x.pt")


def test_cli_refuses_a_run_without_checkpoint(tmp_path, capsys):
    from train.rllib_ppo import main

    assert main(["--resume", str(tmp_path)]) == 2
    assert "holds no checkpoint" in capsys.readouterr().err
    assert main(["nosuchkey=1"]) == 2


def test_an_iteration_without_samples_counts_no_steps():
    """A busy machine can leave RLlib's env runners without a sample in time: the
    iteration reports NaN steps, which must not end the run."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED

    from train.rllib_ppo import _env_steps

    assert _env_steps({ENV_RUNNER_RESULTS: {NUM_ENV_STEPS_SAMPLED: float("nan")}}) == 0
    assert _env_steps({}) == 0
    assert _env_steps({ENV_RUNNER_RESULTS: {NUM_ENV_STEPS_SAMPLED: 4000}}) == 4000
