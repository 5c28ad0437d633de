"""The training callback: league results, progress, TensorBoard, snapshots, checkpoints."""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Callable

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from .league import League


def opponent_kind(key: str) -> str:
    """Snapshots count as one kind, ``self``; bots by name."""
    return "self" if key.startswith("snap@") else key


class Progress:
    """A tqdm bar on a terminal; otherwise a line every ``interval`` seconds."""

    def __init__(self, total: int, initial: int, enabled: bool, interval: float):
        self.total = total
        self.enabled = enabled
        self.interval = interval
        self.bar = None
        self._last_line = time.time()
        if enabled and sys.stderr.isatty():
            import shutil

            from tqdm import tqdm

            width = shutil.get_terminal_size((140, 20)).columns or 140
            self.bar = tqdm(total=total, initial=initial, unit="step", unit_scale=True,
                            ncols=max(width, 100), smoothing=0.1)

    def update(self, step: int, postfix: str) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(postfix, refresh=False)
            self.bar.update(max(0, min(step, self.total) - self.bar.n))
        elif time.time() - self._last_line >= self.interval:
            self._last_line = time.time()
            print(f"step {step:,}/{self.total:,} ({100 * step / self.total:.1f}%)  {postfix}",
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class TrainingCallback(BaseCallback):
    """Feeds the league, logs per-opponent win rates and charges, shows progress, takes
    snapshots every ``snapshot_every`` steps and checkpoints every ``checkpoint_every``."""

    def __init__(
        self,
        league: League,
        total_timesteps: int,
        snapshot_every: int,
        checkpoint_every: int,
        take_snapshot: Callable[[int], None],
        save_checkpoint: Callable[[], None],
        sync_league: Callable[[bool], None],
        win_window: int = 1000,
        progress: bool = True,
        interval: float = 30.0,
        torch_threads: tuple[int, int] | None = None,
        deadline: float | None = None,
    ):
        super().__init__()
        self.league = league
        self.total = total_timesteps
        self.snapshot_every = snapshot_every
        self.checkpoint_every = checkpoint_every
        self.take_snapshot = take_snapshot
        self.save_checkpoint = save_checkpoint
        self.sync_league = sync_league
        self.win_window = win_window
        self.progress_enabled = progress
        self.interval = interval
        self.torch_threads = torch_threads
        self.deadline = deadline
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
        self.progress = Progress(self.total, step, self.progress_enabled, self.interval)
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
        self.sync_league(self._pool_changed)
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
                self.progress.update(step, self.postfix())
        if step >= self.next_snapshot:
            self.next_snapshot = (step // self.snapshot_every + 1) * self.snapshot_every
            self.take_snapshot(step)
            self._pool_changed = True
        if step >= self.next_checkpoint:
            self.next_checkpoint = (step // self.checkpoint_every + 1) * self.checkpoint_every
            self.save_checkpoint()
        if self.deadline is not None and now >= self.deadline:
            self.hit_deadline = True
            return False
        return True

    def postfix(self) -> str:
        parts = [f"{self.steps_per_s:,.0f} steps/s"]
        if self.recent:
            parts.append(f"win {np.mean([r[0] for r in self.recent]):.1%}")
        for kind, dq in sorted(self.per_kind.items()):
            parts.append(f"{kind} {np.mean([r[0] for r in dq]):.0%}")
        if self.league.uses_pool:
            parts.append(f"pool {len(self.league.snapshots)}")
        return "  ".join(parts)
