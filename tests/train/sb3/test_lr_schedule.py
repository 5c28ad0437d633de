"""``ppo.lr_schedule``: constant, linear over the steps, or linear over whichever limit
(steps or ``max_minutes``) stops the run first."""

from __future__ import annotations

import time

import pytest

from train.common.callbacks import Budget
from train.sb3.config import PPOConfig
from train.sb3.run import BudgetSchedule, LinearSchedule, learning_rate

PPO = {"learning_rate": 1e-3, "lr_final_fraction": 0.1}


def budget(limit_s, elapsed_s):
    """A run ``elapsed_s`` seconds into a ``limit_s`` time limit (earlier sessions)."""
    return Budget(total=1000, limit_s=limit_s, elapsed_before=elapsed_s, t_start=time.time())


def test_constant_and_linear_ignore_the_clock():
    assert learning_rate(PPOConfig(**PPO, lr_schedule="constant"), budget(10, 9)) == 1e-3
    linear = learning_rate(PPOConfig(**PPO, lr_schedule="linear"), budget(10, 9))
    assert linear == LinearSchedule(1e-3, 0.1)
    assert linear(1.0) == pytest.approx(1e-3)
    assert linear(0.5) == pytest.approx(0.55e-3)
    assert linear(0.0) == pytest.approx(1e-4)


@pytest.mark.parametrize("progress, elapsed, want", [
    (1.0, 0.0, 1e-3),      # the start
    (1.0, 50.0, 0.55e-3),  # half the time gone, few steps: the clock binds
    (0.2, 50.0, 0.28e-3),  # most steps gone: the steps bind
    (0.9, 100.0, 1e-4),    # at the time limit
    (0.9, 130.0, 1e-4),    # past it (the last update of a run): never below the floor
])
def test_the_budget_schedule_follows_the_limit_that_binds(progress, elapsed, want):
    schedule = learning_rate(PPOConfig(**PPO, lr_schedule="budget"), budget(100, elapsed))
    assert isinstance(schedule, BudgetSchedule)
    assert schedule(progress) == pytest.approx(want, rel=1e-3)


def test_without_a_time_limit_the_budget_schedule_is_the_linear_one():
    schedule = learning_rate(PPOConfig(**PPO, lr_schedule="budget"), budget(None, 50.0))
    assert [schedule(p) for p in (1.0, 0.5, 0.0)] == \
        pytest.approx([1e-3, 0.55e-3, 1e-4])
