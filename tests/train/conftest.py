"""Fixtures of the training tests."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def imitation_data(monkeypatch):
    """The decisions pretraining imitates, as ``train.common.pretrain.collect`` returned them
    (a list: one entry per collection), for a test to compare the reported imitation
    accuracy with chance on those same decisions."""
    import train.common.pretrain as P

    collected = []
    real_collect = P.collect

    def spy(*args, **kwargs):
        data = real_collect(*args, **kwargs)
        collected.append(data)
        return data

    monkeypatch.setattr(P, "collect", spy)
    return collected


def chance_accuracy(data: dict) -> float:
    """The accuracy of picking uniformly among the legal moves, on the rows pretraining
    fits: the mean of 1/|legal| over those decisions."""
    rows = data.get("rows", np.arange(len(data["actions"])))
    legal = data["masks"][rows].sum(axis=1)
    assert legal.min() >= 1
    return float(np.mean(1.0 / legal))
