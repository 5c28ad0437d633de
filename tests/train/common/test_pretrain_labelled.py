"""Pretraining on labelled files (``train.common.pretrain``): the files become the policy
input the config reads, sized by its deals and layout version, one of another kind is
refused by name, and ``pretrain`` fits them and leaves the env alone."""

from __future__ import annotations

import numpy as np
import pytest

import train.common.pretrain as P
from pis_env.observation import Layout

from .test_pretrain_teachers import RULES, Scripted, config


def save(path, size=6, **arrays):
    rng = np.random.default_rng(0)
    base = {"obs": rng.random((4, size)), "mask": np.ones((4, 58)), "privileged":
            rng.random((4, 5)), "action": np.arange(4), "returns": np.ones(4)}
    np.savez(path, **{**base, **arrays})
    return base


def test_labelled_files_become_the_policy_input_the_config_reads(tmp_path):
    size = Layout.of(3, 1, 0).size
    one = save(tmp_path / "a.npz", size)
    save(tmp_path / "b.npz", size)
    policy = {"features": ["obs", "mask"], "privileged_critic": True}
    cfg = config(rules=RULES, policy=policy, env_version=0)
    data = P.load_labelled([str(tmp_path / "a.npz"), str(tmp_path / "b.npz")], cfg)
    assert data["x"].shape == (8, size + 58 + 5) and data["x"].dtype == np.float32
    assert np.allclose(data["x"][:4, :size], one["obs"])
    assert np.allclose(data["x"][:4, size + 58:], one["privileged"])
    assert data["masks"].dtype == bool and data["actions"].dtype == np.int64
    assert data["returns"].dtype == np.float32 and data["actions"].tolist() == [0, 1, 2, 3] * 2
    plain = P.load_labelled([str(tmp_path / "a.npz")], config(rules=RULES, policy={
        "features": ["obs"], "privileged_critic": False}, env_version=0))
    assert plain["x"].shape == (4, size)


def test_a_labelled_file_of_another_kind_is_refused_by_name(tmp_path):
    cfg = config(rules=RULES, policy={"features": ["obs"], "privileged_critic": False},
                 env_version=0)
    v0, v1 = (Layout.of(3, 1, v).size for v in (0, 1))
    lacking = tmp_path / "lacking.npz"
    np.savez(lacking, obs=np.zeros((1, v0)))
    with pytest.raises(ValueError) as err:
        P.load_labelled([str(lacking)], cfg)
    assert str(err.value) == f"{lacking}: not a labelled data set (lacks 'mask is not a file " \
                             "in the archive')"
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(ValueError) as err:
        P.load_labelled([str(junk)], cfg)
    assert str(err.value).startswith(f"{junk}: cannot read a labelled data set (")
    save(tmp_path / "v1.npz", v1)
    with pytest.raises(ValueError) as err:
        P.load_labelled([str(tmp_path / "v1.npz")], cfg)
    assert str(err.value) == (
        f"{tmp_path / 'v1.npz'}: observations of shape (4, {v1}); this table's observations "
        f"(layout version 0) have {v0} entries (layout version 1's size: labelled at "
        f"pis_yedili_v1, but env_version=0)")
    save(tmp_path / "odd.npz", 7)
    with pytest.raises(ValueError) as err:
        P.load_labelled([str(tmp_path / "odd.npz")], cfg)
    assert str(err.value).endswith(f"(layout version 0) have {v0} entries")


def test_labelled_files_are_sized_by_the_configs_deals_and_layout_version(tmp_path):
    rules = {"num_players": 3, "num_deals": 4}
    size = Layout.of(3, 4, 1).size
    assert size not in (Layout.of(3, 1, 1).size, Layout.of(3, 4, 0).size)
    save(tmp_path / "match.npz", size)
    cfg = config(rules=rules, policy={"features": ["obs"], "privileged_critic": False},
                 env_version=1)
    assert P.load_labelled([str(tmp_path / "match.npz")], cfg)["x"].shape == (4, size)


def test_pretrain_on_labelled_files_fits_them_and_leaves_the_env_alone(tmp_path,
                                                                       monkeypatch):
    fitted = []
    monkeypatch.setattr(P, "fit", lambda policy, data, *args, **kwargs: fitted.append(
        (policy, data, args, kwargs)) or {"accuracy": 0.5})

    class Model:
        policy = object()

    size = Layout.of(2, 1, 0).size
    paths = [str(tmp_path / "a.npz"), str(tmp_path / "b.npz")]
    for path in paths:
        save(path, size)
    env = Scripted(size)
    clock = iter(range(1000, 10_000, 5))  # five seconds a call
    monkeypatch.setattr(P.time, "time", lambda: float(next(clock)))
    cfg = config(pretrain={"data": paths, "teacher": "random", "decisions": 6, "epochs": 3,
                           "batch_size": 16, "learning_rate": 0.2, "value_coef": 0.25},
                 rules={"num_players": 2, "num_deals": 1}, seed=9, env_version=0,
                 ppo={"gamma": 0.5}, policy={"features": ["obs"], "privileged_critic": False})
    lines = []
    stats = P.pretrain(Model(), env, cfg, log=lines.append)
    assert env.seeds == []  # no teacher games: the env deals what it would have dealt
    ((policy, data, args, kwargs),) = fitted
    assert policy is Model.policy and args == (3, 16, 0.2, 0.25) and kwargs["seed"] == 9
    assert kwargs["log"] == lines.append
    assert data["x"].shape == (8, size) and data["actions"].tolist() == [0, 1, 2, 3] * 2
    assert lines == ["pretrain: 8 labelled positions from 2 file(s)"]
    assert stats["accuracy"] == 0.5 and stats["seconds"] == 5
