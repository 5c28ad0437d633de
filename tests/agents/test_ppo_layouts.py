"""Networks of each observation layout in the batched engine's opponent form
(``agents.batched_policy.TorchPolicy``): a v0 network at a v1 table reads the v0
observation, a v1 network refuses v0 rows, and other widths are refused.

The reference for "the v0 observation" is a ``pis_yedili_v0`` env's own ``observe``, the
v1 rows a ``pis_yedili_v1`` env's of the same positions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.batched_policy import TorchPolicy
from agents.ppo import NumpyPolicy, load_policy, make_metadata
from pis_env import pis_yedili_v0, pis_yedili_v1
from pis_env.observation import Layout

ROOT = Path(__file__).resolve().parents[2]
V0_POLICY = ROOT / "models" / "ppo_2p.zip"


def positions(num_players: int = 2, deals: int = 6):
    """``(v0 rows, v1 rows, masks)`` of every decision of random deals, each env stepped
    by itself through the same moves."""
    rng = np.random.default_rng(1)
    v0, v1, masks = [], [], []
    for deal in range(deals):
        a, b = pis_yedili_v0.env(num_players=num_players), pis_yedili_v1.env(
            num_players=num_players)
        a.reset(seed=deal)
        b.reset(seed=deal)
        while not a.unwrapped.game.deal_over:
            oa, ob = a.observe(a.agent_selection), b.observe(b.agent_selection)
            v0.append(oa["observation"])
            v1.append(ob["observation"])
            masks.append(oa["action_mask"])
            action = int(rng.choice(np.flatnonzero(oa["action_mask"])))
            a.step(action)
            b.step(action)
    return np.array(v0), np.array(v1), np.array(masks)


def random_policy(version: int, num_players: int = 2) -> NumpyPolicy:
    """A small network of layout ``version`` with random weights."""
    rng = np.random.default_rng(version)
    meta = make_metadata(rules={"num_players": num_players}, net_arch={"pi": [16], "vf": [16]},
                         activation="tanh", features=["obs", "mask"],
                         layout_version=version)
    width = meta["input_size"]
    state = {"mlp_extractor.policy_net.0.weight": rng.normal(size=(16, width)),
             "mlp_extractor.policy_net.0.bias": rng.normal(size=16),
             "action_net.weight": rng.normal(size=(58, 16)),
             "action_net.bias": rng.normal(size=58)}
    return NumpyPolicy(meta, {k: v.astype(np.float32) for k, v in state.items()})


def test_a_v0_network_at_a_v1_table_plays_as_at_a_v0_one():
    v0, v1, masks = positions()
    assert v1.shape[1] == Layout.of(2, 1, 1).size > v0.shape[1]
    network = TorchPolicy.from_file(V0_POLICY, 2, 1, deterministic=True)
    assert network.layout == (2, 1, 0) and network.layout_version == 0
    at_v0 = network(v0, masks)
    np.testing.assert_array_equal(network(v1, masks), at_v0)
    # and those are the moves PPOAgent's own numpy network chooses at the v0 table
    numpy_net = load_policy(V0_POLICY, 2)
    np.testing.assert_array_equal(at_v0, [numpy_net.act(o, m) for o, m in zip(v0, masks)])


def test_a_v1_network_refuses_v0_rows_and_reads_v1_ones():
    v0, v1, masks = positions(deals=2)
    policy = random_policy(1)
    network = TorchPolicy.from_numpy_policy(policy, deterministic=True)
    np.testing.assert_array_equal(network(v1, masks),
                                  [policy.act(o, m) for o, m in zip(v1, masks)])
    with pytest.raises(ValueError, match=r"layout version 1 .*layout version 0"):
        network(v0, masks)


def test_rows_of_another_table_are_refused():
    _, _, masks = positions(deals=1)
    network = TorchPolicy.from_numpy_policy(random_policy(0), deterministic=True)
    wrong = np.zeros((len(masks), Layout.of(3, 1, 1).size), np.float32)
    with pytest.raises(ValueError, match="rows of .* entries"):
        network(wrong, masks)
