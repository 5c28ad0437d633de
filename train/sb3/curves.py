"""Learning curves of training runs, read back from their TensorBoard logs.

``python -m train.sb3.curves RUN_DIR [RUN_DIR ...] --out curves.png`` plots one scalar
(default ``league/heuristic/win_rate``: the stochastic policy's recent win rate against
``heuristic``, what the progress line shows) against PPO steps for each run, smoothed by a
moving average, so that runs of different lengths and recipes can be compared. A run that
was resumed has several event files; they are merged by step.
"""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_TAG = "league/heuristic/win_rate"


def training_curve(run_dir: str | Path, tag: str = DEFAULT_TAG) -> tuple[list[int], list[float]]:
    """(steps, values) of a TensorBoard scalar over every event file of a run."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    points: dict[int, float] = {}
    for f in sorted((Path(run_dir) / "tb").glob("**/events.out.tfevents.*")):
        acc = EventAccumulator(str(f), size_guidance={"scalars": 0})
        acc.Reload()
        if tag in acc.Tags()["scalars"]:
            points.update({e.step: e.value for e in acc.Scalars(tag)})
    steps = sorted(points)
    return steps, [points[s] for s in steps]


def plot_curves(run_dirs: list[str | Path], path: str | Path, tag: str = DEFAULT_TAG,
                title: str | None = None, labels: list[str] | None = None) -> int:
    """Plot ``tag`` (in %) against millions of steps for each run into ``path``; returns
    how many runs had a curve."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(8, 4.5))
    drawn = 0
    for i, run_dir in enumerate(run_dirs):
        steps, values = training_curve(run_dir, tag)
        if len(steps) < 2:
            continue
        k = max(1, len(values) // 30)  # moving average over ~1/30 of the run
        smooth = np.convolve(values, np.ones(k) / k, mode="valid")
        label = labels[i] if labels else Path(run_dir).name
        ax.plot(np.array(steps[k - 1:]) / 1e6, 100 * smooth, label=label)
        drawn += 1
    ax.set_xlabel("PPO steps (millions)")
    ax.set_ylabel(f"{tag} (%)")
    ax.set_title(title or f"{tag} during training")
    ax.grid(alpha=0.3)
    if drawn:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return drawn


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.sb3.curves",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", help="run directories (with a tb/ folder)")
    p.add_argument("--out", default="curves.png")
    p.add_argument("--tag", default=DEFAULT_TAG, help="the TensorBoard scalar to plot")
    p.add_argument("--title", default=None)
    p.add_argument("--labels", default=None, help="comma-separated legend labels, one per run")
    args = p.parse_args(argv)
    labels = args.labels.split(",") if args.labels else None
    if labels and len(labels) != len(args.runs):
        p.error(f"--labels: {len(labels)} labels for {len(args.runs)} runs")
    missing = [r for r in args.runs if not (Path(r) / "tb").is_dir()]
    if missing:
        p.error(f"no TensorBoard logs (tb/) in {', '.join(missing)}")
    drawn = plot_curves(args.runs, args.out, args.tag, args.title, labels)
    print(f"wrote {args.out} ({drawn} of {len(args.runs)} runs have {args.tag})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
