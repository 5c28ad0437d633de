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


def fit(checkpoint=None, die_at: int | None = None, epochs: int = 4, lr: float = 0.01):
    net, lines = Net(), []

    def log(line):
        lines.append(line)
        if die_at is not None and line.startswith(f"pretrain epoch {die_at}/"):
            raise Killed

    stats = P.imitate(net, net, labelled(), epochs, 32, lr, 0.5, seed=7, log=log,
                      checkpoint=checkpoint)
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
    for checkpoint, epochs, lr, changed in [
            (P.EpochCheckpoint(path, {"labels": "those"}), 4, 0.01, "labels"),
            (P.EpochCheckpoint(path, {"labels": "these"}), 5, 0.01, "epochs"),
            (P.EpochCheckpoint(path, {"labels": "these"}), 4, 0.02, "learning_rate")]:
        with pytest.raises(ValueError, match=rf"other settings \({changed}\)"):
            fit(checkpoint, epochs=epochs, lr=lr)
    assert path.read_bytes() == before  # kept for the command that wrote it


def test_an_unreadable_checkpoint_is_named_and_kept(tmp_path):
    path = tmp_path / "fit.partial"
    path.write_bytes(b"half a file")
    with pytest.raises(ValueError, match="not a readable fit checkpoint"):
        fit(P.EpochCheckpoint(path))
    assert path.read_bytes() == b"half a file"
