"""``imitate`` killed after any epoch resumes from its checkpoint to the very weights an
uninterrupted fit ends with, and refuses a checkpoint of other settings before training."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import train.common.pretrain as P


def labelled(n: int = 96, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    masks = rng.random((n, 58)) < 0.2
    masks[:, 0] = True
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
    return {"x": rng.normal(size=(n, 6)).astype(np.float32), "masks": masks,
            "actions": actions, "returns": rng.normal(size=n).astype(np.float32)}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.trunk = torch.nn.Linear(6, 16)
        self.pi, self.v = torch.nn.Linear(16, 58), torch.nn.Linear(16, 1)

    def forward(self, x, masks):
        h = torch.tanh(self.trunk(x))
        return self.pi(h).masked_fill(~masks, -1e9), self.v(h).squeeze(-1)


class Killed(Exception):
    pass


def fit(checkpoint=None, die_at: int | None = None, epochs: int = 4, lr: float = 0.01,
        batch_size: int = 32, value_coef: float = 0.5, seed: int = 7, rows: int = 96):
    net, lines = Net(), []

    def log(line):
        lines.append(line)
        if die_at is not None and line.startswith(f"pretrain epoch {die_at}/"):
            raise Killed

    data = dict(labelled(), rows=np.arange(rows))
    stats = P.imitate(net, net, data, epochs, batch_size, lr, value_coef, seed=seed,
                      log=log, checkpoint=checkpoint)
    return net, stats, lines


def weights(net):
    return torch.cat([p.detach().flatten() for p in net.parameters()])


@pytest.mark.parametrize("die_at", [1, 3])
def test_a_fit_killed_after_an_epoch_resumes_to_the_uninterrupted_weights(tmp_path, die_at):
    whole, whole_stats, _ = fit()
    checkpoint = P.EpochCheckpoint(tmp_path / "fit.partial", {"labels": "these"})
    with pytest.raises(Killed):
        fit(checkpoint, die_at=die_at)
    resumed, stats, lines = fit(checkpoint)
    assert lines[0] == f"pretrain: resuming after epoch {die_at}/4 ({checkpoint.path})"
    assert len(lines) == 1 + 4 - die_at  # only the epochs left are trained
    assert torch.equal(weights(resumed), weights(whole))
    assert stats == whole_stats
    fresh, _, _ = fit()  # the run changes weights at all: the comparison can fail
    assert not torch.equal(weights(fresh), weights(Net()))


def test_a_checkpoint_of_other_settings_is_refused_before_any_training(tmp_path):
    path = tmp_path / "fit.partial"
    with pytest.raises(Killed):
        fit(P.EpochCheckpoint(path, {"labels": "these"}), die_at=1)
    before = path.read_bytes()
    ours = {"labels": "these"}
    for caller, change, changed in [
            ({"labels": "those"}, {}, "labels"),
            ({}, {}, "labels"),  # a setting the file has and the command lacks
            ({"labels": "these", "games": 9}, {}, "games"),  # and the other way round
            (ours, {"epochs": 5}, "epochs"),
            (ours, {"lr": 0.02}, "learning_rate"),
            (ours, {"batch_size": 16}, "batch_size"),
            (ours, {"value_coef": 1.0}, "value_coef"),
            (ours, {"seed": 8}, "seed"),
            (ours, {"rows": 95}, "rows"),
            (ours, {"epochs": 5, "seed": 8}, "epochs, seed")]:
        with pytest.raises(ValueError) as refused:
            fit(P.EpochCheckpoint(path, caller), **change)
        assert str(refused.value) == (
            f"{path} was written by a fit with other settings ({changed}); remove it to "
            "start again, or run the command that wrote it")
    assert path.read_bytes() == before  # kept for the command that wrote it


def test_an_unreadable_checkpoint_is_named_and_kept(tmp_path):
    path = tmp_path / "fit.partial"
    path.write_bytes(b"half a file")
    with pytest.raises(ValueError) as refused:
        fit(P.EpochCheckpoint(path))
    assert str(refused.value).startswith(f"{path}: not a readable fit checkpoint (")
    assert str(refused.value).endswith("); remove it to start the fit again")
    assert path.read_bytes() == b"half a file"


UNPICKLED = []


def note_unpickled(what):
    UNPICKLED.append(what)
    return what


class Payload:
    """An object whose unpickling runs a function: what a hostile file would carry."""

    def __reduce__(self):
        return note_unpickled, ("ran",)


def test_a_checkpoint_that_unpickles_objects_is_refused_without_running_them(tmp_path):
    path = tmp_path / "fit.partial"
    torch.save({"settings": {}, "epoch": 1, "stats": {}, "extra": Payload()}, path)
    with pytest.raises(ValueError, match="not a readable fit checkpoint"):
        P.EpochCheckpoint(path).load({})
    assert UNPICKLED == []


def test_removing_a_checkpoint_is_safe_when_there_is_none(tmp_path):
    path = tmp_path / "fit.partial"
    path.write_bytes(b"state")
    checkpoint = P.EpochCheckpoint(path)
    checkpoint.remove()
    assert not path.exists()
    checkpoint.remove()  # a fit that never wrote one, or a second call
    assert checkpoint.load({}) is None
