"""Ablations of a training recipe: the same run with one thing changed, side by side.

``python -m train.sb3.ablations`` trains every variant below for ``--minutes`` of training
time from ``--base`` (default ``configs/ppo_2p_long.yaml`` with a constant learning rate),
``--jobs`` runs at a time (one core each), then evaluates each policy against
``heuristic`` on the same duplicate deals and writes ``results.md`` (the table) and
``curves.png`` (the training win rate against ``heuristic`` per step) into ``--out``.

Finished variants are skipped and interrupted ones resumed, so the command can be run again
after an interruption, or with ``--only`` to add variants. Every variant gets the same
seed, wall-clock budget and evaluation deals; with ``--jobs 2`` on 2 cores the runs of
a pair share the machine, so compare variants from the same invocation.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from train.sb3.curves import plot_curves

ROOT = Path(__file__).resolve().parents[2]

#: name -> (what changes, config overrides)
VARIANTS: dict[str, tuple[str, list[str]]] = {
    "base": ("the recipe as is", []),
    "no_drew_on_suit": ("actor does not see which suits opponents drew on",
                        ["policy.hide_from_actor=[drew_on_suit]"]),
    "no_memory": ("actor sees neither the discard pile nor drew_on_suit",
                  ["policy.hide_from_actor=[discard, drew_on_suit]"]),
    "no_privileged_critic": ("critic sees only the actor's input",
                             ["policy.privileged_critic=false"]),
    "heuristic_only": ("opponents: heuristic only, no snapshot pool",
                       ["league.opponents={heuristic: 1}"]),
    "mixed_league": ("opponents: greedy 0.3, heuristic 0.5, snapshots 0.2",
                     ["league.opponents={greedy: 0.3, heuristic: 0.5, self: 0.2}"]),
    "self_play_heavy": ("opponents: heuristic 0.5, snapshots 0.5",
                        ["league.opponents={heuristic: 0.5, self: 0.5}"]),
    "no_pretrain": ("no imitation of the heuristic before PPO", ["pretrain.teacher=null"]),
    "low_entropy": ("entropy bonus 0.002 instead of 0.01", ["ppo.ent_coef=0.002"]),
    "lambda_0.8": ("GAE lambda 0.8 instead of 0.95 (leans more on the critic)",
                   ["ppo.gae_lambda=0.8"]),
}
DEFAULT_SET = ["base", "no_drew_on_suit", "no_memory", "no_privileged_critic",
               "heuristic_only", "mixed_league", "low_entropy", "lambda_0.8"]


def command(name: str, args) -> list[str]:
    run_dir = Path(args.out) / name
    if (run_dir / "checkpoints").is_dir() and any((run_dir / "checkpoints").iterdir()):
        return [sys.executable, str(ROOT / "train" / "ppo.py"), "--resume", str(run_dir)]
    return [sys.executable, str(ROOT / "train" / "ppo.py"), "--config", args.base,
            f"run_dir={run_dir}", f"max_minutes={args.minutes}", f"seed={args.seed}",
            "ppo.lr_schedule=constant", "eval.opponents=[heuristic]",
            f"eval.deals={args.deals}", "eval.workers=1", *VARIANTS[name][1]]


def finished(name: str, out: str) -> bool:
    summary = Path(out) / name / "summary.json"
    return summary.is_file() and json.loads(summary.read_text()).get("status") == "finished"


def run_all(names: list[str], args) -> None:
    todo = [n for n in names if not finished(n, args.out)]
    running: list[tuple[str, subprocess.Popen, object]] = []
    Path(args.out).mkdir(parents=True, exist_ok=True)
    while todo or running:
        while todo and len(running) < args.jobs:
            name = todo.pop(0)
            cmd = command(name, args)
            log = open(Path(args.out) / f"{name}.log", "a", encoding="utf-8")
            print(f"start {name}: {' '.join(cmd[1:])}", flush=True)
            running.append((name, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                                   cwd=ROOT), log))
        time.sleep(2)
        for item in list(running):
            name, proc, log = item
            if proc.poll() is not None:
                log.close()
                running.remove(item)
                print(f"done  {name} (exit {proc.returncode})", flush=True)


def results_table(names: list[str], out: str) -> str:
    lines = ["| variant | change | PPO steps | steps/s | vs heuristic [95% CI] | mean charge "
             "(policy / heuristic) |", "| --- | --- | ---: | ---: | ---: | ---: |"]
    for name in names:
        path = Path(out) / name / "summary.json"
        if not path.is_file():
            continue
        s = json.loads(path.read_text())
        ev = next((r for r in s.get("eval", []) if r["opponent"] == "heuristic"), None)
        win = (f"{100 * ev['win_rate']:.1f}% [{100 * ev['win_low']:.1f}, "
               f"{100 * ev['win_high']:.1f}]" if ev else "-")
        charge = f"{ev['mean_charge']:.2f} / {ev['opponent_mean_charge']:.2f}" if ev else "-"
        lines.append(f"| {name} | {VARIANTS[name][0]} | {s['num_timesteps']:,} | "
                     f"{s['steps_per_s']:,.0f} | {win} | {charge} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m train.sb3.ablations",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--base", default=str(ROOT / "configs" / "ppo_2p_long.yaml"))
    p.add_argument("--only", default=",".join(DEFAULT_SET),
                   help=f"comma-separated variants; all: {', '.join(VARIANTS)}")
    p.add_argument("--minutes", type=float, default=8.0, help="training minutes per variant")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--deals", type=int, default=2000, help="duplicate deals vs heuristic")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(ROOT / "runs" / "ablations"))
    args = p.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        p.error(f"unknown variant(s) {unknown}; known: {', '.join(VARIANTS)}")
    if args.jobs < 1 or args.minutes <= 0:
        p.error("--jobs and --minutes must be positive")
    run_all(names, args)
    table = results_table(names, args.out)
    (Path(args.out) / "results.md").write_text(table + "\n", encoding="utf-8")
    plot_curves([Path(args.out) / n for n in names], Path(args.out) / "curves.png",
                title="Ablations: the stochastic policy's recent wins against heuristic")
    print(table)
    print(f"wrote {Path(args.out) / 'results.md'} and {Path(args.out) / 'curves.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
