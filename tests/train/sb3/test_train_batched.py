"""``train/sb3/run.py`` with ``vec_env=batched``: the numba engine as the training VecEnv."""

from __future__ import annotations

import pytest

from train.sb3 import config as C
from train.sb3.run import run

from .test_train import TINY, play_deals


def test_batched_training_run_saves_a_legal_policy(tmp_path):
    overrides = [o for o in TINY if not o.startswith(("n_envs", "league.opponents"))]
    cfg = C.build(None, [*overrides, "vec_env=batched", "n_envs=64", "ppo.n_steps=32",
                         "ppo.batch_size=1024", "league.opponents={greedy: 1, heuristic: 1}",
                         "total_timesteps=4096", f"run_dir={tmp_path / 'run'}"])
    run(cfg)
    assert play_deals(tmp_path / "run" / "policy.zip", num_players=2) > 0


def test_vec_env_choice_is_validated():
    with pytest.raises(C.ConfigError, match="batched"):
        C.build(None, ["vec_env=numba"])
