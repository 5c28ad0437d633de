"""Fuzz the AEC environment for a time budget: the state machine of ``tests/pis_env/test_fuzz.py``
(CI runs it for seconds, derandomized) with fresh random seeds, batch after batch, until
the budget is spent.

    python scripts/fuzz.py --minutes 10      # make fuzz [MINUTES=10]

Prints the number of examples tried (tables built and played) and exits 0, or prints
hypothesis's shrunk failing example and exits 1. No example database is written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for ``tests``

from hypothesis import settings  # noqa: E402
from hypothesis.stateful import run_state_machine_as_test  # noqa: E402

from tests.pis_env.test_fuzz import CI_SETTINGS, EnvMachine  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0,
                        help="time budget in minutes (default 10)")
    parser.add_argument("--batch", type=int, default=200,
                        help="most examples per hypothesis run (runs are sized to end "
                        "with the budget)")
    parser.add_argument("--steps", type=int, default=40,
                        help="rules per example (stateful_step_count, default 40)")
    args = parser.parse_args(argv)
    if not args.minutes > 0:
        parser.error(f"--minutes must be positive, got {args.minutes}")
    if args.batch < 1 or args.steps < 1:
        parser.error("--batch and --steps must be at least 1")
    start = time.monotonic()
    deadline = start + 60.0 * args.minutes
    runs = 0
    batch = min(args.batch, 10)  # a first short run measures the pace
    while time.monotonic() < deadline:
        budget = settings(CI_SETTINGS, max_examples=batch, stateful_step_count=args.steps,
                          derandomize=False, database=None)
        try:
            run_state_machine_as_test(EnvMachine, settings=budget)
        except Exception:
            print(f"FAILED after {EnvMachine.examples} examples "
                  f"({time.monotonic() - start:.0f} s); the falsifying example is above",
                  file=sys.stderr)
            raise
        runs += 1
        pace = (time.monotonic() - start) / max(EnvMachine.examples, 1)
        batch = max(1, min(args.batch, int((deadline - time.monotonic()) / pace)))
        print(f"{EnvMachine.examples} examples tried in {time.monotonic() - start:.0f} s",
              flush=True)
    print(f"fuzz: {EnvMachine.examples} examples tried in {runs} runs, "
          f"{time.monotonic() - start:.0f} s, no failure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
