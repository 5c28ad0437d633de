"""Training on four-deal matches (configs/ppo_2p_match.yaml): a match network starts from
the deal-level bot widened to the match layout, and its evaluation plays matches."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.ppo import NumpyPolicy, load_policy, read_policy
from pis_env import pis_yedili_v0, pis_yedili_v1
from pis_env.observation import Layout
from train.common.checkpoint import export_weights, read_initial_policy, widen_to_layout
from train.common.evaluate import evaluate, summary_table
from train.sb3 import config as C
from train.sb3.run import run

from .test_train import tiny_config

ROOT = Path(__file__).resolve().parents[3]
DEAL_POLICY = str(ROOT / "models" / "ppo_2p.zip")  # the shipped v3 bot: single deals


def deal_policy(version: int, tmp_path: Path) -> tuple[str, NumpyPolicy]:
    """A single-deal network of layout ``version``: the shipped v3 bot, or at layout 1 the
    same widened with random weights on v1's columns (so that each of them matters)."""
    if version == 0:
        return DEAL_POLICY, load_policy(DEAL_POLICY, 2)
    import torch

    meta, arrays = widen_to_layout(*read_policy(DEAL_POLICY), 1)
    rng = np.random.default_rng(0)
    for key in ("mlp_extractor.policy_net.0.weight", "mlp_extractor.value_net.0.weight"):
        arrays[key][:, Layout.of(2, 1, 0).size:Layout.of(2, 1, 1).size] = rng.normal(
            0.0, 0.2, (arrays[key].shape[0], Layout.of(2, 1, 1).size - Layout.of(2, 1, 0).size))
    path = tmp_path / "v1_deal.pt"
    export_weights({k: torch.as_tensor(v) for k, v in arrays.items()}, meta, path)
    return str(path), NumpyPolicy(meta, arrays)


@pytest.mark.parametrize("version", [0, 1])
def test_init_widen_starts_a_match_network_that_plays_the_first_deal_as_the_deal_level_one(
        tmp_path, version):
    """The widened network at a four-deal table chooses, in each match's first deal, what
    the deal-level network chooses at a one-deal table dealt the same cards (the same
    seed): the reference is the other table's own observation, not the deal view. At
    layout 1 the match segments sit in the middle of the observation."""
    path, old = deal_policy(version, tmp_path)
    cfg = tiny_config(tmp_path, "rules.num_deals=4", f"init_policy={path}",
                      f"env_version={version}", "init_widen=true", "policy.net_arch=[256,256]",
                      "policy.privileged_critic=true", name="wide")
    state, norm = read_initial_policy(path, cfg)
    size = Layout.of(2, 4, version).size
    wide = NumpyPolicy({**old.meta, "num_deals": 4, "layout_size": size,
                        "input_size": size + 58}, {k: v.numpy() for k, v in state.items()})
    module = (pis_yedili_v0, pis_yedili_v1)[version]
    rng = np.random.default_rng(4)
    count = 0
    for seed in range(4):
        deal, match = module.env(num_players=2), module.env(num_players=2, num_deals=4)
        deal.reset(seed=seed)
        match.reset(seed=seed)
        while not deal.unwrapped.game.deal_over:
            a, b = deal.observe(deal.agent_selection), match.observe(match.agent_selection)
            assert b["observation"].shape == (size,)
            np.testing.assert_allclose(
                wide.probabilities(b["observation"], b["action_mask"]),
                old.probabilities(a["observation"], a["action_mask"]), atol=1e-6)
            count += 1
            action = int(rng.choice(np.flatnonzero(a["action_mask"])))
            deal.step(action)
            match.step(action)
    assert count > 50 and norm is None
    # the match segments start at zero weight: the scores change nothing yet
    first = state["mlp_extractor.policy_net.0.weight"].numpy()
    scores = Layout.of(2, 4, version).offsets["scores"]
    assert not first[:, scores].any() and first[:, :scores.start].any()


def test_a_deal_level_start_without_init_widen_is_refused_with_the_way_out(tmp_path):
    cfg = tiny_config(tmp_path, "rules.num_deals=4", f"init_policy={DEAL_POLICY}",
                      "policy.net_arch=[256,256]", "policy.privileged_critic=true")
    with pytest.raises(Exception, match=r"single deals.*4-deal matches.*init_widen=true"):
        read_initial_policy(DEAL_POLICY, cfg)


def test_a_match_run_trains_from_the_widened_bot_and_evaluates_in_matches(tmp_path):
    """A short run of the recipe's shape: the saved policy is a match network, and the
    closing evaluation plays duplicate matches (deals counts matches, both seat orders)."""
    cfg = tiny_config(tmp_path, "rules.num_deals=2", f"init_policy={DEAL_POLICY}",
                      "init_widen=true", "policy.net_arch=[256,256]",
                      "policy.privileged_critic=true", "pretrain.teacher=null",
                      "eval.deals=3", "eval.opponents=[random]", "total_timesteps=1024",
                      name="match")
    summary = run(cfg, verbose=False)
    meta, _ = read_policy(summary["policy"])
    assert (meta["num_deals"], meta["layout_size"]) == (2, Layout.of(2, 2, 0).size)
    rows = evaluate(summary["policy"], cfg.rules, ["random"], deals=3, workers=1,
                    progress=False, verbose=False)
    assert (rows[0]["num_deals"], rows[0]["deals"], rows[0]["seat_deals"]) == (2, 3, 6)
    assert "duplicate matches of 2 deals" in summary_table(rows)


def test_the_match_recipe_resolves_and_passes_preflight():
    from train.common.preflight import check_run

    cfg = C.build(ROOT / "configs" / "ppo_2p_match.yaml")
    assert (cfg.rules["num_deals"], cfg.init_widen, cfg.pretrain.teacher) == (
        4, True, None)
    assert cfg.max_minutes <= 60 and cfg.run_dir == "runs/match_2p"
    check_run(cfg)


def test_widening_refuses_what_it_cannot_keep_and_keeps_the_weights_dtype():
    """Both widenings at once, and a normalised input, are refused word for word; the
    widened weights stay float32 and the metadata names the new table."""
    from train.common.checkpoint import CheckpointError

    meta, arrays = read_policy(DEAL_POLICY)
    with pytest.raises(CheckpointError) as info:
        widen_to_layout(meta, arrays, 1, "v3.zip", num_deals=4)
    assert str(info.value) == (
        "init_policy v3.zip: init_widen widens a single-deal policy to a match of its own "
        "layout version, or a policy to a later layout version for its own table, not both "
        "at once (it has layout version 0 and 1 deal(s); the run has 1 and 4)")
    with pytest.raises(CheckpointError) as info:
        widen_to_layout({**meta, "obs_norm": {"mean": [0.0]}}, arrays, 0, "n.zip", num_deals=4)
    assert str(info.value) == ("init_policy n.zip: init_widen needs a policy whose input "
                               "starts with the observation and is not normalised")
    with pytest.raises(CheckpointError, match=r"^init_policy policy: init_widen needs"):
        widen_to_layout({**meta, "obs_norm": {"mean": [0.0]}}, arrays, 0, num_deals=4)
    wide_meta, wide = widen_to_layout(meta, arrays, 0, "v3.zip", num_deals=4)
    size = Layout.of(2, 4, 0).size
    assert (wide_meta["num_deals"], wide_meta["layout_size"], wide_meta["input_size"]) == (
        4, size, size + 58)
    first = wide["mlp_extractor.policy_net.0.weight"]
    assert first.dtype == arrays["mlp_extractor.policy_net.0.weight"].dtype == np.float32
