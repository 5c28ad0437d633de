"""What imitation (``train.common.pretrain.imitate`` and ``fit``) makes of a toy network
and of SB3 policies: it learns the teacher's moves and the returns, an epoch's statistics
are means over every row, any numeric dtypes are taken and the order is the seed's, the
gradient norm is clipped, only the rows given are read, and an SB3 policy is fitted
through its distribution and value head."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import train.common.pretrain as P


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


def numpy_scores(toy, data):
    """What an epoch at lr 0 and ``evaluate`` say of ``data``, computed here in float64
    numpy over all rows at once: cross-entropy (against ``targets`` where given), value
    loss, accuracy."""
    with torch.no_grad():
        logits, values = toy(torch.as_tensor(data["x"]), torch.as_tensor(data["masks"]))
    logits, values = logits.numpy().astype(np.float64), values.numpy().ravel()
    top = logits.max(axis=1, keepdims=True)
    log_p = logits - top - np.log(np.exp(logits - top).sum(axis=1, keepdims=True))
    rows = np.arange(len(data["actions"]))
    if "targets" in data:
        ce = -np.where(data["targets"] > 0, data["targets"] * log_p, 0.0).sum(axis=1).mean()
    else:
        ce = -log_p[rows, data["actions"]].mean()
    return {"cross_entropy": ce, "value_loss": ((values - data["returns"]) ** 2).mean(),
            "accuracy": (logits.argmax(axis=1) == data["actions"]).mean()}



def test_an_epochs_statistics_are_means_over_every_row():
    """With lr 0 nothing moves, so the epoch's figures are those of the whole data set at
    once: a mean over rows of minibatches of 50, 50, ... and a last one of 6."""
    toy, data = Toy(), toy_data()
    stats = P.imitate(toy, toy, data, 1, 50, 0.0, 1.0, seed=1, log=lambda s: None)
    want = numpy_scores(toy, data)
    assert stats == pytest.approx(want, rel=1e-5)
    assert stats["accuracy"] == want["accuracy"]
    assert P.imitate(toy, toy, data, 0, 50, 0.1, 1.0, seed=1, log=lambda s: None) == {}


def with_targets(data):
    """``data`` with a target distribution per row: a softmax over the legal actions
    that puts most, but not all, of its weight on the teacher's action."""
    scores = np.where(data["masks"], 0.0, -np.inf)
    scores[np.arange(len(scores)), data["actions"]] = 1.5
    targets = np.exp(scores - scores.max(axis=1, keepdims=True))
    return dict(data, targets=(targets / targets.sum(axis=1, keepdims=True)).astype(np.float32))


@pytest.mark.parametrize("targets", [False, True])
def test_imitation_takes_any_numeric_dtypes_and_draws_its_order_from_its_seed(targets):
    """Every array is read as float32 (int64 for the actions): float64 copies of float32
    data give the very same fit, bit for bit."""
    data = with_targets(toy_data()) if targets else toy_data()
    runs = []
    for i, (seed, other_dtypes) in enumerate(((1, False), (1, True), (2, False))):
        given = dict(data)
        if other_dtypes:
            given = {"x": data["x"].astype(np.float64), "masks": data["masks"].astype(np.int8),
                     "actions": data["actions"].astype(np.int32),
                     "returns": data["returns"].astype(np.float64),
                     "rows": np.arange(256, dtype=np.int32)}
            if targets:
                given["targets"] = data["targets"].astype(np.float64)
        toy = Toy()
        torch.manual_seed(100 + i)  # the global generator plays no part
        runs.append(P.imitate(toy, toy, given, 2, 64, 0.1, 1.0, seed=seed,
                              log=lambda s: None))
    assert runs[1] == runs[0]
    assert runs[2] != runs[0]  # another seed, another minibatch order


@pytest.mark.parametrize("targets", [False, True])
def test_evaluate_scores_every_row_once_and_leaves_the_network_as_it_was(targets):
    """Minibatches of 50, 50, ... and a last one of 6 add up to the whole set's means;
    the soft cross-entropy where the data has targets (not the action's); the module
    keeps its training mode and its weights."""
    toy, data = Toy(), toy_data()
    toy.pi.weight.data[:, 0] *= 4  # the argmax is right on some rows, wrong on others
    if targets:
        data = with_targets(data)
    toy.train()
    before = [p.detach().clone() for p in toy.parameters()]
    got = P.evaluate(toy, toy, data, batch_size=50)
    want = numpy_scores(toy, data)
    assert got == pytest.approx(want, rel=1e-5)
    assert 0.1 < want["accuracy"] < 0.9
    assert P.evaluate(toy, toy, data) == pytest.approx(want, rel=1e-5)  # one batch
    assert toy.training
    assert all(torch.equal(p, q) for p, q in zip(toy.parameters(), before))
    toy.eval()
    P.evaluate(toy, toy, data)
    assert not toy.training
    if targets:  # the soft and the hard cross-entropy differ on these data
        hard = numpy_scores(toy, {k: v for k, v in data.items() if k != "targets"})
        assert abs(hard["cross_entropy"] - want["cross_entropy"]) > 0.05


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
