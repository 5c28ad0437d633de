"""The warm start's parts (``train.common.pretrain``) without a training run: the
teachers and the columns they read, what ``collect`` records and shows the teacher, the
imitation loop on a toy network, the labelled data sets and their refusals, and what
``pretrain`` hands to the loop and seeds."""

from __future__ import annotations

import numpy as np
import pytest
import torch

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


class Toy(torch.nn.Module):
    """A linear policy and value over 4 inputs and 58 actions."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.pi = torch.nn.Linear(4, 58)
        self.v = torch.nn.Linear(4, 1)

    def forward(self, x, masks):
        logits = self.pi(x).masked_fill(~masks, -1e9)
        return logits, self.v(x)


def toy_data(size=256, seed=0):
    """The teacher plays action 3 when the first input is positive, 7 otherwise; the
    return is twice the second input."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(size, 4)).astype(np.float32)
    masks = np.zeros((size, 58), bool)
    masks[:, [3, 7, 9]] = True
    actions = np.where(x[:, 0] > 0, 3, 7)
    return {"x": x, "masks": masks, "actions": actions, "returns": 2 * x[:, 1]}


class Logger:
    def __init__(self):
        self.records, self.dumps = [], []

    def record(self, key, value):
        self.records.append((key, value))

    def dump(self, step):
        self.dumps.append(step)


def test_imitation_learns_the_teachers_moves_and_the_returns():
    toy, data, lines, logger = Toy(), toy_data(), [], Logger()
    stats = P.imitate(toy, toy, data, epochs=8, batch_size=64, lr=0.1, value_coef=1.0,
                      seed=1, log=lines.append, logger=logger)
    assert stats["accuracy"] > 0.9 > 1 / 3  # chance among the three legal moves
    assert stats["value_loss"] < 0.5 < float(np.var(data["returns"]))
    assert not toy.training and len(lines) == 8
    assert lines[-1] == (f"pretrain epoch 8/8: accuracy {stats['accuracy']:.1%}, "
                         f"cross-entropy {stats['cross_entropy']:.3f}, value loss "
                         f"{stats['value_loss']:.4f}")
    assert logger.dumps == list(range(8))
    assert logger.records[-3:] == [(f"pretrain/{k}", stats[k])
                                   for k in ("cross_entropy", "value_loss", "accuracy")]
    again = Toy()
    assert P.imitate(again, again, data, 8, 64, 0.1, 1.0, seed=1, log=lambda s: None) \
        == stats  # the minibatch order is the seed's


def test_an_epochs_statistics_are_means_over_every_row():
    """With lr 0 nothing moves, so the epoch's figures are those of the whole data set at
    once: a mean over rows of minibatches of 50, 50, ... and a last one of 6."""
    toy, data = Toy(), toy_data()
    stats = P.imitate(toy, toy, data, 1, 50, 0.0, 1.0, seed=1, log=lambda s: None)
    with torch.no_grad():
        logits, values = toy(torch.as_tensor(data["x"]), torch.as_tensor(data["masks"]))
    logits, values = logits.numpy().astype(np.float64), values.numpy().ravel()
    top = logits.max(axis=1, keepdims=True)
    log_p = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
    rows = np.arange(len(data["actions"]))
    assert stats["cross_entropy"] == pytest.approx(-log_p[rows, data["actions"]].mean(),
                                                   rel=1e-5)
    assert stats["value_loss"] == pytest.approx(((values - data["returns"]) ** 2).mean(),
                                                rel=1e-5)
    assert stats["accuracy"] == (logits.argmax(axis=1) == data["actions"]).mean()
    assert P.imitate(toy, toy, data, 0, 50, 0.1, 1.0, seed=1, log=lambda s: None) == {}


def test_imitation_takes_any_numeric_dtypes_and_draws_its_order_from_its_seed():
    data = toy_data()
    runs = []
    for i, (seed, other_dtypes) in enumerate(((1, False), (1, True), (2, False))):
        given = dict(data)
        if other_dtypes:
            given = {"x": data["x"].astype(np.float64), "masks": data["masks"].astype(np.int8),
                     "actions": data["actions"].astype(np.int32),
                     "returns": data["returns"].astype(np.float64),
                     "rows": np.arange(256, dtype=np.int32)}
        toy = Toy()
        torch.manual_seed(100 + i)  # the global generator plays no part
        runs.append(P.imitate(toy, toy, given, 2, 64, 0.1, 1.0, seed=seed,
                              log=lambda s: None))
    assert runs[1] == pytest.approx(runs[0], rel=1e-6)
    assert runs[2] != runs[0]  # another seed, another minibatch order


def test_the_gradient_norm_is_clipped_at_one(monkeypatch):
    norms = []
    clip = torch.nn.utils.clip_grad_norm_
    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_",
                        lambda params, max_norm: norms.append(max_norm) or clip(params, max_norm))
    toy = Toy()
    P.imitate(toy, toy, toy_data(), 1, 64, 0.1, 1.0, seed=1, log=lambda s: None)
    assert norms == [1.0] * 4


def test_imitation_reads_only_the_rows_given_and_weighs_the_value_by_its_coefficient():
    data = toy_data()
    data["actions"][128:] = 9  # rows left out: another teacher
    data["rows"] = np.arange(128)
    toy = Toy()
    stats = P.imitate(toy, toy, data, 8, 64, 0.1, value_coef=0.0, seed=1,
                      log=lambda s: None)
    assert stats["accuracy"] > 0.9
    x = torch.as_tensor(data["x"][:128])
    with torch.no_grad():
        _, values = toy(x, torch.as_tensor(data["masks"][:128]))
    assert float(((values.flatten() - torch.as_tensor(data["returns"][:128])) ** 2).mean()) \
        > 0.5  # no value target: the head did not learn the returns
    untrained = Toy()
    assert P.imitate(untrained, untrained, data, 1, 64, 0.0, 1.0, seed=1,
                     log=lambda s: None)["accuracy"] < 0.9  # lr 0: nothing moves


def test_a_masked_sb3_policy_is_fitted_through_its_distribution_and_value_head():
    import gymnasium as gym
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    policy = MaskableActorCriticPolicy(gym.spaces.Box(-10, 10, (4,)),
                                       gym.spaces.Discrete(58), lambda _: 0.0)
    data = toy_data()
    stats = P.fit(policy, data, epochs=6, batch_size=64, lr=0.02, value_coef=1.0, seed=0,
                  log=lambda s: None)
    assert stats["accuracy"] > 0.9 and stats["value_loss"] < 1.0


def test_an_sb3_policy_is_fitted_over_its_legal_moves_and_reports_to_its_logger():
    import gymnasium as gym
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    policy = MaskableActorCriticPolicy(gym.spaces.Box(-10, 10, (4,)),
                                       gym.spaces.Discrete(58), lambda _: 0.0)
    lines, logger = [], Logger()
    stats = P.fit(policy, toy_data(), epochs=1, batch_size=64, lr=0.0, value_coef=1.0,
                  seed=0, log=lines.append, logger=logger)
    # SB3's small initial action layer: near-uniform over the 3 legal moves (log 3), not
    # over all 58 (log 58 = 4.06)
    assert stats["cross_entropy"] == pytest.approx(np.log(3), abs=0.02)
    assert len(lines) == 1 and lines[0].startswith("pretrain epoch 1/1: accuracy ")
    assert logger.dumps == [0] and len(logger.records) == 3


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


def test_labelled_files_are_sized_by_the_configs_deals_and_layout_version(tmp_path):
    rules = {"num_players": 3, "num_deals": 4}
    size = Layout.of(3, 4, 1).size
    assert size not in (Layout.of(3, 1, 1).size, Layout.of(3, 4, 0).size)
    save(tmp_path / "match.npz", size)
    cfg = config(rules=rules, policy={"features": ["obs"], "privileged_critic": False},
                 env_version=1)
    assert P.load_labelled([str(tmp_path / "match.npz")], cfg)["x"].shape == (4, size)


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
