"""The oracle probe (``policy.oracle_actor``): a training run whose actor reads the hidden
cards too, a measurement of what that information could buy, never a bot."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.ppo import NUM_ACTIONS, PolicyLoadError, read_policy
from pis_env.observation import Layout
from pis_env.privileged import privileged_size
from train.sb3 import config as C
from train.sb3.run import run

from .test_train import tiny_config

ORACLE = ["policy.oracle_actor=true", "policy.privileged_critic=true"]


@pytest.mark.parametrize("extra,why", [
    (["policy.privileged_critic=false"], r"policy.privileged_critic is false"),
    (["league.opponents={random: 1, self: 1}"], r"league.opponents has \['self'\]"),
    (["league.opponents={random: 1}", "eval.deals=10"], r"eval.deals=10"),
])
def test_an_oracle_that_would_meet_a_table_is_refused_up_front(extra, why):
    with pytest.raises(C.ConfigError, match=f"oracle_actor=true: {why}"):
        C.build(None, [*ORACLE, *extra])


def test_the_oracle_actor_reads_the_hidden_cards_and_its_policy_is_refused_at_a_table(
        tmp_path):
    cfg = tiny_config(tmp_path, *ORACLE, "total_timesteps=1024", name="oracle")
    summary = run(cfg, verbose=False)
    _, arrays = read_policy(summary["policy"])
    first = arrays["mlp_extractor.policy_net.0.weight"]
    hidden = Layout.of(2, 1, 0).size + NUM_ACTIONS
    assert first.shape[1] == hidden + privileged_size(2)
    assert np.abs(first[:, hidden:]).sum() > 0  # trained weights on the hidden cards
    assert set(summary["train_win_rates"]) >= {"all", "random"}
    assert 0.0 <= summary["train_win_rates"]["random"] <= 1.0
    with pytest.raises(PolicyLoadError, match="oracle probe"):
        agents.make("ppo", path=summary["policy"], num_players=2)
