"""Any SB3 (Maskable)PPO model trained on the gymnasium views plays as
``agents.make("ppo", path=...)``: trained here through SB3's own ``make_vec_env``, saved
with SB3's ``save`` (no ``pis_yedili.json``), read without unpickling anything, and seated
in a tournament. Its moves are the model's own (``predict`` with the mask)."""

from __future__ import annotations

import json
import pickle
import warnings
import zipfile

import numpy as np
import pytest

import agents
from agents.ppo import PolicyLoadError, read_policy
from agents.tournament import run_tournament

pytest.importorskip("sb3_contrib")  # the train extra (torch, SB3), installed by make test


def _train(tmp_path, env_id, policy_kwargs, name, env_kwargs=None):
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    torch.set_num_threads(1)
    with warnings.catch_warnings(record=True) as caught:  # SB3's own way warns nothing
        warnings.simplefilter("always")
        envs = make_vec_env(env_id, n_envs=2, seed=0, env_kwargs=env_kwargs)
    assert [str(w.message) for w in caught] == []
    model = MaskablePPO("MlpPolicy", envs, n_steps=32, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs=policy_kwargs, device="cpu")
    model.learn(total_timesteps=64)
    path = tmp_path / name
    model.save(path)
    return model, path.with_suffix(".zip")


def _same_moves(model, bot, env_id, env_kwargs, seeds=range(3)):
    import gymnasium

    env = gymnasium.make(env_id, **(env_kwargs or {}))
    moves = 0
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            mask = env.unwrapped.action_masks()
            expected, _ = model.predict(obs, action_masks=mask, deterministic=True)
            got = bot.act({"observation": obs, "action_mask": mask.astype(np.int8)})
            assert got == int(expected)
            obs, _, terminated, truncated, _ = env.step(got)
            done = terminated or truncated
            moves += 1
    return moves


def test_a_model_trained_through_make_vec_env_plays_in_a_tournament(tmp_path, monkeypatch):
    import torch

    model, path = _train(tmp_path, "PisYedili-v0",
                         {"net_arch": [24, 16], "activation_fn": torch.nn.ReLU}, "mine")
    with zipfile.ZipFile(path) as archive:
        assert "pis_yedili.json" not in archive.namelist()
        data = json.loads(archive.read("data"))
    assert data["observation_space"]["_shape"] == [178]  # SB3's readable shape

    def no_unpickling(*args, **kwargs):
        raise AssertionError("unpickled a stranger's file")

    monkeypatch.setattr(pickle, "loads", no_unpickling)
    monkeypatch.setattr(pickle, "load", no_unpickling)
    bot = agents.make("ppo", path=str(path))
    monkeypatch.undo()
    assert (bot.num_players, bot.num_deals, bot.layout_version) == (2, 1, 0)
    assert bot.meta["activation"] == "relu" and bot.meta["net_arch"]["pi"] == [24, 16]
    assert _same_moves(model, bot, "PisYedili-v0", None) > 20

    result = run_tournament([f"ppo:{path}", "heuristic"], deals=3, workers=1, progress=False)
    assert result.stats[f"ppo:{path}"].games == 6


def test_an_event_log_model_at_four_players_reads_its_table_from_the_file(tmp_path):
    model, path = _train(tmp_path, "PisYedili-Events-v0", {"net_arch": [16]}, "events",
                         env_kwargs={"num_players": 4})
    bot = agents.make("ppo", path=str(path))  # the table is the file's
    assert (bot.num_players, bot.layout_version, bot.meta["activation"]) == (4, 1, "tanh")
    _same_moves(model, bot, "PisYedili-Events-v0", {"num_players": 4}, seeds=[0])
    with pytest.raises(PolicyLoadError, match="no observation layout of 3 players.*"
                       "it fits 4 players at one deal \\(layout 1\\)"):
        agents.make("ppo", path=str(path), num_players=3)


def test_an_archive_of_another_observation_is_refused_by_name(tmp_path):
    import io

    import torch

    weights = io.BytesIO()
    torch.save({"action_net.bias": torch.zeros(58)}, weights)
    archive = tmp_path / "other.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("data", json.dumps({"observation_space": {":type:": "Dict",
                                                             ":serialized:": "gA=="}}))
        z.writestr("policy.pth", weights.getvalue())
    with pytest.raises(PolicyLoadError, match="not a flat Box"):
        agents.make("ppo", path=str(archive))
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("data", json.dumps({"observation_space": {"_shape": [177]}}))
        z.writestr("policy.pth", weights.getvalue())
    with pytest.raises(PolicyLoadError, match="size 177, which is no observation layout"):
        read_policy(archive)


def test_a_shipped_policy_plays_at_its_own_table_by_default():
    bot = agents.make("ppo", path="ppo_4p")  # no num_players: the file says 4
    assert (bot.num_players, bot.num_deals) == (4, 1)
    with pytest.raises(PolicyLoadError, match="trained for 4 players"):
        agents.make("ppo", path="ppo_4p", num_players=3)
