"""Pretraining from a teacher (``train.common.pretrain``) without a training run: the
teachers and the columns they read, what ``collect`` records and shows the teacher, and
what ``pretrain`` hands to the loop and seeds."""

from __future__ import annotations

import numpy as np

import agents
import train.common.pretrain as P
from agents.heuristic.batched import HeuristicPolicy
from pis_env.observation import Layout
from train.sb3.config import PolicyConfig, PPOConfig, PretrainConfig, TrainConfig

RULES = {"num_players": 3, "num_deals": 1}


def config(pretrain: dict | None = None, policy: dict | None = None, ppo: dict | None = None,
           **fields) -> TrainConfig:
    """A ``TrainConfig`` with these fields, and these keys of its sections (the rest their
    defaults)."""
    return TrainConfig(pretrain=PretrainConfig(**(pretrain or {})),
                       policy=PolicyConfig(**(policy or {})), ppo=PPOConfig(**(ppo or {})),
                       **fields)


class Scripted:
    """``num_envs`` games of three steps each; the observation counts the steps, the mask
    allows actions 0 and 1 only, and the teacher sees what ``seen`` records."""

    def __init__(self, width: int = 6, num_envs: int = 2):
        self.seeds: list[int] = []
        self.width, self.num_envs = width, num_envs

    def seed(self, seed):
        self.seeds.append(seed)

    def reset(self):
        self.t = 0
        return np.zeros((self.num_envs, self.width), np.float32)

    def env_method(self, name):
        assert name == "action_masks"
        mask = np.zeros(58, bool)
        mask[:2] = True
        return [mask] * self.num_envs

    def step(self, actions):
        self.t += 1
        n = self.num_envs
        done = np.full(n, self.t % 3 == 0)
        return (np.full((n, self.width), self.t, np.float32), np.ones(n, np.float32), done,
                [{}] * n)


def test_a_bot_teaches_row_by_row_and_the_heuristic_through_its_port():
    teacher = P.make_teacher("heuristic", RULES, seed=0)
    assert isinstance(teacher, HeuristicPolicy) and teacher.num_players == 3
    greedy = P.make_teacher("random", RULES, seed=5)
    assert isinstance(greedy, P.RowByRow) and greedy.layout_version is None
    reference = agents.make_for_table("random", RULES, seed=5)
    obs = np.zeros((30, Layout.of(3, 1, 0).size), np.float32)
    masks = np.ones((30, 58), np.int8)
    actions = greedy(obs, masks)
    assert actions.dtype == np.int64
    assert actions.tolist() == [reference.act({"observation": o, "action_mask": m})
                                for o, m in zip(obs, masks)]


def test_a_teacher_with_a_port_gets_its_seed_and_the_tables_rules(monkeypatch):
    """A port built for a teacher is seeded with the teacher's seed (a port that draws, as a
    registered bot's may, plays the same moves again) at the table's rules."""
    import agents.registry as registry

    calls = []
    monkeypatch.setattr(registry, "batched_port", lambda *a, **k: calls.append((a, k)))
    P.make_teacher("heuristic", RULES, seed=7)
    [(args, kwargs)] = calls
    assert args[0] == "heuristic" and args[2].num_players == 3 and kwargs == {}
    assert args[3] == 7


def test_a_teacher_reads_the_columns_of_its_own_layout():
    v0, v1 = (Layout.of(3, 1, v).size for v in (0, 1))
    assert P.teacher_columns(HeuristicPolicy(1), RULES, 1) == v0
    assert P.teacher_columns(P.RowByRow(None), RULES, 1) == v1
    assert P.teacher_columns(P.RowByRow(None), RULES, 0) == v0
    assert P.teacher_columns(lambda o, m: m.argmax(1), RULES, 1) == v0  # no layout: 0


def test_collect_shows_the_teacher_its_columns_and_logs_every_half_minute(monkeypatch):
    env = Scripted()
    shown = []

    def teacher(obs, masks):
        shown.append((obs.copy(), masks.dtype))
        return np.ones(len(obs), np.int64)

    clock = iter(range(10_000))  # one second a call
    monkeypatch.setattr(P.time, "time", lambda: float(next(clock)))
    lines = []
    data = P.collect(env, teacher, decisions=199, layout_size=4, gamma=0.5, seed=3,
                     log=lines.append)
    assert env.seeds == [3] and len(shown) == 100  # ceil(199 / 2) steps of both games
    assert all(o.shape == (2, 4) and d == np.int8 for o, d in shown)
    assert data["x"].shape == (200, 6) and data["x"][2:4].tolist() == [[1.0] * 6] * 2
    assert data["x"].dtype == np.float32
    assert data["masks"].dtype == bool and data["masks"].shape == (200, 58)
    assert data["actions"].dtype == np.int64 and data["actions"].tolist() == [1] * 200
    assert data["returns"].dtype == np.float32
    assert data["returns"][:2].tolist() == [1.75, 1.75]  # 1 + 0.5 + 0.25
    # past 30 s since the last line: decisions so far, of all, per second since the start
    assert lines == ["pretrain: 62/200 teacher decisions (2/s)",
                     "pretrain: 124/200 teacher decisions (2/s)",
                     "pretrain: 186/200 teacher decisions (2/s)"]


def test_collect_logs_the_rate_since_its_start(monkeypatch):
    clock = iter(range(1000, 10_000))  # one second a call, from a clock that is not 0
    monkeypatch.setattr(P.time, "time", lambda: float(next(clock)))
    lines = []
    P.collect(Scripted(num_envs=100), lambda o, m: np.zeros(len(o), np.int64),
              decisions=3200, layout_size=4, gamma=0.5, seed=0, log=lines.append)
    # past 30 s at step 31: 3,100 decisions, and the line's own clock reads 32 s
    assert lines == ["pretrain: 3,100/3,200 teacher decisions (97/s)"]


def test_pretrain_collects_with_its_own_seed_and_reseeds_the_env_for_ppo(monkeypatch):
    fitted = []
    monkeypatch.setattr(P, "fit", lambda policy, data, *args, **kwargs: fitted.append(
        (policy, data, args, kwargs)) or {"accuracy": 1.0})

    class Model:
        policy = object()

    env, lines = Scripted(Layout.of(2, 1, 0).size), []
    cfg = config(pretrain={"data": [], "teacher": "random", "decisions": 6, "epochs": 2,
                           "batch_size": 8, "learning_rate": 0.1, "value_coef": 0.5},
                 rules={"num_players": 2, "num_deals": 1}, seed=4, env_version=0,
                 ppo={"gamma": 0.5})
    stats = P.pretrain(Model(), env, cfg, log=lines.append)
    assert env.seeds == [4 + 7919, 4]  # the teacher's own games, then PPO's as before
    ((policy, data, args, kwargs),) = fitted
    assert policy is Model.policy and args == (2, 8, 0.1, 0.5) and kwargs["seed"] == 4
    assert data["returns"][:2].tolist() == [1.75, 1.75]  # the run's gamma
    assert lines[-1].startswith("pretrain: 6 decisions of random in ")
    assert stats["accuracy"] == 1.0 and stats["seconds"] >= 0


def test_pretrain_seeds_its_teacher_shows_it_its_layout_and_times_itself(monkeypatch):
    v1 = Layout.of(2, 1, 1).size
    made, shown = [], []

    class Recorder:
        layout_version = None  # the table's own layout: v1 here

        def __call__(self, obs, masks):
            shown.append(obs.shape[1])
            return np.zeros(len(obs), np.int64)

    def make_teacher(name, rules, seed):
        made.append((name, rules, seed))
        return Recorder()

    fitted = []
    monkeypatch.setattr(P, "make_teacher", make_teacher)
    monkeypatch.setattr(P, "fit", lambda policy, data, *args, **kwargs: fitted.append(
        kwargs) or {"accuracy": 1.0})
    clock = iter(range(1000, 100_000, 20))  # twenty seconds a call
    monkeypatch.setattr(P.time, "time", lambda: float(next(clock)))

    class Model:
        policy = object()

    rules = {"num_players": 2, "num_deals": 1}
    cfg = config(pretrain={"data": [], "teacher": "mine", "decisions": 6, "epochs": 1,
                           "batch_size": 8, "learning_rate": 0.1, "value_coef": 0.5},
                 rules=rules, seed=4, env_version=1, ppo={"gamma": 0.5})
    lines = []
    stats = P.pretrain(Model(), Scripted(v1 + 58), cfg, log=lines.append)
    assert made == [("mine", rules, 4 + 7919)] and shown == [v1] * 3
    # the clock: t0 1000; collect's start 1020, its steps 1040-1080 (a line past 30 s at
    # 1060, read again at 1080 for the rate), the last step 1100; t1 1120; the end 1140
    assert lines == ["pretrain: 4/6 teacher decisions (0/s)",
                     "pretrain: 6 decisions of mine in 120 s"]
    assert fitted[0]["log"] == lines.append and stats["seconds"] == 140
