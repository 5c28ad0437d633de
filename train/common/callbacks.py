"""The training callback: league results, progress, TensorBoard, snapshots, checkpoints.

``Budget`` knows the two limits that can stop a run (``total_timesteps`` and
``max_minutes``) and which of them binds; ``Progress`` shows that one: the time budget
(elapsed / limit, ETA) when the clock will stop the run first, the step count otherwise.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from train.common.league import League


def opponent_kind(key: str) -> str:
    """Snapshots count as one kind, ``self``; bots by name."""
    return "self" if key.startswith("snap@") else key


def clock(seconds: float) -> str:
    """``7:00``, ``1:02:03``."""
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


@dataclass
class Budget:
    """The limits of a run: ``total`` steps and, optionally, ``limit_s`` seconds of
    training time, counted over every session of the run (``elapsed_before``: the seconds
    of earlier sessions; this session's clock started at ``t_start``)."""

    total: int
    limit_s: float | None = None
    elapsed_before: float = 0.0
    t_start: float = field(default_factory=time.time)

    def elapsed(self, now: float | None = None) -> float:
        return self.elapsed_before + (time.time() if now is None else now) - self.t_start

    @property
    def deadline(self) -> float | None:
        """The wall-clock time at which the time limit stops this session."""
        if self.limit_s is None:
            return None
        return self.t_start + self.limit_s - self.elapsed_before

    def time_binds(self, step: int, steps_per_s: float, now: float | None = None) -> bool:
        """Whether the time limit will stop the run before ``total`` steps (at the current
        rate; with no rate yet, whenever there is a time limit)."""
        if self.limit_s is None:
            return False
        if steps_per_s <= 0:
            return True
        return (self.total - step) / steps_per_s > self.limit_s - self.elapsed(now)

    def fraction(self, step: int, steps_per_s: float, now: float | None = None) -> float:
        """How much of the binding limit is used, 0..1."""
        if self.time_binds(step, steps_per_s, now):
            return min(1.0, self.elapsed(now) / self.limit_s)
        return min(1.0, step / self.total)

    def describe(self, step: int, steps_per_s: float, now: float | None = None) -> str:
        """The binding limit: ``time 2:31/7:00 (36.0%), ETA 4:29, step 1,234,567`` or
        ``step 1,234,567/20,000,000 (6.2%), ETA 1:02:03``."""
        if self.time_binds(step, steps_per_s, now):
            elapsed = self.elapsed(now)
            return (f"time {clock(elapsed)}/{clock(self.limit_s)} "
                    f"({100 * elapsed / self.limit_s:.1f}%), "
                    f"ETA {clock(self.limit_s - elapsed)}, step {step:,}")
        eta = clock((self.total - step) / steps_per_s) if steps_per_s > 0 else "?"
        return f"step {step:,}/{self.total:,} ({100 * step / self.total:.1f}%), ETA {eta}"


class Progress:
    """A tqdm bar on a terminal; otherwise a line every ``interval`` seconds. Both show
    the limit that will stop the run (``Budget.describe``); the bar fills towards it."""

    UNITS = 1000  # the bar counts thousandths of the binding limit

    def __init__(self, budget: Budget, enabled: bool, interval: float):
        self.budget = budget
        self.enabled = enabled
        self.interval = interval
        self.bar = None
        self._last_line = time.time()
        if enabled and sys.stderr.isatty():
            import shutil

            from tqdm import tqdm

            width = shutil.get_terminal_size((140, 20)).columns or 140
            self.bar = tqdm(total=self.UNITS, ncols=max(width, 100),
                            bar_format="{percentage:3.0f}%|{bar}| {postfix}")

    def update(self, step: int, steps_per_s: float, postfix: str) -> None:
        if not self.enabled:
            return
        text = f"{self.budget.describe(step, steps_per_s)}  {postfix}"
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)
            done = int(self.UNITS * self.budget.fraction(step, steps_per_s))
            self.bar.update(max(0, done - self.bar.n))
            self.bar.refresh()
        elif time.time() - self._last_line >= self.interval:
            self._last_line = time.time()
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class RunHooks(Protocol):
    """What the callback asks of the run (``train.sb3.run.LiveRun``)."""

    def take_snapshot(self, step: int) -> None: ...

    def save_checkpoint(self) -> object: ...

    def sync_league(self, pool_changed: bool) -> None: ...


class LogHyperparameters(BaseCallback):
    """Writes ``text`` (the resolved config as a markdown table) to TensorBoard's text
    tab as ``hyperparameters`` when training starts, as CleanRL logs its arguments."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def _on_training_start(self) -> None:
        self.logger.record("hyperparameters", self.text,
                           exclude=("stdout", "log", "json", "csv"))
        self.logger.dump(self.num_timesteps)

    def _on_step(self) -> bool:
        return True


class TrainingCallback(BaseCallback):
    """Feeds the league, logs per-opponent win rates and charges, shows progress, takes
    snapshots every ``snapshot_every`` steps and checkpoints every ``checkpoint_every``
    (through ``hooks``), and stops the run at the budget's time limit."""

    def __init__(
        self,
        league: League,
        hooks: RunHooks,
        budget: Budget,
        snapshot_every: int,
        checkpoint_every: int,
        win_window: int = 1000,
        progress: bool = True,
        interval: float = 30.0,
        torch_threads: tuple[int, int] | None = None,
    ):
        super().__init__()
        self.league = league
        self.hooks = hooks
        self.budget = budget
        self.snapshot_every = snapshot_every
        self.checkpoint_every = checkpoint_every
        self.win_window = win_window
        self.progress_enabled = progress
        self.interval = interval
        self.torch_threads = torch_threads
        self.hit_deadline = False
        self.recent = deque(maxlen=win_window)          # (win, charge)
        self.per_kind: dict[str, deque] = {}           # kind -> (win, charge, beat score)
        self.progress: Progress | None = None
        self._pool_changed = False
        self.in_rollout = False

    # ------------------------------------------------------------------ lifecycle
    def _on_training_start(self) -> None:
        step = self.model.num_timesteps
        self.next_snapshot = (step // self.snapshot_every + 1) * self.snapshot_every
        self.next_checkpoint = (step // self.checkpoint_every + 1) * self.checkpoint_every
        self.progress = Progress(self.budget, self.progress_enabled, self.interval)
        self._t_rate, self._s_rate = time.time(), step
        self._t_bar = 0.0
        self.steps_per_s = 0.0
        self._t_rollout, self._s_rollout = time.time(), step

    def _on_training_end(self) -> None:
        self.close()

    def rewind_partial_rollout(self) -> None:
        """After an interruption inside a rollout: its steps are discarded (the weights
        are those of the rollout's start), so the step counter goes back there too."""
        if self.in_rollout:
            self.model.num_timesteps = self._s_rollout
            self.in_rollout = False

    def close(self) -> None:
        if self.progress is not None:
            self.progress.close()

    def _on_rollout_start(self) -> None:
        if self.torch_threads:
            import torch

            torch.set_num_threads(self.torch_threads[0])
        self._t_rollout, self._s_rollout = time.time(), self.model.num_timesteps
        self.in_rollout = True

    def _on_rollout_end(self) -> None:
        self.in_rollout = False
        if self.torch_threads:
            import torch

            torch.set_num_threads(self.torch_threads[1])
        self.hooks.sync_league(self._pool_changed)
        self._pool_changed = False
        log = self.logger.record
        if self.recent:
            arr = np.array(self.recent, dtype=float)
            log("league/win_rate", float(arr[:, 0].mean()))
            log("league/mean_charge", float(arr[:, 1].mean()))
        for kind, dq in self.per_kind.items():
            arr = np.array(dq, dtype=float)
            log(f"league/{kind}/win_rate", float(arr[:, 0].mean()))
            log(f"league/{kind}/mean_charge", float(arr[:, 1].mean()))
            log(f"league/{kind}/beat_rate", float(arr[:, 2].mean()))
        log("league/pool_size", len(self.league.snapshots))
        if self.league.snapshots:
            w = self.league.snapshot_weights()
            log("league/pool_max_weight", float(w.max()))
        dt = time.time() - self._t_rollout
        if dt > 0:
            log("time/rollout_steps_per_s", (self.model.num_timesteps - self._s_rollout) / dt)
        log("time/steps_per_s", self.steps_per_s)
        head_loss = getattr(self.model.policy, "hidden_cards_loss", None)
        if head_loss is not None:  # the last update's (policy.hidden_cards_head)
            log("train/hidden_cards_loss", head_loss)

    # ------------------------------------------------------------------ every step
    def _on_step(self) -> bool:
        step = self.model.num_timesteps
        for info in self.locals["infos"]:
            result = info.get("league")
            if result is None:
                continue
            self.league.record(result)
            charges = result["charges"]
            win = 1.0 if result["win"] else 0.0
            self.recent.append((win, charges[0]))
            seen: dict[str, list[float]] = {}
            for key, theirs in zip(result["opponents"], charges[1:]):
                beat = 1.0 if charges[0] < theirs else 0.5 if charges[0] == theirs else 0.0
                seen.setdefault(opponent_kind(key), []).append(beat)
            for kind, beats in seen.items():
                dq = self.per_kind.get(kind)
                if dq is None:
                    dq = self.per_kind[kind] = deque(maxlen=self.win_window)
                dq.append((win, charges[0], float(np.mean(beats))))
        now = time.time()
        if now - self._t_rate >= 2.0:
            self.steps_per_s = (step - self._s_rate) / (now - self._t_rate)
            self._t_rate, self._s_rate = now, step
        if now - self._t_bar >= 0.5:
            self._t_bar = now
            if self.progress is not None:
                self.progress.update(step, self.steps_per_s, self.postfix())
        if step >= self.next_snapshot:
            self.next_snapshot = (step // self.snapshot_every + 1) * self.snapshot_every
            self.hooks.take_snapshot(step)
            self._pool_changed = True
        if step >= self.next_checkpoint:
            self.next_checkpoint = (step // self.checkpoint_every + 1) * self.checkpoint_every
            self.hooks.save_checkpoint()
        deadline = self.budget.deadline
        if deadline is not None and now >= deadline:
            self.hit_deadline = True
            return False
        return True

    def win_rates(self) -> dict[str, float]:
        """The learner's win rate over the last ``win_window`` episodes, overall
        (``"all"``) and per opponent kind (the figures of the progress line)."""
        rates = {"all": float(np.mean([r[0] for r in self.recent]))} if self.recent else {}
        rates.update({kind: float(np.mean([r[0] for r in dq]))
                      for kind, dq in sorted(self.per_kind.items())})
        return rates

    def postfix(self) -> str:
        """Speed and recent win rates (overall, per opponent kind), pool size."""
        parts = [f"{self.steps_per_s:,.0f} steps/s"]
        if self.recent:
            parts.append(f"win {np.mean([r[0] for r in self.recent]):.1%}")
        for kind, dq in sorted(self.per_kind.items()):
            parts.append(f"{kind} {np.mean([r[0] for r in dq]):.0%}")
        if self.league.uses_pool:
            parts.append(f"pool {len(self.league.snapshots)}")
        return "  ".join(parts)
