"""train/rllib/ppo.py on a two-node Ray cluster (``ray.cluster_utils.Cluster``, both nodes
in this machine): one env runner per node, placed by a custom resource
(``env_runners.custom_resources``), each stepping ``train.vector.gym_vector_env.PisYediliVectorEnv``
(``gym_env_vectorize_mode="vector_entry_point"``) with the masking module playing only
legal actions (read from the dict observation); a few PPO iterations, the snapshot pool
refreshed on the driver reaching both runners (their matches name the new snapshot, whose
moves are the driver's policy's), and the exported policy plays through
``agents.make("ppo", path=...)``."""

from __future__ import annotations

import numpy as np
import pytest
import ray
from ray.cluster_utils import Cluster

import agents
import pis_env
from train.rllib.config import load_config
from train.rllib.export import export_module
from train.rllib.ppo import SnapshotPool, build_config, learner_state
from train.sb3.config import ConfigError
from train.vector.gym_vector_env import MASK_KEY, OBS_KEY, PisYediliVectorEnv

SLOT = "runner_slot"
TINY = ["env_runners.num_env_runners=2", "env_runners.num_envs_per_env_runner=32",
        f"env_runners.custom_resources={{{SLOT}: 1}}", "ppo.train_batch_size_per_learner=640",
        "ppo.minibatch_size=320", "ppo.num_epochs=1", "model.fcnet_hiddens=[32, 32]",
        "snapshots.every=1", "snapshots.pool_size=2", "snapshots.deterministic=true",
        "opponents={greedy: 1, self: 3}", "pretrain.teacher=null", "eval_deals=0"]


@pytest.fixture
def two_nodes():
    # the head has room for both runners (Ray would pack them there): only the custom
    # resource, one slot per node, puts one runner on each
    if ray.is_initialized():  # the other tests' shared local Ray (conftest.py)
        ray.shutdown()
    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 4, "resources": {SLOT: 1}})
    cluster.add_node(num_cpus=1, resources={SLOT: 1})
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def sample_and_replay():
    """A function for the env runners (defined here so that Ray pickles it by value: a
    remote worker cannot import this test module, and RLlib drops the results of
    env runners whose call failed): a sample, the actions' legality, the opponents its
    finished matches name, and its newest snapshot's moves on the current positions."""

    def run(runner):
        env = runner.env.unwrapped
        episodes = runner.sample(num_timesteps=1500, explore=True)
        illegal = 0
        for e in episodes:
            masks, actions = e.get_observations()[MASK_KEY][:len(e)], e.get_actions()
            illegal += int((masks[np.arange(len(actions)), actions] != 1).sum())
        done = [e for e in episodes if e.is_done]
        names = {str(o) for e in done for o in e.get_infos(-1).get("opponents", [])}
        forfeits = sum(e.get_infos(-1).get("end_reason") == "illegal" for e in done)
        newest = max(env._snapshot_policies, key=lambda k: int(k.split("@")[1]))
        obs, masks = env.core.env.obs.copy(), env.core.env.masks.copy()
        return {"env": type(env).__name__, "obs_size": e.get_observations()[OBS_KEY].shape[1],
                "steps": sum(len(e) for e in episodes), "done": len(done), "illegal": illegal,
                "forfeits": forfeits, "names": names, "newest": newest, "obs": obs,
                "masks": masks, "actions": env._snapshot_policies[newest](obs, masks)}

    return run


def test_env_runners_on_both_nodes_train_and_export(two_nodes, tmp_path):
    cfg = load_config(None, TINY)
    algo = build_config(cfg).build_algo()
    try:
        nodes = algo.env_runner_group.foreach_env_runner(
            lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False)
        assert len(nodes) == 2 and nodes[0] != nodes[1]  # one runner per node
        assert set(nodes) == {n["NodeID"] for n in ray.nodes() if n["Alive"]}
        pool = SnapshotPool(cfg)
        assert pool.refresh(algo, 0)[1:] == [["self@0"]] * 2  # both remote runners
        for i in (1, 2):
            result = algo.train()
            assert result["env_runners"]["num_env_steps_sampled"] >= 640
            assert pool.refresh(algo, i)[1:] == [[f"self@{i - 1}", f"self@{i}"]] * 2
        samples = algo.env_runner_group.foreach_env_runner(sample_and_replay(),
                                                           local_env_runner=False)
        policy = dict(pool.items)["self@2"]
        path = export_module(learner_state(algo), cfg.rules, cfg.model,
                             tmp_path / "policy.pt")
    finally:
        algo.stop()
    assert len(samples) == 2  # both runners answered
    for s in samples:
        assert s["env"] == PisYediliVectorEnv.__name__ and s["obs_size"] == 178
        assert s["steps"] >= 1500 and s["done"] > 30
        assert s["illegal"] == 0 and s["forfeits"] == 0  # the module reads the mask
        # matches begun before the refresh finish with the older snapshots
        assert {"greedy", "self@2"} <= s["names"] <= {"greedy", "self@0", "self@1", "self@2"}
        assert s["newest"] == "self@2"
        np.testing.assert_array_equal(
            s["actions"], [policy.act(o, m) for o, m in zip(s["obs"], s["masks"])])
    bot = agents.make("ppo", path=str(path), num_players=2)
    env = pis_env.env()
    env.reset(seed=5)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = bot.act(obs)
        assert obs["action_mask"][action] == 1
        env.step(action)


def test_custom_resources_are_checked():
    with pytest.raises(ConfigError, match="an amount > 0"):
        load_config(None, [f"env_runners.custom_resources={{{SLOT}: 0}}"])
