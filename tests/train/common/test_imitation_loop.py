"""The warm start's two halves read closely: ``collect`` (what the teacher is shown and
what is kept, an episode ending on the last step, the progress line) on a scripted
VecEnv, and ``imitate`` against a reference written here with torch (the loss, the
clipping, the minibatches, the seeded order and the statistics it reports)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import train.common.pretrain as P
from tests.train.sb3.test_train_pretrain import ScriptedVecEnv


class EndsOnTheLastStep(ScriptedVecEnv):
    """Game 0's episode is 5 steps long: it ends on the last step collected."""

    lengths = (5, 2)


def test_an_episode_that_ends_on_the_last_step_is_kept_with_its_return():
    data = P.collect(EndsOnTheLastStep(), lambda o, m: np.zeros(len(o), np.int64), 9, 4,
                     gamma=1.0, seed=0)
    rows = data["rows"].tolist()  # time-major: row 2t is game 0 at step t+1
    assert rows == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    assert data["returns"][[0, 2, 4, 6, 8]].tolist() == [15.0, 14.0, 12.0, 9.0, 5.0]


class Wide:
    """62 games that never end, observation column 0 the step number."""

    num_envs = 62

    def seed(self, seed):
        pass

    def reset(self):
        self.t = 0
        return np.zeros((62, 4), np.float32)

    def env_method(self, name):
        return [np.arange(58) % 2 == 0] * 62

    def step(self, actions):
        self.t += 1
        return (np.full((62, 4), self.t, np.float32), np.zeros(62, np.float32),
                np.zeros(62, bool), [{}] * 62)


def test_the_teacher_sees_its_own_columns_and_every_decision_is_kept(monkeypatch):
    seen = []

    def teacher(obs, masks):
        seen.append((obs.copy(), masks.dtype))
        return np.arange(62) % 29 * 2

    clock = iter([0.0, 31.0, 31.0, 50.0, 62.0, 62.0])  # a line after steps 1 and 3
    monkeypatch.setattr(P.time, "time", lambda: next(clock))
    lines = []
    data = P.collect(Wide(), teacher, 62 * 3, 3, gamma=1.0, seed=0, log=lines.append)
    assert [o.shape for o, _ in seen] == [(62, 3)] * 3 and seen[0][1] == np.int8
    assert [float(o[0, 0]) for o, _ in seen] == [0.0, 1.0, 2.0]
    assert data["x"].shape == (186, 4) and data["x"][::62, 0].tolist() == [0, 1, 2]
    assert data["masks"].shape == (186, 58) and data["masks"][:, ::2].all()
    assert not data["masks"][:, 1::2].any()
    assert data["actions"].tolist() == (np.arange(62) % 29 * 2).tolist() * 3
    assert data["masks"].dtype == bool and data["actions"].dtype == np.int64
    assert data["rows"].tolist() == []  # no game finished an episode
    assert lines == ["pretrain: 62/186 teacher decisions (2/s)",
                     "pretrain: 186/186 teacher decisions (3/s)"]


def toy_data(n: int = 40, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    masks = rng.random((n, 58)) < 0.3
    masks[np.arange(n), rng.integers(0, 58, n)] = True
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
    return {"x": rng.normal(size=(n, 6)).astype(np.float32), "masks": masks,
            "actions": actions, "returns": rng.normal(50.0, 30.0, n).astype(np.float32)}


class Toy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.pi = torch.nn.Linear(6, 58)
        self.v = torch.nn.Linear(6, 1)


def forward(module):
    def run(x, masks):
        logits = module.pi(x).masked_fill(~masks, -1e8)
        return logits, module.v(x)
    return run


def reference(data, rows, epochs, batch_size, lr, value_coef, seed):
    """The loop as its docstring says it, written out here: Adam, cross-entropy plus
    ``value_coef`` times the squared error, the gradient norm clipped at 1, minibatches
    in ``torch.randperm`` order from a generator seeded with ``seed``."""
    module = Toy()
    run = forward(module)
    opt = torch.optim.Adam(module.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    x = torch.tensor(data["x"])
    m = torch.tensor(data["masks"])
    a = torch.tensor(data["actions"])
    r = torch.tensor(data["returns"])
    rows = torch.tensor(rows)
    totals = []
    for _ in range(epochs):
        order = rows[torch.randperm(len(rows), generator=gen)]
        ce_sum = v_sum = hits = 0.0
        for start in range(0, len(rows), batch_size):
            idx = order[start:start + batch_size]
            logits, values = run(x[idx], m[idx])
            ce = F.cross_entropy(logits, a[idx])
            v = ((values.flatten() - r[idx]) ** 2).mean()
            opt.zero_grad()
            (ce + value_coef * v).backward()
            norm = torch.sqrt(sum((p.grad ** 2).sum() for p in module.parameters()))
            if norm > 1.0:
                for p in module.parameters():
                    p.grad *= 1.0 / (norm + 1e-6)
            opt.step()
            hits += float((logits.argmax(1) == a[idx]).sum())
            ce_sum += ce.item() * len(idx)
            v_sum += v.item() * len(idx)
        totals.append({"cross_entropy": ce_sum / len(rows), "value_loss": v_sum / len(rows),
                       "accuracy": hits / len(rows)})
    return module, totals


@pytest.mark.parametrize("value_coef", [0.5, 0.0])
def test_imitate_is_the_reference_loop(value_coef):
    data = toy_data()
    rows = np.arange(3, 40)  # some rows left out
    want, totals = reference(data, rows, epochs=2, batch_size=8, lr=0.01,
                             value_coef=value_coef, seed=5)
    got = Toy()
    lines = []
    stats = P.imitate(got, forward(got), dict(data, rows=rows), epochs=2, batch_size=8,
                      lr=0.01, value_coef=value_coef, seed=5, log=lines.append)
    for p, q in zip(got.parameters(), want.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)
    assert stats == pytest.approx(totals[-1], rel=1e-4)
    assert len(lines) == 2 and lines[1] == (
        f"pretrain epoch 2/2: accuracy {totals[1]['accuracy']:.1%}, cross-entropy "
        f"{totals[1]['cross_entropy']:.3f}, value loss {totals[1]['value_loss']:.4f}")
    assert not got.training


def test_without_rows_every_row_is_imitated_and_the_seed_orders_the_minibatches():
    data = toy_data(24)
    want, _ = reference(data, np.arange(24), 1, 5, 0.01, 1.0, seed=3)
    got = Toy()
    P.imitate(got, forward(got), data, 1, 5, 0.01, 1.0, seed=3, log=lambda s: None)
    for p, q in zip(got.parameters(), want.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)
    other = Toy()
    P.imitate(other, forward(other), data, 1, 5, 0.01, 1.0, seed=4, log=lambda s: None)
    assert not torch.allclose(other.pi.weight, got.pi.weight)


def test_the_epoch_statistics_go_to_the_logger():
    class Logger:
        def __init__(self):
            self.records, self.dumps = [], []

        def record(self, key, value):
            self.records.append(key)

        def dump(self, step):
            self.dumps.append(step)

    module, logger = Toy(), Logger()
    P.imitate(module, forward(module), toy_data(10), 2, 4, 0.01, 1.0, seed=0,
              log=lambda s: None, logger=logger)
    assert logger.records == ["pretrain/cross_entropy", "pretrain/value_loss",
                              "pretrain/accuracy"] * 2
    assert logger.dumps == [0, 1]
