"""Progress shows the limit that will stop the run: the time budget when ``max_minutes``
binds (the default run), the step count otherwise."""

from __future__ import annotations

import io
import time

import pytest

from train.common.callbacks import Budget, Progress, clock
from train.sb3.run import run

from .test_train import tiny_config


def test_clock():
    assert [clock(s) for s in (0, 59.6, 420, 3723)] == ["0:00", "1:00", "7:00", "1:02:03"]


def test_the_time_budget_when_minutes_bind():
    """The default run: 20M steps, 7 minutes; at 13k steps/s the clock stops it first."""
    b = Budget(20_000_000, limit_s=420.0, t_start=1000.0)
    now = 1000.0 + 151
    assert b.time_binds(1_900_000, 13_000.0, now)
    text = b.describe(1_900_000, 13_000.0, now)
    assert text == "time 2:31/7:00 (36.0%), ETA 4:29, step 1,900,000"
    assert "20,000,000" not in text
    assert b.fraction(1_900_000, 13_000.0, now) == pytest.approx(151 / 420)
    assert b.time_binds(0, 0.0, now)  # no rate yet: the clock is the limit known to exist


def test_the_step_count_when_steps_bind():
    b = Budget(100_000, limit_s=420.0, t_start=1000.0)
    assert not b.time_binds(50_000, 10_000.0, 1010.0)
    assert b.describe(50_000, 10_000.0, 1010.0) == "step 50,000/100,000 (50.0%), ETA 0:05"
    assert b.fraction(50_000, 10_000.0, 1010.0) == 0.5
    unlimited = Budget(100_000)
    assert unlimited.deadline is None and not unlimited.time_binds(0, 0.0)
    assert unlimited.describe(0, 0.0).endswith("ETA ?")


def test_a_resumed_run_counts_its_earlier_sessions():
    b = Budget(20_000_000, limit_s=420.0, elapsed_before=300.0, t_start=1000.0)
    assert b.deadline == 1120.0
    assert b.elapsed(1060.0) == 360.0
    assert b.describe(5_000_000, 13_000.0, 1060.0).startswith("time 6:00/7:00")


def test_progress_lines_and_bar_show_the_time_budget(capsys, monkeypatch):
    b = Budget(20_000_000, limit_s=420.0, t_start=time.time() - 151)
    lines = Progress(b, enabled=True, interval=0.0)
    lines.update(1_900_000, 13_000.0, "13,000 steps/s")
    err = capsys.readouterr().err
    assert "/7:00 (3" in err and "ETA 4:" in err and "13,000 steps/s" in err
    assert "20,000,000" not in err
    tty = io.StringIO()
    tty.isatty = lambda: True
    monkeypatch.setattr("sys.stderr", tty)
    bar = Progress(b, enabled=True, interval=0.0)
    bar.update(1_900_000, 13_000.0, "win 55%")
    bar.close()
    shown = tty.getvalue()
    assert "36%|" in shown and "/7:00" in shown and "win 55%" in shown


def test_a_run_stopped_by_its_time_limit_shows_the_time_budget(tmp_path, capfd):
    cfg = tiny_config(tmp_path, "total_timesteps=100000000", "max_minutes=0.05",
                      "log.progress=true", "log.interval=0")
    s = run(cfg, verbose=True)
    assert s["status"] == "finished" and s["num_timesteps"] < 100_000_000
    out, err = capfd.readouterr()
    assert "stopped at the time limit" in out
    assert "or 0.05 min" in out
    progress = [line for line in err.splitlines() if "ETA" in line]
    assert progress and all(line.startswith("time ") and "/0:03" in line
                            for line in progress), err
