"""Pretraining (imitation) collects its data from the run's own VecEnv: with
``vec_env=batched`` one env stack, the numba engine, serves imitation and PPO."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import agents
import train.common.league
import train.common.pretrain as P
from pis_env.observation import Layout
from tests.train.conftest import chance_accuracy
from train.common.checkpoint import latest_checkpoint
from train.sb3 import config as C
from train.sb3.run import run

from .test_train import TINY

BATCHED = [*(o for o in TINY if not o.startswith(("n_envs", "league.opponents"))),
           "vec_env=batched", "n_envs=64", "ppo.n_steps=32", "ppo.batch_size=1024",
           "league.opponents={heuristic: 1, self: 1}", "total_timesteps=2048"]


def test_pretraining_steps_the_runs_own_batched_env(tmp_path, monkeypatch, imitation_data):
    """Pretraining collects from the env PPO then learns from, and imitates the heuristic
    well above picking uniformly among the legal moves on the same decisions."""
    from stable_baselines3.common.callbacks import BaseCallback

    def no_second_stack(*args, **kwargs):
        raise AssertionError("pretraining built a LeagueEnv beside the batched env")

    monkeypatch.setattr(train.common.league, "LeagueEnv", no_second_stack)
    collected = []
    real_collect = P.collect  # the imitation_data spy, which keeps the decisions

    def spy(vec_env, *args, **kwargs):
        collected.append(vec_env)
        return real_collect(vec_env, *args, **kwargs)

    monkeypatch.setattr(P, "collect", spy)
    learned = []

    class Probe(BaseCallback):
        def _on_training_start(self) -> None:
            learned.append(self.model.get_env())

        def _on_step(self) -> bool:
            return True

    cfg = C.build(None, [*BATCHED, "pretrain.teacher=heuristic", "pretrain.decisions=4000",
                         "pretrain.epochs=2", f"run_dir={tmp_path / 'run'}"])
    s = run(cfg, callbacks=[Probe()], verbose=False)
    assert s["status"] == "finished"
    assert len(collected) == 1 and collected[0] is learned[0]
    assert type(collected[0]).__name__ == "_LeagueVecEnv"
    state = json.loads((latest_checkpoint(Path(s["run_dir"])) / "state.json").read_text())
    (data,) = imitation_data
    chance = chance_accuracy(data)
    print(f"imitation accuracy {state['pretrain']['accuracy']:.3f}, chance {chance:.3f}")
    assert state["pretrain"]["accuracy"] > chance + 0.15


def test_the_heuristic_teacher_is_the_numba_port_choosing_as_the_bot():
    from train.vector.sb3_vec_env import make_league_vec_env

    cfg = C.build(None, [*BATCHED, "pretrain.teacher=heuristic"])
    league = train.common.league.League.from_config(cfg.league)
    env = make_league_vec_env(cfg, league, seed=3)
    teacher = P.make_teacher("heuristic", cfg.rules, seed=0)
    assert not isinstance(teacher, P.RowByRow)
    size = Layout.of(2).size
    data = P.collect(env, teacher, 640, size, gamma=1.0, seed=5)
    bot = agents.make_for_table("heuristic", cfg.rules)
    for row in range(0, len(data["actions"]), 7):
        obs = {"observation": data["x"][row, :size],
               "action_mask": data["masks"][row].astype(np.int8)}
        assert bot.act(obs) == data["actions"][row]
    assert isinstance(P.make_teacher("greedy", cfg.rules, seed=0), P.RowByRow)


class ScriptedVecEnv:
    """Two games with fixed episode lengths (3 and 2 steps), reward = step number."""

    num_envs = 2
    lengths = (3, 2)

    def seed(self, seed):
        self.seeded = seed

    def reset(self):
        self.t = np.zeros(2, int)
        self.step_no = 0
        return np.zeros((2, 4), np.float32)

    def env_method(self, name, *args, indices=None, **kwargs):
        assert name == "action_masks"
        return [np.ones(58, bool)] * 2

    def step(self, actions):
        self.step_no += 1
        self.t += 1
        dones = self.t == np.array(self.lengths)
        self.t[dones] = 0
        return (np.full((2, 4), self.step_no, np.float32),
                np.full(2, float(self.step_no), np.float32), dones, [{}, {}])


def test_collect_keeps_finished_episodes_with_their_returns():
    env = ScriptedVecEnv()
    data = P.collect(env, lambda obs, masks: np.zeros(len(obs), np.int64), decisions=9,
                     layout_size=4, gamma=1.0, seed=11)
    assert env.seeded == 11
    # 5 steps x 2 games, time-major rows: game 0 ends at steps 3 (episode of rewards
    # 1, 2, 3); game 1 ends at steps 2 and 4 (rewards 1, 2 and 3, 4); the rest is cut
    rows = data["rows"].tolist()
    assert rows == [0, 1, 2, 3, 4, 5, 7]
    returns = data["returns"][rows].tolist()
    assert returns == [6.0, 3.0, 5.0, 2.0, 3.0, 7.0, 4.0]
    discounted = P.collect(ScriptedVecEnv(), lambda o, m: np.zeros(len(o), np.int64), 9, 4,
                           gamma=0.5, seed=0)
    assert discounted["returns"][0] == pytest.approx(1 + 0.5 * 2 + 0.25 * 3)
