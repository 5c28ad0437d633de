"""Progress on stderr: a tqdm bar on a terminal, a line now and then in a log."""

from __future__ import annotations

import sys
import time

#: Seconds between progress lines when stderr is not a terminal.
PROGRESS_EVERY_S = 30.0


class LineProgress:
    """Progress for a log file: ``desc: done/total deals (p%), t s`` on its own line every
    ``every`` seconds and once at the end, where tqdm would redraw its bar with hundreds of
    carriage returns. ``unit`` names what is counted: ``"match"`` in the match mode, where
    a unit is a whole match of several deals ("deals" would undercount the work done)."""

    def __init__(self, total: int, desc: str = "tournament", every: float | None = None,
                 file=None, unit: str = "deal"):
        self.total = total
        self.desc = desc
        self.every = PROGRESS_EVERY_S if every is None else every
        self.file = file if file is not None else sys.stderr
        self.done = 0
        self._start = self._last = time.perf_counter()
        self._closed = False
        self.unit = unit

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.perf_counter()
        if now - self._last >= self.every and self.done < self.total:
            self._last = now
            self._line(now)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._line(time.perf_counter())

    def _line(self, now: float) -> None:
        share = 100 * self.done / self.total if self.total else 100.0
        print(f"{self.desc}: {self.done}/{self.total} {plural(self.unit)} ({share:.0f}%), "
              f"{now - self._start:.1f} s", file=self.file, flush=True)


def progress_bar(total: int, progress: bool, unit: str = "deal"):
    """tqdm on a terminal, ``LineProgress`` in a log, a silent tqdm when off; ``unit`` is
    what one step counts (``"deal"``, or ``"match"`` when every game is a match)."""
    from tqdm import tqdm

    if progress and not _isatty(sys.stderr):
        return LineProgress(total, unit=unit)
    return tqdm(total=total, unit=unit, desc="tournament", disable=not progress,
                file=sys.stderr, dynamic_ncols=True)


def plural(unit: str) -> str:
    """``deal`` -> ``deals``, ``match`` -> ``matches``."""
    return unit + ("es" if unit.endswith(("s", "sh", "ch", "x")) else "s")


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # replaced or closed streams
        return False
